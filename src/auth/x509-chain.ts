/**
 * Verification of a TLS client certificate against one specific CA pool.
 * Node's `socket.authorized` is computed against the union of every CA the
 * server accepts, so it cannot tell a front-proxy certificate from a
 * cluster client certificate; and on resumed TLS 1.3 sessions it can be true
 * with no certificate at all (nodejs/node#35317). We therefore verify here.
 *
 * Signature checks and subject parsing are pure functions of immutable
 * certificates and are remembered per certificate object, and a certificate
 * presented again is the same object (`internedCertificate`, by its DER):
 * kube-apiserver's proxy presents one client certificate on every
 * connection it opens, so a burst of new connections (1,000 watches) pays
 * for parsing and signature checks once, not per connection. Validity
 * windows and key usage are checked on every call.
 */
import { X509Certificate } from 'node:crypto';
import { x509 } from '../pki/x509.js';

const clientAuthOid = '1.3.6.1.5.5.7.3.2';
const anyExtendedKeyUsageOid = '2.5.29.37.0';

export type VerifyResult = { readonly ok: true; readonly leaf: X509Certificate } | { readonly ok: false; readonly error: string };

/**
 * The certificate a TLS peer presented, interned. Node's TLS server hands
 * JavaScript the leaf only (the intermediates a client sends are used by
 * OpenSSL's handshake, not exposed), so a client certificate must be issued
 * by a certificate of the CA bundle itself (docs/operations.md).
 */
export function peerCertificate(leaf: X509Certificate | undefined): X509Certificate | undefined {
  return leaf === undefined ? undefined : internedCertificate(leaf);
}

// Bounded so that clients presenting ever new certificates cannot grow it; the oldest entry goes first.
const maxInterned = 256;
const interned = new Map<string, X509Certificate>();

/** The first certificate seen with `cert`'s DER encoding (identical bytes are the identical certificate). */
function internedCertificate(cert: X509Certificate): X509Certificate {
  const der = cert.raw.toString('base64');
  const known = interned.get(der);
  if (known !== undefined) return known;
  if (interned.size >= maxInterned) {
    const oldest = interned.keys().next();
    if (oldest.done !== true) interned.delete(oldest.value);
  }
  interned.set(der, cert);
  return cert;
}

/**
 * Verifies that `leaf` was issued by a root in `roots`, that both are within
 * their validity windows and that the leaf may be used for client
 * authentication.
 */
export function verifyClientCertificate(leaf: X509Certificate, roots: readonly X509Certificate[], now = new Date()): VerifyResult {
  if (!allowsClientAuth(leaf)) return { ok: false, error: 'certificate is not valid for client authentication' };
  if (!withinValidity(leaf, now)) return { ok: false, error: 'certificate has expired or is not yet valid' };
  const root = roots.find((r) => issuedBy(leaf, r));
  if (root === undefined) return { ok: false, error: 'certificate signed by unknown authority' };
  return withinValidity(root, now) ? { ok: true, leaf } : { ok: false, error: 'certificate authority has expired' };
}

export function commonName(cert: X509Certificate): string {
  return subject(cert).commonName;
}

export function organizations(cert: X509Certificate): string[] {
  return [...subject(cert).organizations];
}

interface Subject {
  readonly commonName: string;
  readonly organizations: readonly string[];
}

const subjects = new WeakMap<X509Certificate, Subject>();

/** Parsed from DER, not from Node's escaped subject string, so "a,b" stays one group. */
function subject(cert: X509Certificate): Subject {
  let parsed = subjects.get(cert);
  if (parsed === undefined) {
    const name = new x509.X509Certificate(cert.raw).subjectName;
    parsed = { commonName: name.getField('CN')[0] ?? '', organizations: name.getField('O') };
    subjects.set(cert, parsed);
  }
  return parsed;
}

const signatureChecks = new WeakMap<X509Certificate, WeakMap<X509Certificate, boolean>>();

function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  let byIssuer = signatureChecks.get(cert);
  if (byIssuer === undefined) {
    byIssuer = new WeakMap();
    signatureChecks.set(cert, byIssuer);
  }
  let issued = byIssuer.get(issuer);
  if (issued === undefined) {
    issued = cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
    byIssuer.set(issuer, issued);
  }
  return issued;
}

function withinValidity(cert: X509Certificate, now: Date): boolean {
  return cert.validFromDate <= now && now <= cert.validToDate;
}

function allowsClientAuth(cert: X509Certificate): boolean {
  // keyUsage holds the extended key usage OIDs; absent EKU means any usage (Go's x509 rules).
  const usages = cert.keyUsage as string[] | undefined;
  if (usages === undefined || usages.length === 0) return true;
  return usages.includes(clientAuthOid) || usages.includes(anyExtendedKeyUsageOid);
}

export function parsePemBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}
