/**
 * Front-proxy (request-header) authentication, as k8s.io/apiserver's
 * headerrequest authenticator: identity headers are trusted only on a
 * connection whose client certificate was issued by the front-proxy CA (never
 * the cluster client CA) and whose CN is an allowed name.
 *
 * One deliberate difference: kube reads a single-valued header (user name,
 * uid) with http.Header.Get, i.e. its first line only, so a name sent on
 * two lines is whichever came first, and an empty first line hides a second
 * (401). Here a user name or uid sent on more than one line is ambiguous and
 * refused (401) rather than one of them picked. kube-apiserver's proxy sends
 * each exactly once; only a direct client can send more.
 */
import type { X509Certificate } from 'node:crypto';
import type { RequestHeaderConfig } from './authentication-config.js';
import type { AuthenticationOutcome, Credentials } from './credentials.js';
import { commonName, verifyClientCertificate } from './x509-chain.js';

export function authenticateFrontProxy(credentials: Credentials, config: RequestHeaderConfig | undefined): AuthenticationOutcome {
  if (config === undefined || credentials.peerCertificate === undefined) return { kind: 'none' };
  const verified = verifyClientCertificate(credentials.peerCertificate, config.roots);
  if (!verified.ok) return { kind: 'failed', error: `front-proxy: ${verified.error}` };
  if (!nameAllowed(verified.leaf, config.allowedNames)) {
    return { kind: 'failed', error: `front-proxy: subject with cn=${commonName(verified.leaf)} is not in the allowed list` };
  }
  const name = headerValue(credentials.headers, config.usernameHeaders);
  const uid = headerValue(credentials.headers, config.uidHeaders);
  if (typeof name !== 'string') return ambiguous(name);
  if (typeof uid !== 'string') return ambiguous(uid);
  if (name === '') return { kind: 'none' };
  return {
    kind: 'authenticated',
    method: 'front-proxy',
    user: {
      name,
      uid,
      groups: allValues(credentials.headers, config.groupHeaders),
      extra: extras(credentials.headers, config.extraHeaderPrefixes),
    },
  };
}

function nameAllowed(leaf: X509Certificate, allowedNames: readonly string[]): boolean {
  return allowedNames.length === 0 || allowedNames.includes(commonName(leaf));
}

type Headers = Credentials['headers'];

function ambiguous(header: { readonly repeated: string }): AuthenticationOutcome {
  return { kind: 'failed', error: `front-proxy: ${header.repeated} sent on more than one line` };
}

/**
 * headerValue: the first configured header whose (first) line is not empty
 * wins; '' when none. A header of those sent on several lines is ambiguous.
 */
function headerValue(headers: Headers, names: readonly string[]): string | { readonly repeated: string } {
  for (const name of names) {
    const lines = headers[name.toLowerCase()] ?? [];
    if (lines.length > 1) return { repeated: name };
    const value = lines[0] ?? '';
    if (value !== '') return value;
  }
  return '';
}

/** Every value of every header line; never split on commas (group names may contain them). */
function allValues(headers: Headers, names: readonly string[]): string[] {
  return names.flatMap((name) => headers[name.toLowerCase()] ?? []);
}

function extras(headers: Headers, prefixes: readonly string[]): Record<string, string[]> {
  const result: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const prefix of prefixes.map((p) => p.toLowerCase())) {
    for (const [header, values] of Object.entries(headers)) {
      if (!header.startsWith(prefix) || header.length === prefix.length) continue;
      const key = unescapeExtraKey(header.slice(prefix.length));
      result[key] = [...(result[key] ?? []), ...(values ?? [])];
    }
  }
  return result;
}

/** Keys are lower-cased, then percent-decoded like url.PathUnescape; undecodable keys stay as sent. */
function unescapeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

/** Header names the front proxy asserts identity with; they must never be trusted from anyone else. */
export function identityHeaderNames(config: RequestHeaderConfig | undefined): { exact: string[]; prefixes: string[] } {
  const exact = ['x-remote-user', 'x-remote-uid', 'x-remote-group'];
  const prefixes = ['x-remote-extra-'];
  if (config !== undefined) {
    exact.push(...[...config.usernameHeaders, ...config.uidHeaders, ...config.groupHeaders].map((h) => h.toLowerCase()));
    prefixes.push(...config.extraHeaderPrefixes.map((p) => p.toLowerCase()));
  }
  return { exact, prefixes };
}
