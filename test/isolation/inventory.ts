/**
 * What the isolation suite's world holds (see world.ts), with names chosen
 * to be unique so that a leak scan can find them anywhere: BMC addresses,
 * credentials Secret names and passwords, the other tenant's claims and
 * Secret contents.
 */
import type { DevEnvironment } from '../controlplane/environment.js';

export const GROUP_PATH = '/apis/tenancy.metal3.io/v1alpha1';

export const hosts = [
  { namespace: 'hosts-a', name: 'host-a', role: 'worker-a', bmc: 'redfish://192.0.2.201:8000/redfish/v1/Systems/7a', credentials: 'host-a-bmc-credentials', password: 'pw-host-a-7f3c' },
  { namespace: 'hosts-a', name: 'host-a2', role: 'spare-a', bmc: 'redfish://192.0.2.203:8000/redfish/v1/Systems/7c', credentials: 'host-a2-bmc-credentials', password: 'pw-host-a2-91d0' },
  { namespace: 'hosts-a', name: 'host-a3', role: 'worker-a3', bmc: 'redfish://192.0.2.205:8000/redfish/v1/Systems/7e', credentials: 'host-a3-bmc-credentials', password: 'pw-host-a3-e27f' },
  { namespace: 'hosts-b', name: 'host-b', role: 'worker-b', bmc: 'redfish://192.0.2.202:8000/redfish/v1/Systems/7b', credentials: 'host-b-bmc-credentials', password: 'pw-host-b-52e1' },
  { namespace: 'hosts-shared', name: 'host-s', role: 'worker-s', bmc: 'redfish://192.0.2.204:8000/redfish/v1/Systems/7d', credentials: 'host-s-bmc-credentials', password: 'pw-host-s-0b6a' },
] as const;

/** Claims a group creates later in tenant-b, which tenant-a must never see named. */
export const laterClaimsOfB = ['bravo-shared'] as const;

export const claimsOf = { 'tenant-a': ['alpha-one', 'alpha-two', 'alpha-three'], 'tenant-b': ['bravo-one', 'bravo-two'] } as const;
export const secretPayload = { 'tenant-a': 'alpha-secret-payload-1e9', 'tenant-b': 'bravo-secret-payload-4c2' } as const;
export const ironicError = 'ipmi: cannot reach';

/** Names a tenant must never see (beyond what it sent itself): the infrastructure's and the other tenant's. */
export function forbiddenTermsFor(viewer: 'tenant-a' | 'tenant-b'): string[] {
  const other = viewer === 'tenant-a' ? 'tenant-b' : 'tenant-a';
  const otherHosts = viewer === 'tenant-a' ? ['hosts-b', 'host-b'] : ['hosts-a', 'host-a'];
  return [
    'hostclaim-system',
    'HostClaimRecord',
    'hostclaimrecord',
    'infra.tenancy.metal3.io',
    `${viewer}.`, // a record name of the viewer's own claims
    `${other}.`,
    other,
    ...claimsOf[other],
    ...(other === 'tenant-b' ? laterClaimsOfB : []),
    secretPayload[other],
    `${other === 'tenant-a' ? 'alpha' : 'bravo'}-userdata`,
    ...otherHosts,
    ...hosts.flatMap((host) => [new URL(host.bmc).hostname, host.bmc, host.credentials, host.password]),
    ironicError,
  ];
}

/**
 * What a tenant itself writes into its own objects in some cases: a claim
 * named like the other tenant's record, a claim referring to Secrets and a
 * host namespace it cannot use. Its own words are removed from a text before
 * the scan; every other occurrence of a forbidden name still counts.
 */
export const ownWords: Record<'tenant-a' | 'tenant-b', readonly string[]> = {
  'tenant-a': ['tenant-b.bravo-one', 'host-a-bmc-credentials', 'bravo-userdata', 'hosts-b'],
  'tenant-b': [],
};

/** Base64 of a Secret's data value. */
const b64 = (text: string): string => Buffer.from(text).toString('base64');

