/**
 * A host both tenants may claim (hosts-shared/host-s, one policy admitting
 * both). Once tenant-b holds it, tenant-a no longer sees it (404 like a host
 * that does not exist, absent from lists) and learns nothing of who holds
 * it: a claim of tenant-a asking for it waits with the static
 * `NoBareMetalHost` message; nothing tenant-a reads names tenant-b or its
 * claim (the runner's scan). tenant-b sees the host it holds.
 */
import { pollUntil } from '../../controlplane/wait.js';
import { claimBody, contentTypes, namesOf, notFound, objectOf, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { GROUP_PATH, type Path, type World } from '../world.js';

const shared = 'hosts-shared.host-s';
const hardware = (namespace: string): string => `${GROUP_PATH}/namespaces/${namespace}/hardwaredata`;
const claims = (namespace: string): string => `${GROUP_PATH}/namespaces/${namespace}/hostclaims`;
const wantsShared = { hostSelector: { matchLabels: { role: 'worker-s' } } };

interface Claim {
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[]; bareMetalHost?: { namespace: string; name: string } };
}

/** The claim's Associated condition as its own tenant reads it, once `done` says so (or the last one seen). */
async function associated(world: World, tenant: 'tenant-a' | 'tenant-b', name: string, done: (reason: string) => boolean): Promise<string> {
  let last = 'none';
  try {
    return await pollUntil(
      `${tenant}/${name} Associated`,
      async () => {
        const claim = (await world.as(tenant, 'aggregator', { path: `${claims(tenant)}/${name}` })).json as Claim;
        const condition = claim.status?.conditions?.find((c) => c.type === 'Associated');
        last = condition === undefined ? 'none' : `${condition.status} ${condition.reason}: ${condition.message}`;
        return condition !== undefined && done(condition.reason) ? last : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  } catch {
    return last;
  }
}

const read = (when: string, tenant: 'tenant-a' | 'tenant-b', via: Path, path: string, expected: Outcome, summarize: typeof statusOf = statusOf): IsolationCase => ({
  name: `${when}: ${tenant} (${via}) GET ${path.startsWith(GROUP_PATH) ? path.slice(GROUP_PATH.length) : path}`,
  request: `${tenant} via ${via}: GET ${path}`,
  expected,
  run: async (world) => summarize(await world.as(tenant, via, { path })),
});

async function create(world: World, tenant: 'tenant-a' | 'tenant-b', name: string): Promise<Outcome> {
  return objectOf(await world.as(tenant, 'aggregator', { method: 'POST', path: claims(tenant), headers: { 'Content-Type': contentTypes.json }, body: claimBody(name, wantsShared) }));
}

const cases: IsolationCase[] = [
  read('before tenant-b holds it', 'tenant-a', 'aggregator', `${hardware('tenant-a')}/${shared}`, { code: 200, object: `tenant-a/${shared}` }, objectOf),
  read('before tenant-b holds it', 'tenant-b', 'aggregator', `${hardware('tenant-b')}/${shared}`, { code: 200, object: `tenant-b/${shared}` }, objectOf),
  {
    name: 'tenant-b claims the shared host while tenant-a watches HardwareData',
    request: `tenant-a via aggregator: GET ${hardware('tenant-a')}?watch=true&timeoutSeconds=8&resourceVersion=<now>; meanwhile tenant-b: POST ${claims('tenant-b')} bravo-shared {hostSelector role=worker-s}`,
    // The host leaves tenant-a's view: a DELETED event, carrying nothing of tenant-b (the runner's scan).
    expected: { create: { code: 201, object: 'tenant-b/bravo-shared' }, associated: 'True BareMetalHostAssociated: The claim is bound to a host.', watched: { code: 200, events: [`DELETED tenant-a/${shared}`] } },
    run: async (world) => {
      const now = ((await world.as('tenant-a', 'aggregator', { path: hardware('tenant-a') })).json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const watch = world.as('tenant-a', 'aggregator', { path: `${hardware('tenant-a')}?watch=true&timeoutSeconds=8&resourceVersion=${now}` });
      const created = await create(world, 'tenant-b', 'bravo-shared');
      const bound = await associated(world, 'tenant-b', 'bravo-shared', (reason) => reason === 'BareMetalHostAssociated');
      const response = await watch;
      const events = response.body
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { type: string; object: { metadata: { namespace?: string; name?: string } } })
        .filter((event) => event.object.metadata.name === shared)
        .map((event) => `${event.type} ${event.object.metadata.namespace ?? ''}/${event.object.metadata.name ?? ''}`);
      return { create: created, associated: bound, watched: { code: response.status, events } };
    },
  },
  {
    name: 'tenant-a no longer sees the shared host once its cache has the binding',
    request: `tenant-a via aggregator: GET ${hardware('tenant-a')}?fieldSelector=metadata.name%3D${shared} until empty`,
    expected: { code: 200, names: [] },
    run: (world) =>
      pollUntil(
        'tenant-a to stop seeing the taken host',
        async () => {
          const names = namesOf(await world.as('tenant-a', 'aggregator', { path: `${hardware('tenant-a')}?fieldSelector=metadata.name%3D${shared}` }));
          return (names['names'] as string[] | undefined)?.length === 0 ? names : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      ).catch((error: unknown) => ({ error: String(error) })),
  },
  read('while tenant-b holds it', 'tenant-a', 'aggregator', `${hardware('tenant-a')}/${shared}`, notFound('hardwaredata', shared)),
  read('while tenant-b holds it', 'tenant-a', 'direct', `${hardware('tenant-a')}/${shared}`, notFound('hardwaredata', shared)),
  read('while tenant-b holds it', 'tenant-a', 'aggregator', `${hardware('tenant-a')}/${shared}?resourceVersion=0`, notFound('hardwaredata', shared)),
  read('while tenant-b holds it', 'tenant-a', 'aggregator', hardware('tenant-a'), { code: 200, names: ['tenant-a/hosts-a.host-a', 'tenant-a/hosts-a.host-a2', 'tenant-a/hosts-a.host-a3'] }, namesOf),
  read('while tenant-b holds it', 'tenant-b', 'aggregator', `${hardware('tenant-b')}/${shared}`, { code: 200, object: `tenant-b/${shared}` }, objectOf),
  {
    name: 'tenant-b reads its claim bound to the shared host',
    request: `tenant-b via aggregator: GET ${claims('tenant-b')}/bravo-shared`,
    expected: { code: 200, bareMetalHost: 'hosts-shared/host-s' },
    run: async (world) => {
      const response = await world.as('tenant-b', 'aggregator', { path: `${claims('tenant-b')}/bravo-shared` });
      const host = (response.json as Claim).status?.bareMetalHost;
      return { code: response.status, bareMetalHost: `${host?.namespace ?? ''}/${host?.name ?? ''}` };
    },
  },
  {
    name: 'tenant-a asks for the shared host: it waits, told nothing of who holds it',
    request: `tenant-a via aggregator: POST ${claims('tenant-a')} alpha-shared {hostSelector role=worker-s}; then the binder`,
    expected: {
      create: { code: 201, object: 'tenant-a/alpha-shared' },
      associated:
        'False NoBareMetalHost: No available host matches the claim among the hosts this namespace may use (hosts kept for another node-reuse pool are not taken); the claim is bound as soon as one is.',
    },
    run: async (world) => ({
      create: await create(world, 'tenant-a', 'alpha-shared'),
      associated: await associated(world, 'tenant-a', 'alpha-shared', () => true),
    }),
  },
  read('while tenant-b holds it', 'tenant-a', 'aggregator', '/api/v1/namespaces/tenant-a/events?fieldSelector=involvedObject.name%3Dalpha-shared', { code: 200 }, (response) => ({ code: response.status })),
];

export const sharedHosts: CaseGroup = { name: 'a host both tenants may claim', cases };
