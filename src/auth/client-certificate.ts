/** Client certificates from the cluster client CA: user = CN, groups = O (CommonNameUserConversion). */
import type { X509Certificate } from 'node:crypto';
import type { AuthenticationOutcome, Credentials } from './credentials.js';
import { commonName, organizations, verifyClientCertificate } from './x509-chain.js';

export function authenticateClientCertificate(credentials: Credentials, clientCA: readonly X509Certificate[]): AuthenticationOutcome {
  if (credentials.peerCertificate === undefined) return { kind: 'none' };
  const verified = verifyClientCertificate(credentials.peerCertificate, clientCA);
  if (!verified.ok) return { kind: 'failed', error: `x509: ${verified.error}` };
  const name = commonName(verified.leaf);
  if (name === '') return { kind: 'failed', error: 'x509: certificate has no common name' };
  return {
    kind: 'authenticated',
    method: 'x509',
    user: { name, uid: '', groups: organizations(verified.leaf), extra: {} },
  };
}
