import { beforeAll, describe, expect, it } from 'vitest';
import { parseAuthenticationConfig, type RequestHeaderConfig } from '../../../src/auth/authentication-config.js';
import { authenticateFrontProxy } from '../../../src/auth/front-proxy.js';
import { peerCertificate, verifyClientCertificate } from '../../../src/auth/x509-chain.js';
import { createCertificateAuthority } from '../../../src/pki/certificates.js';
import { authenticationConfigMapData, cert, createTestPki, issue, type TestPki } from '../../support/pki.js';

let pki: TestPki;
let config: RequestHeaderConfig;

beforeAll(async () => {
  pki = await createTestPki();
  const parsed = parseAuthenticationConfig(authenticationConfigMapData(pki));
  if (parsed.requestHeader === undefined) throw new Error('request-header config missing');
  config = parsed.requestHeader;
});

const identityHeaders = {
  'x-remote-user': ['tenant-a'],
  'x-remote-uid': ['uid-1'],
  // Two header lines; one group name legitimately contains a comma.
  'x-remote-group': ['system:authenticated', 'team,with-comma'],
  'x-remote-extra-authentication.kubernetes.io%2fpod-name': ['pod-1', 'pod-2'],
  'x-remote-extra-scopes': ['a'],
};

describe('front-proxy authentication', () => {
  it('trusts identity headers from a verified front-proxy certificate', () => {
    const outcome = authenticateFrontProxy({ peerCertificate: cert(pki.frontProxyClient.certPem), headers: identityHeaders }, config);
    expect(outcome).toEqual({
      kind: 'authenticated',
      method: 'front-proxy',
      user: {
        name: 'tenant-a',
        uid: 'uid-1',
        groups: ['system:authenticated', 'team,with-comma'],
        extra: { 'authentication.kubernetes.io/pod-name': ['pod-1', 'pod-2'], scopes: ['a'] },
      },
    });
  });

  it('rejects a certificate from the cluster client CA', () => {
    const outcome = authenticateFrontProxy({ peerCertificate: cert(pki.admin.certPem), headers: identityHeaders }, config);
    expect(outcome).toEqual({ kind: 'failed', error: 'front-proxy: certificate signed by unknown authority' });
  });

  it('rejects a certificate from an unknown CA even with the allowed CN', () => {
    const outcome = authenticateFrontProxy({ peerCertificate: cert(pki.stranger.certPem), headers: identityHeaders }, config);
    expect(outcome.kind).toBe('failed');
  });

  it('rejects a front-proxy CA certificate whose CN is not an allowed name', async () => {
    const other = await issue(pki.frontProxyCA, { commonName: 'someone-else', usage: 'client' });
    const outcome = authenticateFrontProxy({ peerCertificate: other, headers: identityHeaders }, config);
    expect(outcome).toEqual({ kind: 'failed', error: 'front-proxy: subject with cn=someone-else is not in the allowed list' });
  });

  it('rejects a certificate not valid for client authentication', async () => {
    const serverOnly = await issue(pki.frontProxyCA, { commonName: 'front-proxy-client', usage: 'server' });
    const outcome = authenticateFrontProxy({ peerCertificate: serverOnly, headers: identityHeaders }, config);
    expect(outcome).toEqual({ kind: 'failed', error: 'front-proxy: certificate is not valid for client authentication' });
  });

  it('does not authenticate without a certificate or without a user header', () => {
    expect(authenticateFrontProxy({ peerCertificate: undefined, headers: identityHeaders }, config)).toEqual({ kind: 'none' });
    expect(authenticateFrontProxy({ peerCertificate: cert(pki.frontProxyClient.certPem), headers: {} }, config)).toEqual({ kind: 'none' });
  });

  it('reads the user name from the first line, as http.Header.Get: an empty line is no user', () => {
    const frontProxy = cert(pki.frontProxyClient.certPem);
    expect(authenticateFrontProxy({ peerCertificate: frontProxy, headers: { ...identityHeaders, 'x-remote-user': [''] } }, config)).toEqual({ kind: 'none' });
  });

  it('refuses a user name or uid sent on more than one line, whatever the lines hold: an ambiguous identity is never picked', () => {
    const frontProxy = cert(pki.frontProxyClient.certPem);
    const refused = (header: string) => ({ kind: 'failed', error: `front-proxy: ${header} sent on more than one line` });
    for (const lines of [['', ''], ['', 'system:admin'], ['tenant-a', 'tenant-b'], ['tenant-a', ''], ['tenant-a', 'tenant-a']]) {
      expect(authenticateFrontProxy({ peerCertificate: frontProxy, headers: { ...identityHeaders, 'x-remote-user': lines } }, config)).toEqual(refused('X-Remote-User'));
      expect(authenticateFrontProxy({ peerCertificate: frontProxy, headers: { ...identityHeaders, 'x-remote-uid': lines } }, config)).toEqual(refused('X-Remote-Uid'));
    }
  });
});

