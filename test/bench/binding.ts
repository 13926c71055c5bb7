// The binding figure: new claims (as the bench tenant, through the
// aggregator) that select the free `pool=b` hosts; from the moment the last
// create was acknowledged until every one of them shows `Associated=True`
// (seen on a watch of those claims), then the double-bind count from
// consistent lists of both sides: hosts named by more than one claim's
// `status.bareMetalHost`, and claim records held by more than one host's
// `consumerRef`. baremetal-operator is not needed: the binder sets
// Associated when it has written the host's consumerRef; provisioning (which
// BMO would do next) is not part of this figure.
import type { BenchConfig } from './config.js';
import { forEachConcurrently, type H2Client } from './h2.js';
import { BATCH_LABEL, CLAIMS, METAL3, POOL_LABEL, newClaim, tenantNamespace, write } from './scenario.js';

export interface BindingResult {
  readonly claims: number;
  readonly associated: number;
  /** From the last create's acknowledgement until the last claim was Associated; NaN when not all were within the timeout. */
  readonly secondsAfterLastCreate: number;
  readonly createSeconds: number;
  readonly doubleBinds: number;
}

interface ClaimObject {
  metadata: { name: string; namespace: string };
  status?: { bareMetalHost?: { namespace: string; name: string }; conditions?: { type: string; status: string }[] };
}

interface HostObject {
  metadata: { namespace: string; name: string };
  spec: { consumerRef?: { namespace?: string; name?: string } };
}

const BATCH = 'bind';

function isAssociated(claim: ClaimObject): boolean {
  return (claim.status?.conditions ?? []).some((condition) => condition.type === 'Associated' && condition.status === 'True');
}

export async function runBinding(config: BenchConfig, clients: { tenant: H2Client; admin: H2Client }, log: (line: string) => void): Promise<BindingResult> {
  const { tenant, admin } = clients;
  const selector = encodeURIComponent(`${BATCH_LABEL}=${BATCH}`);
  const start = await admin.json<{ metadata: { resourceVersion: string } }>({ path: `${CLAIMS}/hostclaims?limit=1&labelSelector=${selector}` });
  const associatedAt = new Map<string, number>();
  const watch = admin.watch(`${CLAIMS}/hostclaims?watch=true&labelSelector=${selector}&resourceVersion=${start.metadata.resourceVersion}`, (line) => {
    const event = JSON.parse(line) as { type: string; object: ClaimObject };
    const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
    if (!associatedAt.has(key) && isAssociated(event.object)) associatedAt.set(key, performance.now());
  });
  try {
    if ((await watch.established).status !== 200) throw new Error('binding: the watch on the new claims was refused');
    const claims = Array.from({ length: config.bindClaims }, (_, i) => ({ namespace: tenantNamespace(i % config.namespaces), name: `bind-${i}` }));
    const createStart = performance.now();
    let lastCreate = 0;
    await forEachConcurrently(claims, config.setupConcurrency, async ({ namespace, name }) => {
      await write(tenant, { method: 'POST', path: `${CLAIMS}/namespaces/${namespace}/hostclaims`, body: JSON.stringify(newClaim(name, { [BATCH_LABEL]: BATCH }, 'b')) });
      lastCreate = Math.max(lastCreate, performance.now());
    });
    log(`binding: ${claims.length} claims created in ${((lastCreate - createStart) / 1000).toFixed(1)} s`);
    const deadline = Date.now() + config.bindTimeoutMs;
    while (associatedAt.size < claims.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const last = Math.max(...associatedAt.values());
    const all = associatedAt.size === claims.length;
    log(`binding: ${associatedAt.size}/${claims.length} Associated${all ? `, the last ${((last - lastCreate) / 1000).toFixed(2)} s after the last create` : ''}`);
    return {
      claims: claims.length,
      associated: associatedAt.size,
      secondsAfterLastCreate: all ? Math.max(0, last - lastCreate) / 1000 : Number.NaN,
      createSeconds: (lastCreate - createStart) / 1000,
      doubleBinds: await countDoubleBinds(admin, selector),
    };
  } finally {
    watch.close();
  }
}

async function listAll<T>(client: H2Client, path: string): Promise<T[]> {
  const items: T[] = [];
  let token = '';
  do {
    const page = await client.json<{ items: T[]; metadata: { continue?: string } }>({ path: `${path}&limit=500${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}` });
    items.push(...page.items);
    token = page.metadata.continue ?? '';
  } while (token !== '');
  return items;
}

/** Hosts named by more than one claim, plus claims (by record name) held by more than one host. */
async function countDoubleBinds(admin: H2Client, selector: string): Promise<number> {
  const claims = await listAll<ClaimObject>(admin, `${CLAIMS}/hostclaims?labelSelector=${selector}`);
  const hosts = await listAll<HostObject>(admin, `${METAL3}/baremetalhosts?labelSelector=${encodeURIComponent(`${POOL_LABEL}=b`)}`);
  const repeats = (keys: string[]): number => {
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
    return [...counts.values()].filter((count) => count > 1).length;
  };
  const hostsOfClaims = claims.flatMap((claim) => (claim.status?.bareMetalHost === undefined ? [] : [`${claim.status.bareMetalHost.namespace}/${claim.status.bareMetalHost.name}`]));
  const holders = hosts.flatMap((host) => (host.spec.consumerRef?.name === undefined ? [] : [`${host.spec.consumerRef.namespace ?? ''}/${host.spec.consumerRef.name}`]));
  return repeats(hostsOfClaims) + repeats(holders);
}
