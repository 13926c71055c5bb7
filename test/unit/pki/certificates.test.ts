import { X509Certificate, createPrivateKey, type webcrypto } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  createSelfSigned,
  issueCertificate,
  type CertificateAndKey,
} from '../../../src/pki/certificates.js';
import { x509 } from '../../../src/pki/x509.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const DAY_MS = 24 * 60 * 60 * 1000;

function parse(pem: string): X509Certificate {
  return new X509Certificate(pem);
}

function extension<T extends x509.Extension>(pem: string, type: new (raw: webcrypto.BufferSource) => T): T {
  const found = new x509.X509Certificate(pem).getExtension(type);
  if (found === null) throw new Error(`missing extension ${type.name}`);
  return found;
}

function expectKeyMatches(pair: CertificateAndKey): void {
  const key = createPrivateKey(pair.keyPem);
  expect(pair.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  expect(key.asymmetricKeyType).toBe('ec');
  expect(parse(pair.certPem).checkPrivateKey(key)).toBe(true);
}

describe('createCertificateAuthority', () => {
  it('creates a self-signed CA with CA-only key usage', async () => {
    const ca = await createCertificateAuthority('test-ca', 30);
    const cert = parse(ca.certPem);

    expect(cert.subject).toBe('CN=test-ca');
    expect(cert.issuer).toBe('CN=test-ca');
    expect(cert.ca).toBe(true);
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expectKeyMatches(ca);

    const constraints = extension(ca.certPem, x509.BasicConstraintsExtension);
    expect(constraints.critical).toBe(true);
    const usages = extension(ca.certPem, x509.KeyUsagesExtension).usages;
    expect(usages & x509.KeyUsageFlags.keyCertSign).toBeTruthy();
    expect(usages & x509.KeyUsageFlags.cRLSign).toBeTruthy();
    expect(extension(ca.certPem, x509.SubjectKeyIdentifierExtension).keyId).toMatch(/^[0-9a-f]{40}$/);

    const validDays = (cert.validToDate.getTime() - Date.now()) / DAY_MS;
    expect(validDays).toBeGreaterThan(29.9);
    expect(validDays).toBeLessThanOrEqual(30);
    expect(cert.validFromDate.getTime()).toBeLessThan(Date.now());
  });

  it('uses a fresh key and a positive, unique serial number each time', async () => {
    const [first, second] = await Promise.all([createCertificateAuthority('a'), createCertificateAuthority('a')]);
    const [a, b] = [parse(first.certPem), parse(second.certPem)];
    expect(a.serialNumber).not.toBe(b.serialNumber);
    expect(Number.parseInt(a.serialNumber.slice(0, 2), 16)).toBeLessThan(0x80);
    expect(a.publicKey.equals(b.publicKey)).toBe(false);
    expect(a.checkIssued(b)).toBe(true); // same subject name ...
    expect(b.verify(a.publicKey)).toBe(false); // ... but not signed by it
  });
});

describe('issueCertificate', () => {
  it('issues a server certificate with SANs, serverAuth only, chained to the CA', async () => {
    const ca = await createCertificateAuthority('serving-ca');
    const leaf = await issueCertificate(ca, {
      commonName: 'hostclaim-apiserver',
      dnsNames: ['hostclaim-apiserver.hostclaim-system.svc', 'localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      usage: 'server',
      validityDays: 10,
    });
    const caCert = parse(ca.certPem);
    const cert = parse(leaf.certPem);

    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.subjectAltName).toBe(
      'DNS:hostclaim-apiserver.hostclaim-system.svc, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    expect(cert.checkHost('hostclaim-apiserver.hostclaim-system.svc')).toBe('hostclaim-apiserver.hostclaim-system.svc');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.keyUsage).toEqual([SERVER_AUTH]);
    expectKeyMatches(leaf);

    const usages = extension(leaf.certPem, x509.KeyUsagesExtension).usages;
    expect(usages & x509.KeyUsageFlags.digitalSignature).toBeTruthy();
    expect(usages & x509.KeyUsageFlags.keyCertSign).toBeFalsy();
    expect(extension(leaf.certPem, x509.AuthorityKeyIdentifierExtension).keyId).toBe(
      extension(ca.certPem, x509.SubjectKeyIdentifierExtension).keyId,
    );
    const validDays = (cert.validToDate.getTime() - Date.now()) / DAY_MS;
    expect(validDays).toBeGreaterThan(9.9);
    expect(validDays).toBeLessThanOrEqual(10);
  });

  it('issues a client certificate whose O= values carry Kubernetes groups', async () => {
    const ca = await createCertificateAuthority('client-ca');
    const leaf = await issueCertificate(ca, {
      commonName: 'tenant-a',
      organizations: ['system:masters', 'team, with comma'],
      usage: 'client',
    });
    const cert = parse(leaf.certPem);

    expect(cert.subject.split('\n')).toEqual(['CN=tenant-a', 'O=system:masters', 'O=team\\, with comma']);
    expect(cert.keyUsage).toEqual([CLIENT_AUTH]);
    expect(cert.subjectAltName).toBeUndefined();
  });

  it('issues dual-use certificates and refuses to chain to a foreign CA', async () => {
    const [ca, otherCa] = await Promise.all([createCertificateAuthority('ca'), createCertificateAuthority('other')]);
    const cert = parse((await issueCertificate(ca, { commonName: 'both', usage: 'both' })).certPem);

    expect(cert.keyUsage).toEqual([SERVER_AUTH, CLIENT_AUTH]);
    expect(cert.checkIssued(parse(otherCa.certPem))).toBe(false);
    expect(cert.verify(parse(otherCa.certPem).publicKey)).toBe(false);
  });
});

describe('createSelfSigned', () => {
  it('creates a non-CA leaf signed by its own key', async () => {
    const pair = await createSelfSigned({ commonName: 'fallback', dnsNames: ['localhost'], usage: 'server' });
    const cert = parse(pair.certPem);

    expect(cert.ca).toBe(false);
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.subjectAltName).toBe('DNS:localhost');
    expect(cert.keyUsage).toEqual([SERVER_AUTH]);
    expectKeyMatches(pair);
  });

  it('is accepted by a TLS client that pins it', async () => {
    const pair = await createSelfSigned({ commonName: 'fallback', dnsNames: ['localhost'], usage: 'server' });
    expect(await handshake({ server: pair, trustedCaPem: pair.certPem, serverName: 'localhost' })).toBe('anonymous');
  });
});

describe('certificates in a real TLS handshake', () => {
  it('serve mutual TLS: the client verifies the server and the server verifies the client', async () => {
    const [servingCa, clientCa] = await Promise.all([createCertificateAuthority('serving'), createCertificateAuthority('clients')]);
    const server = await issueCertificate(servingCa, { commonName: 'srv', dnsNames: ['svc.ns.svc'], usage: 'server' });
    const client = await issueCertificate(clientCa, { commonName: 'alice', organizations: ['devs'], usage: 'client' });

    const peer = await handshake({ server, trustedCaPem: servingCa.certPem, serverName: 'svc.ns.svc', client, clientCaPem: clientCa.certPem });
    expect(peer).toBe('alice');
  });

  it('produce newline-terminated PEMs that concatenate into a CA bundle (used during CA rotation)', async () => {
    const [oldCa, newCa] = await Promise.all([createCertificateAuthority('old'), createCertificateAuthority('new')]);
    const server = await issueCertificate(newCa, { commonName: 'srv', dnsNames: ['svc.ns.svc'], usage: 'server' });
    expect([oldCa.certPem, oldCa.keyPem, server.certPem, server.keyPem].every((pem) => pem.endsWith('-----\n'))).toBe(true);

    expect(await handshake({ server, trustedCaPem: oldCa.certPem + newCa.certPem, serverName: 'svc.ns.svc' })).toBe('anonymous');
  });

  it('rejects a server certificate whose SANs do not match the requested name', async () => {
    const ca = await createCertificateAuthority('serving');
    const server = await issueCertificate(ca, { commonName: 'srv', dnsNames: ['svc.ns.svc'], usage: 'server' });

    await expect(handshake({ server, trustedCaPem: ca.certPem, serverName: 'other.ns.svc' })).rejects.toThrow(
      /does not match certificate's altnames/,
    );
  });
});

interface HandshakeOptions {
  server: CertificateAndKey;
  trustedCaPem: string;
  serverName: string;
  client?: CertificateAndKey;
  clientCaPem?: string;
}

/** Connects over TLS and resolves with the client CN the server saw ('anonymous' without one). */
async function handshake(options: HandshakeOptions): Promise<string> {
  const mutual = options.clientCaPem !== undefined;
  const tlsServer = tls.createServer(
    { cert: options.server.certPem, key: options.server.keyPem, ca: options.clientCaPem, requestCert: mutual, rejectUnauthorized: mutual },
    (socket) => {
      const peer = socket.getPeerCertificate();
      socket.end(Object.keys(peer).length === 0 ? 'anonymous' : String(peer.subject.CN));
    },
  );
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = tlsServer.address() as AddressInfo;
    return await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({
        host: '127.0.0.1',
        port,
        servername: options.serverName,
        ca: options.trustedCaPem,
        cert: options.client?.certPem,
        key: options.client?.keyPem,
      });
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (data += chunk));
      socket.on('end', () => {
        resolve(data);
      });
      socket.on('error', reject);
    });
  } finally {
    tlsServer.close();
  }
}