describe('client certificate verification', () => {
  it('rejects certificates outside their validity window', () => {
    const leaf = cert(pki.frontProxyClient.certPem);
    const later = new Date(leaf.validToDate.getTime() + 1000);
    expect(verifyClientCertificate(leaf, [cert(pki.frontProxyCA.certPem)], later)).toEqual({
      ok: false,
      error: 'certificate has expired or is not yet valid',
    });
    expect(verifyClientCertificate(leaf, [cert(pki.frontProxyCA.certPem)]).ok).toBe(true);
  });

  it('answers for the pool asked about when one certificate object is checked against several, in any order', async () => {
    const leaf = cert(pki.frontProxyClient.certPem);
    const frontProxyRoots = [cert(pki.frontProxyCA.certPem)];
    const clusterRoots = [cert(pki.clusterCA.certPem)];
    const unknown = { ok: false, error: 'certificate signed by unknown authority' };
    expect(verifyClientCertificate(leaf, clusterRoots)).toEqual(unknown);
    expect(verifyClientCertificate(leaf, frontProxyRoots)).toEqual({ ok: true, leaf });
    expect(verifyClientCertificate(leaf, clusterRoots)).toEqual(unknown);
    expect(verifyClientCertificate(leaf, frontProxyRoots)).toEqual({ ok: true, leaf });
    // A root that only looks like the issuer (same subject, other key) vouches for nothing.
    const lookalike = await createCertificateAuthority('front-proxy-ca');
    expect(verifyClientCertificate(leaf, [cert(lookalike.certPem)])).toEqual(unknown);
  });
});

describe('peer certificates across connections', () => {
  it('hands over the certificate already seen when another connection presents the same bytes', () => {
    const first = peerCertificate(cert(pki.frontProxyClient.certPem));
    const again = peerCertificate(cert(pki.frontProxyClient.certPem));
    expect(first).toBeDefined();
    expect(again).toBe(first);
    expect(peerCertificate(cert(pki.admin.certPem))).not.toBe(first);
    expect(peerCertificate(undefined)).toBeUndefined();
  });

  it('keeps a bounded number of them: after 256 others, a certificate is a new object again', async () => {
    const ca = await createCertificateAuthority('many-clients');
    const probe = cert(pki.stranger.certPem);
    const kept = peerCertificate(probe);
    expect(peerCertificate(cert(pki.stranger.certPem))).toBe(kept);
    for (let i = 0; i < 256; i++) peerCertificate(await issue(ca, { commonName: `client-${i}`, usage: 'client' }));
    const later = peerCertificate(cert(pki.stranger.certPem));
    expect(later).not.toBe(kept);
    expect(later?.raw.equals(probe.raw)).toBe(true);
  });
});

describe('extension-apiserver-authentication parsing', () => {
  it('turns off front-proxy authentication when no request-header CA is published', () => {
    expect(parseAuthenticationConfig({ 'client-ca-file': pki.clusterCA.certPem }).requestHeader).toBeUndefined();
  });

  it('rejects list keys that are not JSON lists of strings', () => {
    expect(() =>
      parseAuthenticationConfig({ 'requestheader-client-ca-file': pki.frontProxyCA.certPem, 'requestheader-allowed-names': 'front-proxy-client' }),
    ).toThrow(SyntaxError);
    expect(() =>
      parseAuthenticationConfig({ 'requestheader-client-ca-file': pki.frontProxyCA.certPem, 'requestheader-allowed-names': '[1]' }),
    ).toThrow(/not a JSON list of strings/);
  });
});
