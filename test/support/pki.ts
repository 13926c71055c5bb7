/** Certificate fixtures for unit tests, issued by the project's own PKI helpers. */
import { X509Certificate } from 'node:crypto';
import { createCertificateAuthority, issueCertificate, type CertificateAuthority, type CertificateRequest } from '../../src/pki/certificates.js';

export interface TestPki {
  readonly clusterCA: CertificateAuthority;
  readonly frontProxyCA: CertificateAuthority;
  readonly strangerCA: CertificateAuthority;
  readonly frontProxyClient: { certPem: string; keyPem: string };
  readonly admin: { certPem: string; keyPem: string };
  readonly stranger: { certPem: string; keyPem: string };
}

export async function createTestPki(): Promise<TestPki> {
  const [clusterCA, frontProxyCA, strangerCA] = await Promise.all([
    createCertificateAuthority('cluster-client-ca'),
    createCertificateAuthority('front-proxy-ca'),
    createCertificateAuthority('stranger-ca'),
  ]);
  return {
    clusterCA,
    frontProxyCA,
    strangerCA,
    frontProxyClient: await issueCertificate(frontProxyCA, { commonName: 'front-proxy-client', usage: 'client' }),
    admin: await issueCertificate(clusterCA, { commonName: 'alice', organizations: ['team-a', 'ops,night'], usage: 'client' }),
    // Claims to be the front proxy, but from a CA nobody trusts.
    stranger: await issueCertificate(strangerCA, { commonName: 'front-proxy-client', usage: 'client' }),
  };
}

export async function issue(ca: CertificateAuthority, request: CertificateRequest): Promise<X509Certificate> {
  return new X509Certificate((await issueCertificate(ca, request)).certPem);
}

export function cert(pem: string): X509Certificate {
  return new X509Certificate(pem);
}

/** kube-system/extension-apiserver-authentication data as kube-apiserver publishes it, for this PKI. */
export function authenticationConfigMapData(pki: TestPki): Record<string, string> {
  return {
    'client-ca-file': pki.clusterCA.certPem,
    'requestheader-client-ca-file': pki.frontProxyCA.certPem,
    'requestheader-allowed-names': '["front-proxy-client"]',
    'requestheader-username-headers': '["X-Remote-User"]',
    'requestheader-uid-headers': '["X-Remote-Uid"]',
    'requestheader-group-headers': '["X-Remote-Group"]',
    'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
  };
}
