// X.509 helpers for the test control plane and the server's self-signed
// fallback. Keys are ECDSA P-256 and exported as PKCS#8 PEM, which Go
// (kube-apiserver, etcd) and Node's tls module both accept.
import type { webcrypto } from 'node:crypto';
import { x509 } from './x509.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

export type CertificateUsage = 'server' | 'client' | 'both';

export interface CertificateRequest {
  commonName: string;
  /** Subject O= values; Kubernetes maps them to group names. */
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  usage: CertificateUsage;
  validityDays?: number;
}

export interface CertificateAndKey {
  certPem: string;
  /** PKCS#8 private key. */
  keyPem: string;
}

export interface CertificateAuthority extends CertificateAndKey {
  readonly certificate: x509.X509Certificate;
  readonly keys: CryptoKeyPair;
}

const keyAlgorithm: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const signingAlgorithm: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;
/** Backdating tolerates small clock differences between processes/hosts. */
const BACKDATE_MS = 5 * 60 * 1000;
const DEFAULT_CA_VALIDITY_DAYS = 3650;
const DEFAULT_LEAF_VALIDITY_DAYS = 365;

const extendedKeyUsages: Record<CertificateUsage, x509.ExtendedKeyUsage[]> = {
  server: [x509.ExtendedKeyUsage.serverAuth],
  client: [x509.ExtendedKeyUsage.clientAuth],
  both: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
};

export async function createCertificateAuthority(
  commonName: string,
  validityDays = DEFAULT_CA_VALIDITY_DAYS,
): Promise<CertificateAuthority> {
  const keys = await generateKeyPair();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: subjectName({ commonName }),
    ...validityWindow(validityDays),
    keys,
    signingAlgorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate, keys, certPem: toPem(certificate), keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

export async function issueCertificate(
  ca: CertificateAuthority,
  request: CertificateRequest,
): Promise<CertificateAndKey> {
  const keys = await generateKeyPair();
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject: subjectName(request),
    issuer: ca.certificate.subjectName,
    ...validityWindow(request.validityDays ?? DEFAULT_LEAF_VALIDITY_DAYS),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm,
    extensions: [
      ...(await leafExtensions(request, keys.publicKey)),
      await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
    ],
  });
  return { certPem: toPem(certificate), keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

/** A self-signed leaf (not a CA): clients trust it by pinning the certificate itself. */
export async function createSelfSigned(request: CertificateRequest): Promise<CertificateAndKey> {
  const keys = await generateKeyPair();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: subjectName(request),
    ...validityWindow(request.validityDays ?? DEFAULT_LEAF_VALIDITY_DAYS),
    keys,
    signingAlgorithm,
    extensions: [
      ...(await leafExtensions(request, keys.publicKey)),
      await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: toPem(certificate), keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

async function leafExtensions(request: CertificateRequest, publicKey: CryptoKey): Promise<x509.Extension[]> {
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(extendedKeyUsages[request.usage]),
    await x509.SubjectKeyIdentifierExtension.create(publicKey),
  ];
  const alternativeNames = subjectAlternativeNames(request);
  if (alternativeNames.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(alternativeNames));
  return extensions;
}

function subjectAlternativeNames(request: CertificateRequest): x509.JsonGeneralName[] {
  return [
    ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
}

/** Structured (not string) names, so commas or '=' in group names need no escaping. */
function subjectName(request: Pick<CertificateRequest, 'commonName' | 'organizations'>): x509.JsonName {
  return [{ CN: [request.commonName] }, ...(request.organizations ?? []).map((o) => ({ O: [o] }))];
}

function validityWindow(validityDays: number): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + validityDays * DAY_MS) };
}

/** 128 random bits with the top bit cleared: DER INTEGERs must stay positive. */
function randomSerialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

async function generateKeyPair(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
}

/** PEM ending in a newline, so bundles can be built by plain concatenation. */
function toPem(certificate: x509.X509Certificate): string {
  return `${certificate.toString('pem')}\n`;
}

async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey('pkcs8', key);
  return `${x509.PemConverter.encode(der, 'PRIVATE KEY')}\n`;
}