export async function createHosts(env: DevEnvironment): Promise<void> {
  const cp = env.controlPlane;
  for (const namespace of ['hosts-a', 'hosts-b', 'hosts-shared']) await cp.requestJson('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  for (const host of hosts) {
    await cp.requestJson('POST', `/api/v1/namespaces/${host.namespace}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: host.credentials },
      data: { username: b64('root'), password: b64(host.password) },
    });
    await cp.requestJson('POST', `/apis/metal3.io/v1alpha1/namespaces/${host.namespace}/baremetalhosts`, {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name: host.name, labels: { role: host.role } },
      spec: { online: false, bmc: { address: host.bmc, credentialsName: host.credentials }, bootMACAddress: '00:11:22:33:44:0' + String(hosts.indexOf(host)) },
    });
    const status = {
      operationalStatus: 'OK',
      errorCount: 0,
      // A host in error is never a candidate: host-a2 and host-b carry Ironic text with their BMC address, the others stay claimable.
      errorMessage: host.name === 'host-a2' || host.name === 'host-b' ? `${ironicError} ${host.bmc}` : '',
      poweredOn: false,
      provisioning: { state: 'available', ID: `ironic-${host.name}` },
      goodCredentials: { credentials: { name: host.credentials, namespace: host.namespace }, credentialsVersion: '1' },
      hardware: { hostname: host.name, ramMebibytes: 4096, cpu: { arch: 'x86_64', count: 4 }, nics: [{ name: 'eth0', mac: '00:11:22:33:44:55', ip: '192.0.2.99' }] },
    };
    const patched = await cp.kubectl(['-n', host.namespace, 'patch', 'baremetalhost', host.name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })], {
      kubeconfig: env.adminKubeconfigPath,
    });
    if (patched.code !== 0) throw new Error(patched.stderr);
  }
  const admitted = [['hosts-a', ['tenant-a']], ['hosts-b', ['tenant-b']], ['hosts-shared', ['tenant-a', 'tenant-b']]] as const;
  for (const [namespace, tenants] of admitted) {
    await cp.requestJson('POST', `/apis/metal3.io/v1alpha1/namespaces/${namespace}/hostdeploypolicies`, {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HostDeployPolicy',
      metadata: { name: 'tenants' },
      spec: { hostClaimNamespaces: { names: [...tenants] } },
    });
  }
}

/** Claims, Secrets, claimer-a's Role and the robot ServiceAccount; returns the robot's token. */
export async function createTenantObjects(env: DevEnvironment): Promise<string> {
  const cp = env.controlPlane;
  for (const tenant of ['tenant-a', 'tenant-b'] as const) {
    const prefix = tenant === 'tenant-a' ? 'alpha' : 'bravo';
    await cp.requestJson('POST', `/api/v1/namespaces/${tenant}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${prefix}-userdata` },
      data: { userData: b64(secretPayload[tenant]) },
    });
    for (const name of claimsOf[tenant]) {
      await cp.requestJson('POST', `${GROUP_PATH}/namespaces/${tenant}/hostclaims`, {
        apiVersion: 'tenancy.metal3.io/v1alpha1',
        kind: 'HostClaim',
        metadata: { name, labels: { app: prefix } },
        // No host has this role: these claims never bind, so nothing but the cases writes them after the first status.
        spec: { poweredOn: false, hostSelector: { matchLabels: { role: 'none' } } },
      });
    }
  }
  await cp.requestJson('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/tenant-a/roles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'claims-only' },
    rules: [{ apiGroups: ['tenancy.metal3.io'], resources: ['hostclaims'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] }],
  });
  await bind(env, 'claimer-a', { kind: 'Role', name: 'claims-only' }, { kind: 'User', name: 'claimer-a', apiGroup: 'rbac.authorization.k8s.io' });
  await cp.requestJson('POST', '/api/v1/namespaces/tenant-a/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
  await bind(env, 'robot-admin', { kind: 'ClusterRole', name: 'admin' }, { kind: 'ServiceAccount', name: 'robot', namespace: 'tenant-a' });
  const token = await cp.requestJson<{ status: { token: string } }>('POST', '/api/v1/namespaces/tenant-a/serviceaccounts/robot/token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  return token.status.token;
}

async function bind(env: DevEnvironment, name: string, role: { kind: string; name: string }, subject: Record<string, string>): Promise<void> {
  await env.controlPlane.requestJson('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/tenant-a/rolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...role },
    subjects: [subject],
  });
}
