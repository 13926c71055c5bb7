/**
 * Asking a peer replica for its watermark (replica-watermarks.ts):
 * `GET <peer URL>/replicas/watermark?asker=<identity>`.
 *
 * - The peer is authenticated by its certificate: every replica serves the
 *   same serving certificate (one Secret), so this replica trusts exactly
 *   its own leaf and nothing else (no CA, no host name: peers are reached
 *   at pod addresses the certificate does not name). A replica whose
 *   certificate differs (mid-rotation, a self-signed fallback) cannot be
 *   asked, and reads fall back to probes meanwhile.
 * - This replica is authenticated as it is to kube-apiserver (its
 *   ServiceAccount token or client certificate) and authorized by RBAC on
 *   the non-resource URL, like any request through the pipeline.
 */
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import { sameTlsIdentity } from './kube-client.js';
import type { Credentials } from './kubeconfig.js';
import type { AskPeer, PeerAnswer } from './replica-watermarks.js';

export const watermarkPath = '/replicas/watermark';

const maxAnswerBytes = 4096;

export class PeerClient {
  private agent: https.Agent | undefined;
  /** The TLS identity `agent` was built with. */
  private agentIdentity: Credentials | undefined;
  private pinned = { pem: '', leaf: Buffer.alloc(0) };

  constructor(
    /** The PEM of the certificate this replica serves (its first certificate is the pinned leaf). */
    private readonly servingCertificate: () => string,
    private readonly credentials: () => Promise<Credentials>,
  ) {}

  readonly ask: AskPeer = async (url, asker, signal) => {
    const credentials = await this.credentials();
    const target = new URL(watermarkPath, url);
    target.searchParams.set('asker', asker);
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const request = https.get(target, { agent: this.agentFor(credentials), headers: { ...credentials.headers, Accept: 'application/json' }, signal }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxAnswerBytes) response.destroy(new Error('peer answer too large'));
          else chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => {
          if (response.statusCode === 200) resolve(Buffer.concat(chunks));
          else reject(new Error(`peer answered ${response.statusCode ?? 0}`));
        });
      });
      request.on('error', reject);
    });
    return parseAnswer(bytes);
  };

  close(): void {
    this.agent?.destroy();
  }

  private agentFor(credentials: Credentials): https.Agent {
    // The pinned leaf is the whole trust: it need not chain to a root, and it names no pod address.
    const identity: Credentials = { ca: this.pinnedLeaf(), cert: credentials.cert, key: credentials.key, rejectUnauthorized: true, headers: {} };
    if (this.agent === undefined || !sameTlsIdentity(identity, this.agentIdentity)) {
      this.agent?.destroy();
      this.agent = new https.Agent({
        keepAlive: true,
        maxSockets: 4,
        ca: identity.ca,
        allowPartialTrustChain: true,
        checkServerIdentity: () => undefined,
        cert: identity.cert,
        key: identity.key,
      });
      this.agentIdentity = identity;
    }
    return this.agent;
  }

  /** The first certificate of the serving PEM, parsed again only when the PEM changes (rotation). */
  private pinnedLeaf(): Buffer {
    const pem = this.servingCertificate();
    if (pem !== this.pinned.pem) this.pinned = { pem, leaf: Buffer.from(new X509Certificate(pem).toString()) };
    return this.pinned.leaf;
  }
}

function parseAnswer(bytes: Buffer): PeerAnswer {
  const value: unknown = JSON.parse(bytes.toString('utf8'));
  if (typeof value !== 'object' || value === null) throw new Error('peer answer is not an object');
  const { identity, watermark, knowsAsker } = value as Record<string, unknown>;
  if (typeof identity !== 'string' || typeof watermark !== 'string' || typeof knowsAsker !== 'boolean') throw new Error('peer answer is malformed');
  return { identity, watermark, knowsAsker };
}
