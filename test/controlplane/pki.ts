// Fresh PKI for one control-plane start. Three separate CAs, as in a kubeadm
// cluster: a front-proxy CA distinct from the client CA keeps ordinary client
// certificates from ever being accepted as the aggregator's proxy identity.
import { generateKeyPair } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificateAndKey,
  type CertificateAuthority,
} from '../../src/pki/certificates.js';

/** CN of the kube-apiserver's proxy client cert; also its only --requestheader-allowed-names entry. */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

export interface CaFile {
  certPem: string;
  certPath: string;
}

export interface ControlPlanePki {
  dir: string;
  /** Verifies client certificates (--client-ca-file). */
  clientCa: CertificateAuthority & CaFile;
  /** Verifies the aggregator's proxy client certificate (--requestheader-client-ca-file). */
  frontProxyCa: CertificateAuthority & CaFile;
  /** Signed kube-apiserver's serving certificate; what clients trust. */
  servingCa: CertificateAuthority & CaFile;
  admin: CertificateAndKey;
  controllerManager: CertificateAndKey;
  files: {
    apiserverCert: string;
    apiserverKey: string;
    frontProxyClientCert: string;
    frontProxyClientKey: string;
    serviceAccountPrivateKey: string;
    serviceAccountPublicKey: string;
  };
}

export async function createControlPlanePki(dir: string): Promise<ControlPlanePki> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const [clientCa, frontProxyCa, servingCa] = await Promise.all([
    createCertificateAuthority('hostclaim-dev-client-ca'),
    createCertificateAuthority('hostclaim-dev-front-proxy-ca'),
    createCertificateAuthority('hostclaim-dev-serving-ca'),
  ]);
  const [apiserver, frontProxyClient, admin, controllerManager, serviceAccountKeys] = await Promise.all([
    issueCertificate(servingCa, {
      commonName: 'kube-apiserver',
      // kubernetes.default.svc + the first service IP: what in-cluster clients would dial.
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
      ipAddresses: ['127.0.0.1', '10.0.0.1'],
      usage: 'server',
    }),
    issueCertificate(frontProxyCa, { commonName: FRONT_PROXY_CLIENT_NAME, usage: 'client' }),
    issueCertificate(clientCa, { commonName: 'admin', organizations: ['system:masters'], usage: 'client' }),
    // Bootstrap RBAC binds the system:kube-controller-manager role to this user name.
    issueCertificate(clientCa, { commonName: 'system:kube-controller-manager', usage: 'client' }),
    createServiceAccountSigningKeys(),
  ]);

  const file = (name: string): string => path.join(dir, name);
  const files = {
    apiserverCert: file('kube-apiserver.crt'),
    apiserverKey: file('kube-apiserver.key'),
    frontProxyClientCert: file('front-proxy-client.crt'),
    frontProxyClientKey: file('front-proxy-client.key'),
    serviceAccountPrivateKey: file('service-account.key'),
    serviceAccountPublicKey: file('service-account.pub'),
  };
  const caFiles = {
    clientCa: file('client-ca.crt'),
    frontProxyCa: file('front-proxy-ca.crt'),
    servingCa: file('serving-ca.crt'),
  };
  await Promise.all([
    writeSecret(files.apiserverCert, apiserver.certPem),
    writeSecret(files.apiserverKey, apiserver.keyPem),
    writeSecret(files.frontProxyClientCert, frontProxyClient.certPem),
    writeSecret(files.frontProxyClientKey, frontProxyClient.keyPem),
    writeSecret(files.serviceAccountPrivateKey, serviceAccountKeys.privateKey),
    writeSecret(files.serviceAccountPublicKey, serviceAccountKeys.publicKey),
    writeSecret(caFiles.clientCa, clientCa.certPem),
    writeSecret(caFiles.frontProxyCa, frontProxyCa.certPem),
    writeSecret(caFiles.servingCa, servingCa.certPem),
  ]);

  return {
    dir,
    clientCa: { ...clientCa, certPath: caFiles.clientCa },
    frontProxyCa: { ...frontProxyCa, certPath: caFiles.frontProxyCa },
    servingCa: { ...servingCa, certPath: caFiles.servingCa },
    admin,
    controllerManager,
    files,
  };
}

/** Key pair kube-apiserver verifies and kube-apiserver/KCM sign ServiceAccount tokens with (ES256). */
async function createServiceAccountSigningKeys(): Promise<{ privateKey: string; publicKey: string }> {
  return promisify(generateKeyPair)('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

async function writeSecret(file: string, content: string): Promise<void> {
  await fs.writeFile(file, content, { mode: 0o600 });
}
