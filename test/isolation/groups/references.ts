/**
 * References to other tenants' Secrets and to hosts in every field that can
 * hold one, and what the binder does with them (the confused deputy,
 * src/resources/hostclaim/secret-access.ts, docs/architecture.md).
 *
 * - userData, networkData, metaData may only name the claim's own
 *   namespace: anything else is 422, on create, update, patch and apply.
 * - Every write of a claim needs the requester's own `get` on each Secret it
 *   names (userData, networkData, metaData, image.ociAuthSecretName):
 *   claimer-a may write claims but not read Secrets, so each is 403 with
 *   kube's words about the Secret, and nothing is stored.
 * - The binder copies only from the claim's namespace: a claim naming the
 *   BMC credentials Secret of its host, or tenant-b's Secret, gets
 *   `Synchronized=False` about a Secret missing in its own namespace and no
 *   copy is made; `hostSelector.inNamespace` cannot reach hosts whose policy
 *   does not admit the claim's namespace.
 */
import { pollUntil } from '../../controlplane/wait.js';
import { claimBody, contentTypes, invalid, objectOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { hosts } from '../inventory.js';
import { GROUP_PATH, type Actor, type World } from '../world.js';

const collection = `${GROUP_PATH}/namespaces/tenant-a/hostclaims`;
const secretFields = ['userData', 'networkData', 'metaData'] as const;
const ownNamespaceOnly = (field: string, value: string): string => `spec.${field}.namespace: Invalid value: "${value}": must be empty or the claim's own namespace`;
const secretDenied = (user: string, name: string): Outcome => ({
  code: 403,
  reason: 'Forbidden',
  message: `secrets "${name}" is forbidden: User "${user}" cannot get resource "secrets" in API group "" in the namespace "tenant-a"`,
});

type Write = 'create' | 'update' | 'merge patch' | 'apply' | 'dry-run create';

/** Sends `spec` on claim `name` of tenant-a with the given write; update and patches apply to alpha-three. */
async function write(world: World, actor: Actor, kind: Write, name: string, spec: Record<string, unknown>): Promise<Outcome> {
  const send = (method: string, path: string, contentType: string, body: string): Promise<Outcome> =>
    world.as(actor, 'aggregator', { method, path, headers: { 'Content-Type': contentType }, body }).then(objectOf);
  switch (kind) {
    case 'create':
      return send('POST', collection, contentTypes.json, claimBody(name, spec));
    case 'dry-run create':
      return send('POST', `${collection}?dryRun=All`, contentTypes.json, claimBody(name, spec));
    case 'apply':
      return send('PATCH', `${collection}/${name}?fieldManager=isolation&force=true`, contentTypes.apply, claimBody(name, spec));
    case 'merge patch':
      return send('PATCH', `${collection}/${name}`, contentTypes.merge, JSON.stringify({ spec }));
    case 'update': {
      const current = (await world.as(actor, 'aggregator', { path: `${collection}/${name}` })).json as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
      return send('PUT', `${collection}/${name}`, contentTypes.json, JSON.stringify({ ...current, spec: { ...current.spec, ...spec } }));
    }
  }
}

function referenceCase(actor: Actor, kind: Write, field: string, spec: Record<string, unknown>, expected: (name: string) => Outcome): IsolationCase {
  const name = kind === 'create' || kind === 'dry-run create' ? `ref-${field.toLowerCase().replaceAll(' ', '-')}-${actor}` : 'alpha-three';
  return {
    name: `${actor} ${kind} with ${field} ${JSON.stringify(spec)}`,
    request: `${actor} via aggregator: ${kind} tenant-a/${name} spec ${JSON.stringify(spec)}`,
    expected: expected(name),
    run: (world) => write(world, actor, kind, name, spec),
  };
}

const writes: readonly Write[] = ['create', 'update', 'merge patch', 'apply', 'dry-run create'];

const otherNamespace: IsolationCase[] = secretFields.flatMap((field) =>
  writes.map((kind) => referenceCase('tenant-a', kind, field, { [field]: { name: 'bravo-userdata', namespace: 'tenant-b' } }, (name) => invalid(name, ownNamespaceOnly(field, 'tenant-b')))),
);
const storageNamespace: IsolationCase[] = secretFields.map((field) =>
  referenceCase('tenant-a', 'create', field, { [field]: { name: 'host-a-bmc-credentials', namespace: 'hosts-a' } }, (name) => invalid(name, ownNamespaceOnly(field, 'hosts-a'))),
);

const deputyFields: Record<string, Record<string, unknown>> = {
  userData: { userData: { name: 'alpha-userdata' } },
  networkData: { networkData: { name: 'alpha-userdata' } },
  metaData: { metaData: { name: 'alpha-userdata', namespace: 'tenant-a' } },
  ociAuthSecretName: { image: { url: 'oci://registry.example/image', ociAuthSecretName: 'alpha-userdata' } },
};
const confusedDeputy: IsolationCase[] = Object.entries(deputyFields).flatMap(([field, spec]) =>
  writes.map((kind) => referenceCase('claimer-a', kind, field, spec, () => secretDenied('claimer-a', 'alpha-userdata'))),
);

/** Positive controls: created (then deleted again, so that later lists stay as they were). */
function controlCase(actor: Actor, label: string, name: string, spec: Record<string, unknown>): IsolationCase {
  return {
    name: `${actor} create with ${label} (control)`,
    request: `${actor} via aggregator: create tenant-a/${name} spec ${JSON.stringify(spec)}; then delete it`,
    expected: { code: 201, object: `tenant-a/${name}`, deleted: 200 },
    run: async (world) => {
      const created = await write(world, actor, 'create', name, spec);
      const deleted = await world.as(actor, 'aggregator', { method: 'DELETE', path: `${collection}/${name}` });
      return { ...created, deleted: deleted.status };
    },
  };
}

const controls: IsolationCase[] = [
  controlCase('claimer-a', 'no Secret', 'control-claimer', {}),
  controlCase('tenant-a', 'its own Secret', 'control-own-secret', { userData: { name: 'alpha-userdata' } }),
  // consumerRef is informational: the server stores it and never acts on it.
  controlCase('tenant-a', 'a consumerRef naming tenant-b', 'control-consumer', { consumerRef: { apiVersion: 'v1', kind: 'Secret', namespace: 'tenant-b', name: 'bravo-userdata' } }),
];

interface Claim {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[]; bareMetalHost?: { namespace: string; name: string } };
}

