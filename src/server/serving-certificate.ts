/**
 * The serving certificate, loaded from files and reloaded when they change
 * (a rotated Secret volume swaps a symlink; cert-manager rewrites files), so
 * certificates rotate without a restart. A pair that does not match, or does
 * not parse, is ignored and the previous one kept: a half-written rotation
 * must never take the server down.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile, watch } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface CertificatePair {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface CertificateFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

const pollIntervalMs = 10_000;

export async function loadCertificatePair(files: CertificateFiles): Promise<CertificatePair> {
  const [certPem, keyPem] = await Promise.all([readFile(files.certFile, 'utf8'), readFile(files.keyFile, 'utf8')]);
  const cert = new X509Certificate(certPem);
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) {
    throw new Error(`${files.keyFile} does not match the certificate in ${files.certFile}`);
  }
  return { certPem, keyPem };
}

/** Watches the files (and polls, since watches miss some volume updates) and reports each new valid pair. */
export class ServingCertificateReloader {
  private current: CertificatePair | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly files: CertificateFiles,
    private readonly onChange: (pair: CertificatePair) => void,
    private readonly onInvalid: (error: unknown) => void,
  ) {}

  async start(): Promise<CertificatePair> {
    this.current = await loadCertificatePair(this.files);
    void this.watchDirectories();
    const timer = setInterval(() => void this.reload(), pollIntervalMs);
    timer.unref();
    this.abort.signal.addEventListener('abort', () => {
      clearInterval(timer);
    });
    return this.current;
  }

  stop(): void {
    this.abort.abort();
  }

  async reload(): Promise<void> {
    let pair: CertificatePair;
    try {
      pair = await loadCertificatePair(this.files);
    } catch (error) {
      this.onInvalid(error);
      return;
    }
    if (pair.certPem === this.current?.certPem && pair.keyPem === this.current.keyPem) return;
    this.current = pair;
    this.onChange(pair);
  }

  private async watchDirectories(): Promise<void> {
    const directories = new Set([dirname(this.files.certFile), dirname(this.files.keyFile)]);
    await Promise.all(
      [...directories].map(async (directory) => {
        try {
          for await (const _event of watch(directory, { signal: this.abort.signal })) await this.reload();
        } catch (error) {
          if (!this.abort.signal.aborted) this.onInvalid(error);
        }
      }),
    );
  }
}
