/**
 * A client-side mirror of one collection kept by list + watch, as client-go's
 * reflector keeps an informer's store: it lists, watches from the list's
 * resourceVersion, resumes from the last resourceVersion it saw whenever
 * the stream ends or breaks (retrying every second while the server cannot
 * be reached), and relists only on 410 Expired. After a fault its state must
 * equal a fresh list: a lost event would leave it behind for good.
 *
 * It talks raw HTTPS with the TLS identity and headers it is given: the
 * front-proxy certificate plus X-Remote-* to the server's own port, or a
 * user's client certificate to kube-apiserver (through the aggregator).
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';

export interface WatchEndpoint {
  readonly host: string;
  readonly port: number;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly servername?: string;
  readonly headers?: Readonly<Record<string, string | string[]>>;
}

interface Meta {
  readonly name: string;
  readonly resourceVersion: string;
}

interface ListBody {
  readonly metadata: { readonly resourceVersion: string };
  readonly items: readonly { readonly metadata: Meta }[];
}

interface WatchLine {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: { readonly metadata?: Meta; readonly code?: number };
}

const RETRY_MS = 1000;
const LIST_TIMEOUT_MS = 65_000;

export class ResumingWatch {
  /** name → resourceVersion of what the mirror holds. */
  private readonly objects = new Map<string, string>();
  private resourceVersion = '';
  private stopped = false;
  private current: ClientRequest | undefined;
  /** Lists made: the first, plus one per 410 Expired. */
  lists = 0;
  /** Watches opened (the first, and every resumption). */
  watches = 0;

  constructor(
    private readonly endpoint: WatchEndpoint,
    /** Collection path, e.g. /apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims. */
    private readonly path: string,
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.current?.destroy();
  }

  /** What the mirror holds, name → resourceVersion, sorted by name. */
  state(): [string, string][] {
    return [...this.objects.entries()].sort(([a], [b]) => a.localeCompare(b));
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (this.resourceVersion === '') await this.list();
        await this.watch();
      } catch {
        // Unreachable, or an error answer: try again, from where we are.
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  private async list(): Promise<void> {
    const response = await this.send(this.path, LIST_TIMEOUT_MS);
    const text = await readAll(response);
    if (response.statusCode !== 200) throw new Error(`list: ${response.statusCode ?? 0} ${text}`);
    const list = JSON.parse(text) as ListBody;
    this.objects.clear();
    for (const item of list.items) this.objects.set(item.metadata.name, item.metadata.resourceVersion);
    this.resourceVersion = list.metadata.resourceVersion;
    this.lists++;
  }

  /** One watch from the current resourceVersion until the stream ends; throws when it could not be opened. */
  private async watch(): Promise<void> {
    const query = `watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${encodeURIComponent(this.resourceVersion)}`;
    const response = await this.send(`${this.path}?${query}`, 0);
    if (response.statusCode !== 200) throw new Error(`watch: ${response.statusCode ?? 0} ${await readAll(response)}`);
    this.watches++;
    const lines = createInterface({ input: response, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (line.trim() !== '') this.apply(JSON.parse(line) as WatchLine);
      }
    } catch {
      // The connection broke: resume from the last resourceVersion.
    } finally {
      response.destroy();
    }
  }

  private apply(event: WatchLine): void {
    if (event.type === 'ERROR') {
      // 410 Expired: what we missed is gone from the server's window; start over.
      if (event.object.code === 410) this.resourceVersion = '';
      throw new Error(`watch ERROR ${event.object.code ?? 0}`);
    }
    const meta = event.object.metadata;
    if (meta === undefined) return;
    this.resourceVersion = meta.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    if (event.type === 'DELETED') this.objects.delete(meta.name);
    else this.objects.set(meta.name, meta.resourceVersion);
  }

  private send(path: string, timeoutMs: number): Promise<IncomingMessage> {
    const { endpoint } = this;
    return new Promise((resolve, reject) => {
      const request = https.request({
        host: endpoint.host,
        port: endpoint.port,
        path,
        ca: endpoint.ca,
        cert: endpoint.cert,
        key: endpoint.key,
        ...(endpoint.servername === undefined ? {} : { servername: endpoint.servername }),
        agent: false,
        headers: { Accept: 'application/json', ...endpoint.headers },
        ...(timeoutMs === 0 ? {} : { timeout: timeoutMs }),
      });
      this.current = request;
      request.on('response', resolve);
      request.on('timeout', () => request.destroy(new Error(`GET ${path}: no answer within ${timeoutMs} ms`)));
      request.on('error', reject);
      request.end();
    });
  }
}

async function readAll(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