async function conditionOf(world: World, name: string, type: string, until: (reason: string) => boolean): Promise<string> {
  let last = '';
  return pollUntil(
    `claim ${name} condition ${type}`,
    async () => {
      const claim = (await world.as('admin', 'aggregator', { path: `${collection}/${name}` })).json as Claim;
      const condition = claim.status?.conditions?.find((c) => c.type === type);
      last = JSON.stringify(claim.status ?? {});
      return condition !== undefined && until(condition.reason) ? `${condition.status} ${condition.reason}: ${condition.message}` : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, describeFailure: () => `last status ${last}` },
  );
}

/** Secrets in `namespace` other than the hosts' own BMC credentials: copies the binder made. */
async function copiesIn(world: World, namespace: string): Promise<string[]> {
  const list = await world.env.controlPlane.requestJson<{ items: { metadata: { name: string } }[] }>('GET', `/api/v1/namespaces/${namespace}/secrets`);
  const own = new Set<string>(hosts.map((host) => host.credentials));
  return list.items.map((secret) => secret.metadata.name).filter((name) => !own.has(name));
}

const binder: IsolationCase[] = [
  {
    name: "binder: a claim naming its host's BMC credentials and tenant-b's Secret",
    request: 'tenant-a: POST alpha-deputy {userData: host-a-bmc-credentials, networkData: bravo-userdata, hostSelector role=worker-a}; then the binder',
    expected: {
      create: { code: 201, object: 'tenant-a/alpha-deputy' },
      associated: 'True BareMetalHostAssociated: The claim is bound to a host.',
      synchronized: 'False UserDataSecretSyncFailure: Secret "host-a-bmc-credentials" not found in namespace "tenant-a".',
      copies: [],
      hostUserData: 'none',
    },
    run: async (world) => {
      const spec = { userData: { name: 'host-a-bmc-credentials' }, networkData: { name: 'bravo-userdata' }, hostSelector: { matchLabels: { role: 'worker-a' } } };
      const create = await write(world, 'tenant-a', 'create', 'alpha-deputy', spec);
      const associated = await conditionOf(world, 'alpha-deputy', 'Associated', (reason) => reason === 'BareMetalHostAssociated');
      const synchronized = await conditionOf(world, 'alpha-deputy', 'Synchronized', () => true);
      const host = await world.env.controlPlane.requestJson<{ spec: { userData?: { name: string } } }>('GET', '/apis/metal3.io/v1alpha1/namespaces/hosts-a/baremetalhosts/host-a');
      return { create, associated, synchronized, copies: await copiesIn(world, 'hosts-a'), hostUserData: host.spec.userData?.name ?? 'none' };
    },
  },
  {
    name: "binder: hostSelector.inNamespace naming tenant-b's host namespace",
    request: 'tenant-a: POST alpha-reach {hostSelector: {inNamespace: hosts-b, matchLabels: {role: worker-b}}}; then the binder',
    expected: { create: { code: 201, object: 'tenant-a/alpha-reach' }, associated: 'False NoAdmittingPolicy', hostB: 'free' },
    run: async (world) => {
      const create = await write(world, 'tenant-a', 'create', 'alpha-reach', { hostSelector: { inNamespace: 'hosts-b', matchLabels: { role: 'worker-b' } } });
      const associated = await conditionOf(world, 'alpha-reach', 'Associated', () => true);
      const host = await world.env.controlPlane.requestJson<{ spec: { consumerRef?: unknown } }>('GET', '/apis/metal3.io/v1alpha1/namespaces/hosts-b/baremetalhosts/host-b');
      return { create, associated: associated.split(':')[0], hostB: host.spec.consumerRef === undefined ? 'free' : 'taken' };
    },
  },
  {
    name: 'binder: the claim bound to host-a shows no infrastructure in its status',
    request: 'tenant-a via aggregator: GET alpha-deputy (status)',
    expected: { code: 200, bareMetalHost: 'hosts-a/host-a' },
    run: async (world) => {
      const response = await world.as('tenant-a', 'aggregator', { path: `${collection}/alpha-deputy` });
      const claim = response.json as Claim;
      return { code: response.status, bareMetalHost: `${claim.status?.bareMetalHost?.namespace ?? ''}/${claim.status?.bareMetalHost?.name ?? ''}` };
    },
  },
];

