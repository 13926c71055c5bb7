/**
 * Forged and malformed identities on every authentication path
 * (k8s.io/apiserver authentication/request/headerrequest, x509,
 * bearertoken; filters/impersonation.go). The server trusts identity
 * headers only with a client certificate that verifies against the
 * front-proxy CA and carries an allowed CN; anything else that carries
 * them is 401. Through the aggregator, kube-apiserver replaces what a
 * tenant sends with the identity it authenticated.
 */
import { isDeepStrictEqual } from 'node:util';
import { KUBERNETES_VERSION_ENV } from '../../controlplane/binaries.js';
import { createCertificateAuthority, issueCertificate } from '../../../src/pki/certificates.js';
import { badRequest, forbidden, namesOf, statusOf, unauthorized, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { GROUP_PATH, type Request, type World } from '../world.js';

const ownList = `${GROUP_PATH}/namespaces/tenant-a/hostclaims?labelSelector=app`;
const otherList = `${GROUP_PATH}/namespaces/tenant-b/hostclaims`;
const ownNames: Outcome = { code: 200, names: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two'] };
const asMasters = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };

let rogue: Promise<{ cert: string; key: string }> | undefined;
/** A client certificate named like the front proxy, from a CA nobody trusts. */
function rogueProxy(): Promise<{ cert: string; key: string }> {
  rogue ??= (async () => {
    const ca = await createCertificateAuthority('rogue-front-proxy-ca');
    const issued = await issueCertificate(ca, { commonName: 'front-proxy-client', usage: 'client' });
    return { cert: issued.certPem, key: issued.keyPem };
  })();
  return rogue;
}

type Client = (world: World) => Promise<{ cert: string; key: string } | undefined>;
const noCertificate: Client = () => Promise.resolve(undefined);
const tenantCertificate: Client = (world) => world.certificateOf('tenant-a');

function tlsCase(name: string, client: Client, clientLabel: string, request: Request, expected: Outcome, read = statusOf): IsolationCase {
  const headers = Object.entries(request.headers ?? {}).map(([key, value]) => `${key}: ${String(value)}`).join(', ');
  return {
    name,
    request: `server port, ${clientLabel}${headers === '' ? '' : `, ${headers}`}: ${request.method ?? 'GET'} ${request.path}`,
    expected,
    run: async (world) => read(await world.tls('server', await client(world), request, 'tenant-a')),
  };
}

function frontProxyCase(name: string, headers: Record<string, string | string[]>, path: string, expected: Outcome, read = statusOf): IsolationCase {
  return {
    name,
    request: `server port, front-proxy certificate, ${JSON.stringify(headers)}: GET ${path}`,
    expected,
    run: async (world) => {
      const frontProxy = await world.frontProxyCertificate();
      return read(await world.tls('server', frontProxy, { path, headers }, 'tenant-a'));
    },
  };
}

const denyListB = (user: string): Outcome => forbidden({ user, verb: 'list', resource: 'hostclaims', namespace: 'tenant-b' });

const direct: IsolationCase[] = [
  tlsCase('no certificate, no credentials: anonymous, refused', noCertificate, 'no certificate', { path: otherList }, denyListB('system:anonymous')),
  tlsCase('no certificate, anonymous in a tenant namespace', noCertificate, 'no certificate', { path: ownList }, forbidden({ user: 'system:anonymous', verb: 'list', resource: 'hostclaims', namespace: 'tenant-a' })),
  tlsCase('no certificate with X-Remote-User/Group of an admin', noCertificate, 'no certificate', { path: otherList, headers: asMasters }, unauthorized),
  tlsCase('no certificate with X-Remote-User only', noCertificate, 'no certificate', { path: otherList, headers: { 'X-Remote-User': 'tenant-b' } }, unauthorized),
  tlsCase('no certificate with X-Remote-Group only', noCertificate, 'no certificate', { path: otherList, headers: { 'X-Remote-Group': 'system:masters' } }, unauthorized),
  tlsCase('no certificate with X-Remote-Extra only', noCertificate, 'no certificate', { path: otherList, headers: { 'X-Remote-Extra-Scopes': 'all' } }, unauthorized),
  tlsCase('rogue-CA certificate named front-proxy-client with admin headers', () => rogueProxy(), 'rogue front-proxy certificate', { path: otherList, headers: asMasters }, unauthorized),
  tlsCase('rogue-CA certificate without headers', () => rogueProxy(), 'rogue front-proxy certificate', { path: ownList }, unauthorized),
  tlsCase(
    'cluster-CA certificate with the front proxy CN and admin headers',
    (world) => world.certificateOf('front-proxy-named'),
    'client-CA certificate CN=front-proxy-client',
    { path: otherList, headers: asMasters },
    unauthorized,
  ),
  tlsCase('tenant-a certificate presented directly, own namespace', tenantCertificate, "tenant-a's client certificate", { path: ownList }, ownNames, namesOf),
  tlsCase("tenant-a certificate presented directly, tenant-b's namespace", tenantCertificate, "tenant-a's client certificate", { path: otherList }, denyListB('tenant-a')),
  tlsCase('tenant-a certificate with X-Remote-User: admin', tenantCertificate, "tenant-a's client certificate", { path: otherList, headers: asMasters }, unauthorized),
  tlsCase('tenant-a certificate with X-Remote-Group only', tenantCertificate, "tenant-a's client certificate", { path: otherList, headers: { 'X-Remote-Group': 'system:masters' } }, unauthorized),
  tlsCase('garbage bearer token', noCertificate, 'no certificate', { path: otherList, headers: { Authorization: 'Bearer not-a-token' } }, unauthorized),
  // kube's bearer authenticator ignores an empty token and there is no basic authentication: both are anonymous.
  tlsCase('empty bearer scheme: anonymous', noCertificate, 'no certificate', { path: otherList, headers: { Authorization: 'Bearer ' } }, denyListB('system:anonymous')),
  tlsCase('basic authentication: anonymous', noCertificate, 'no certificate', { path: otherList, headers: { Authorization: 'Basic YWRtaW46YWRtaW4=' } }, denyListB('system:anonymous')),
];

function robotCase(name: string, path: string, extra: Record<string, string>, expected: Outcome, read = statusOf): IsolationCase {
  return {
    name,
    request: `server port, no certificate, Authorization: Bearer <tenant-a/robot token>${Object.keys(extra).length === 0 ? '' : `, ${JSON.stringify(extra)}`}: GET ${path}`,
    expected,
    run: async (world) => read(await world.tls('server', undefined, { path, headers: { Authorization: `Bearer ${world.robotToken}`, ...extra } }, 'tenant-a')),
  };
}

const robot = 'system:serviceaccount:tenant-a:robot';
const tokens: IsolationCase[] = [
  robotCase("ServiceAccount token of tenant-a, tenant-a's namespace", ownList, {}, ownNames, namesOf),
  robotCase("ServiceAccount token of tenant-a, tenant-b's namespace", otherList, {}, denyListB(robot)),
  robotCase('ServiceAccount token with X-Remote-User: admin', otherList, asMasters, unauthorized),
  robotCase('ServiceAccount token with Impersonate-User: tenant-b', otherList, { 'Impersonate-User': 'tenant-b' }, forbidden({ user: robot, verb: 'impersonate-on:user-info:list', resource: 'hostclaims', namespace: 'tenant-b' })),
];

const frontProxy: IsolationCase[] = [
  frontProxyCase('front proxy without X-Remote-User, with an admin group', { 'X-Remote-Group': 'system:masters' }, otherList, unauthorized),
  frontProxyCase('front proxy with an empty X-Remote-User', { 'X-Remote-User': '', 'X-Remote-Group': 'system:masters' }, otherList, unauthorized),
  frontProxyCase('front proxy, tenant-a with a comma-joined group', { 'X-Remote-User': 'tenant-a', 'X-Remote-Group': 'tenant-a,system:masters' }, otherList, denyListB('tenant-a')),
  frontProxyCase('front proxy, tenant-a with odd extras', { 'X-Remote-User': 'tenant-a', 'X-Remote-Extra-Scopes': 'cluster-admin', 'X-Remote-Extra-%41': 'x' }, otherList, denyListB('tenant-a')),
  frontProxyCase('front proxy, tenant-a with a forged uid', { 'X-Remote-User': 'tenant-a', 'X-Remote-Uid': 'admin' }, otherList, denyListB('tenant-a')),
  frontProxyCase('front proxy, user names differing in case', { 'X-Remote-User': 'Tenant-B' }, otherList, denyListB('Tenant-B')),
  // HTTP strips a field value's surrounding whitespace (RFC 9110 5.5), in Go as in Node.
  frontProxyCase('front proxy, user name with surrounding spaces', { 'X-Remote-User': ' tenant-a ' }, otherList, denyListB('tenant-a')),
  frontProxyCase('front proxy, tenant-a own namespace', { 'X-Remote-User': 'tenant-a' }, ownList, ownNames, namesOf),
  // A user name or uid on more than one line is ambiguous: refused, never one of them picked (kube takes the first line).
  frontProxyCase('front proxy, two user names on two X-Remote-User lines', { 'X-Remote-User': ['tenant-b', 'tenant-a'] }, ownList, unauthorized),
  frontProxyCase('front proxy, the same user name on two X-Remote-User lines', { 'X-Remote-User': ['tenant-a', 'tenant-a'] }, ownList, unauthorized),
  frontProxyCase('front proxy, tenant-a with a uid on two X-Remote-Uid lines', { 'X-Remote-User': 'tenant-a', 'X-Remote-Uid': ['u1', 'u2'] }, ownList, unauthorized),
  frontProxyLikeKube('front proxy, X-Remote-User on two lines, the first empty', { 'X-Remote-User': ['', 'system:admin'] }),
  frontProxyLikeKube('front proxy, X-Remote-User on two empty lines', { 'X-Remote-User': ['', ''] }),
];

/** The same front-proxy request to the server's port and to kube-apiserver's, which must both refuse it (401). */
function frontProxyLikeKube(name: string, headers: Record<string, string | string[]>): IsolationCase {
  return {
    name: `${name}: 401, as kube-apiserver answers`,
    request: `server port and kube-apiserver's, front-proxy certificate, ${JSON.stringify(headers)}: GET ${ownList}`,
    expected: { ...unauthorized, sameAsKube: true },
    run: async (world) => {
      const frontProxy = await world.frontProxyCertificate();
      const ours = statusOf(await world.tls('server', frontProxy, { path: ownList, headers }, 'tenant-a'));
      const kube = statusOf(await world.tls('kube', frontProxy, { path: ownList, headers }, 'tenant-a'));
      return { ...ours, sameAsKube: isDeepStrictEqual(ours, kube) || [kube, ours] };
    },
  };
}

function aggregatorCase(name: string, headers: Record<string, string>, path: string, expected: Outcome, read = statusOf): IsolationCase {
  return {
    name,
    request: `tenant-a via aggregator, ${JSON.stringify(headers)}: GET ${path}`,
    expected,
    run: async (world) => read(await world.as('tenant-a', 'aggregator', { path, headers })),
  };
}

/**
 * kube 1.36's constrained impersonation: the requester needs `impersonate-on:<mode>:<verb>` on the resource itself.
 * The server answers so on every release; kube-apiserver 1.35 (make test-matrix) still words its own answers the
 * classic way (`impersonate` on users/serviceaccounts), which is what the aggregator cases then get.
 */
const kubeRelease = process.env[KUBERNETES_VERSION_ENV] ?? '';
const classicImpersonation = /^v1\.(?:[0-2]\d|3[0-5])\./.test(kubeRelease);
const impersonationDenied = (mode: string, namespace: string): Outcome =>
  forbidden({ user: 'tenant-a', verb: `impersonate-on:${mode}:list`, resource: 'hostclaims', namespace });
const groupsOnly = badRequest('requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"system:masters"}, Extra:map[string][]string(nil)} without impersonating a user name');

/** What kube-apiserver itself answers to a tenant's impersonation through the aggregator, on the release under test. */
const kubeImpersonationDenied = (mode: 'user-info' | 'serviceaccount', namespace: string, target: string): Outcome => {
  if (!classicImpersonation) return impersonationDenied(mode, namespace);
  const [resource, scope, name] =
    mode === 'user-info' ? ['users', 'at the cluster scope', target] : ['serviceaccounts', `in the namespace "${target.split(':')[2] ?? ''}"`, target.split(':')[3] ?? ''];
  return { code: 403, reason: 'Forbidden', message: `${resource} "${name}" is forbidden: User "tenant-a" cannot impersonate resource "${resource}" in API group "" ${scope}` };
};
const kubeGroupsOnly = classicImpersonation ? badRequest('requested [{Group  system:masters    }] without impersonating a user') : groupsOnly;

const throughAggregator: IsolationCase[] = [
  aggregatorCase('X-Remote-User/Group of an admin are replaced by the aggregator', asMasters, otherList, denyListB('tenant-a')),
  aggregatorCase('X-Remote-User: tenant-b is replaced by the aggregator (own namespace still served as tenant-a)', { 'X-Remote-User': 'tenant-b' }, ownList, ownNames, namesOf),
  aggregatorCase('a bearer token beside the client certificate changes nothing', { Authorization: 'Bearer not-a-token' }, otherList, denyListB('tenant-a')),
  aggregatorCase('Impersonate-User: tenant-b', { 'Impersonate-User': 'tenant-b' }, otherList, kubeImpersonationDenied('user-info', 'tenant-b', 'tenant-b')),
  aggregatorCase('Impersonate-User: admin with Impersonate-Group: system:masters', { 'Impersonate-User': 'admin', 'Impersonate-Group': 'system:masters' }, otherList, kubeImpersonationDenied('user-info', 'tenant-b', 'admin')),
  aggregatorCase("Impersonate-User: the server's ServiceAccount", { 'Impersonate-User': 'system:serviceaccount:hostclaim-system:hostclaim-apiserver' }, ownList, kubeImpersonationDenied('serviceaccount', 'tenant-a', 'system:serviceaccount:hostclaim-system:hostclaim-apiserver')),
  aggregatorCase('Impersonate-Group alone', { 'Impersonate-Group': 'system:masters' }, ownList, kubeGroupsOnly),
];

const directImpersonation: IsolationCase[] = [
  frontProxyCase('front proxy tenant-a with Impersonate-User: tenant-b', { 'X-Remote-User': 'tenant-a', 'Impersonate-User': 'tenant-b' }, otherList, impersonationDenied('user-info', 'tenant-b')),
  frontProxyCase(
    "front proxy tenant-a with Impersonate-User: the server's ServiceAccount",
    { 'X-Remote-User': 'tenant-a', 'Impersonate-User': 'system:serviceaccount:hostclaim-system:hostclaim-apiserver' },
    ownList,
    impersonationDenied('serviceaccount', 'tenant-a'),
  ),
  frontProxyCase('front proxy tenant-a with Impersonate-Group alone', { 'X-Remote-User': 'tenant-a', 'Impersonate-Group': 'system:masters' }, ownList, groupsOnly),
];

/** Impersonation headers without a user: the server's 400 must be kube-apiserver's, word for word. */
const withoutUser: readonly Record<string, string | string[]>[] = [
  { 'Impersonate-Uid': 'some-uid' },
  { 'Impersonate-Group': ['system:masters', 'tenant-b'] },
  { 'Impersonate-Extra-Scopes': ['a', 'b'], 'Impersonate-Extra-Zone%2Fname': 'x' },
  { 'Impersonate-Group': '', 'Impersonate-Uid': 'u', 'Impersonate-Extra-B': 'b', 'Impersonate-Extra-A': 'a' },
];
const sameAsKube: IsolationCase[] = withoutUser.map((headers) => ({
  name: `impersonation without a user, the same 400 as kube: ${JSON.stringify(headers)}`,
  request: `tenant-a via aggregator, then front proxy tenant-a directly, ${JSON.stringify(headers)}: GET ${ownList}`,
  expected: { code: 400, reason: 'BadRequest', sameAsKube: true },
  run: async (world) => {
    const kube = statusOf(await world.as('tenant-a', 'aggregator', { path: ownList, headers }));
    const ours = statusOf(await world.as('tenant-a', 'direct', { path: ownList, headers }));
    // kube 1.35 words this 400 differently (see classicImpersonation): there only the code and reason must agree.
    const same = classicImpersonation ? kube['code'] === ours['code'] && kube['reason'] === ours['reason'] : isDeepStrictEqual(kube, ours);
    return { code: ours['code'], reason: ours['reason'], sameAsKube: same || [kube, ours] };
  },
}));

export const identity: CaseGroup = { name: 'forged and malformed identities', cases: [...direct, ...tokens, ...frontProxy, ...throughAggregator, ...directImpersonation, ...sameAsKube] };
