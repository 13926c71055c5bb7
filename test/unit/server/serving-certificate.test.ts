import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueCertificate } from '../../../src/pki/certificates.js';
import { ServingCertificateReloader, type CertificatePair } from '../../../src/server/serving-certificate.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function pair(): Promise<CertificatePair> {
  const ca = await createCertificateAuthority('ca');
  return issueCertificate(ca, { commonName: 'svc', dnsNames: ['svc'], usage: 'server' });
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

describe('ServingCertificateReloader', () => {
  it('reports a rotated pair and ignores a mismatched one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'serving-'));
    dirs.push(dir);
    const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    const first = await pair();
    await writeFile(files.certFile, first.certPem);
    await writeFile(files.keyFile, first.keyPem);
    const seen: CertificatePair[] = [];
    const invalid: unknown[] = [];
    const reloader = new ServingCertificateReloader(files, (p) => seen.push(p), (e) => invalid.push(e));
    expect(await reloader.start()).toEqual(first);

    const second = await pair();
    // Only the certificate is replaced: the pair no longer matches and must not be used.
    await writeAtomically(files.certFile, second.certPem);
    await reloader.reload();
    expect(seen).toEqual([]);
    expect(String(invalid.at(-1))).toMatch(/does not match/);

    await writeAtomically(files.keyFile, second.keyPem);
    await expect.poll(() => seen.at(-1), { timeout: 5000 }).toEqual(second);
    reloader.stop();
  });
});