/**
 * Secret names that are not names: a `/` or dot segment would make the
 * binder's request for the claim's Secret (with its own identity) climb out
 * of the claim's namespace, to the other tenant's Secret or the host's BMC
 * credentials, while the requester's own `get` was checked on the name in
 * its namespace. Such a name is refused as kube refuses an invalid object
 * name (a DNS subdomain), and nothing is bound or copied.
 */
const climbing: Record<string, Record<string, unknown>> = {
  userData: { userData: { name: '../../tenant-b/secrets/bravo-userdata' } },
  networkData: { networkData: { name: '../../hosts-a/secrets/host-a3-bmc-credentials' } },
  metaData: { metaData: { name: '%2e%2e/%2e%2e/tenant-b/secrets/bravo-userdata' } },
  ociAuthSecretName: { image: { url: 'oci://registry.example/image', ociAuthSecretName: './bravo-userdata' } },
};
const subdomain =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const fieldOf: Record<string, string> = { userData: 'spec.userData.name', networkData: 'spec.networkData.name', metaData: 'spec.metaData.name', ociAuthSecretName: 'spec.image.ociAuthSecretName' };
const nameOf = (spec: Record<string, unknown>): string => {
  const reference = Object.values(spec)[0] as { name?: string; ociAuthSecretName?: string };
  return reference.name ?? reference.ociAuthSecretName ?? '';
};

const climbingNames: IsolationCase[] = Object.entries(climbing).flatMap(([field, spec]) =>
  (['create', 'merge patch', 'apply'] as const).map((kind) =>
    referenceCase('tenant-a', kind, `a ${field} name climbing out of the namespace`, { ...spec, hostSelector: { matchLabels: { role: 'worker-a3' } } }, (name) =>
      invalid(name, `${fieldOf[field] ?? field}: Invalid value: ${JSON.stringify(nameOf(spec))}: ${subdomain}`),
    ),
  ),
);

const nothingClimbed: IsolationCase = {
  name: 'binder: nothing was bound or copied for the climbing names',
  request: 'admin: GET hosts-a/baremetalhosts/host-a3; Secrets in hosts-a',
  expected: { hostA3: 'free', copies: [] },
  run: async (world) => {
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const host = await world.env.controlPlane.requestJson<{ spec: { consumerRef?: unknown } }>('GET', '/apis/metal3.io/v1alpha1/namespaces/hosts-a/baremetalhosts/host-a3');
    return { hostA3: host.spec.consumerRef === undefined ? 'free' : 'taken', copies: await copiesIn(world, 'hosts-a') };
  },
};

/** The legitimate path, for the scan: a claim's own Secret is copied under a name derived from the record; tenant-a is never shown that name. */
const ownSecretCopied: IsolationCase = {
  name: 'binder: a claim with its own Secret is bound and synchronized; the copy stays out of sight',
  request: 'tenant-a: POST alpha-copied {userData: alpha-userdata, hostSelector role=worker-a3}; then the binder; tenant-a reads the claim and its Events',
  expected: {
    create: { code: 201, object: 'tenant-a/alpha-copied' },
    synchronized: 'True ConfigurationSynced: The host carries the claim configuration.',
    copies: ['tenant-a.alpha-copied-userdata'],
    hostUserData: 'tenant-a.alpha-copied-userdata',
    events: 200,
  },
  run: async (world) => {
    const create = await write(world, 'tenant-a', 'create', 'alpha-copied', { userData: { name: 'alpha-userdata' }, hostSelector: { matchLabels: { role: 'worker-a3' } } });
    const synchronized = await conditionOf(world, 'alpha-copied', 'Synchronized', (reason) => reason === 'ConfigurationSynced');
    const host = await world.env.controlPlane.requestJson<{ spec: { userData?: { name: string } } }>('GET', '/apis/metal3.io/v1alpha1/namespaces/hosts-a/baremetalhosts/host-a3');
    await world.as('tenant-a', 'aggregator', { path: `${collection}/alpha-copied` });
    const events = await world.as('tenant-a', 'aggregator', { path: '/api/v1/namespaces/tenant-a/events?fieldSelector=involvedObject.name%3Dalpha-copied' });
    return { create, synchronized, copies: await copiesIn(world, 'hosts-a'), hostUserData: host.spec.userData?.name ?? 'none', events: events.status };
  },
};

export const references: CaseGroup = { name: 'references to Secrets and hosts of others', cases: [...otherNamespace, ...storageNamespace, ...confusedDeputy, ...controls, ...climbingNames, nothingClimbed, ...binder, ownSecretCopied] };
