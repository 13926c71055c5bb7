/**
 * The binder's choice of hosts reads an index of the shared host cache, kept
 * from the cache's events: it must hold what the cache holds after watch
 * events and after a relist (410), and stop following the cache with the
 * leadership term.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import type { KubeObject } from '../../../../src/backing/informer.js';
import { SharedInformerFactory } from '../../../../src/backing/shared-informers.js';
import { bindingAnnotations } from '../../../../src/controllers/binder/claim.js';
import { HostChoice } from '../../../../src/controllers/binder/host-choice.js';
import { consumerIndex, recordIndexes } from '../../../../src/controllers/binder/indexes.js';
import { hostKeys, metal3Resources, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../../../src/metal3/types.js';
import { recordConsumerRef } from '../../../../src/tenancy/host-references.js';
import { hostKey } from '../../../../src/tenancy/selection.js';
import { ControlledClient } from '../../../support/controlled-client.js';
import { claim as fixtureClaim, record as fixtureRecord } from './fixtures.js';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

let rv = 10;
function host(name: string, extra: Partial<BareMetalHost['spec']> = {}, state = 'available'): BareMetalHost {
  rv++;
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name, namespace: 'infra', resourceVersion: String(rv) },
    spec: { online: false, ...extra },
    status: { provisioning: { state } },
  };
}

const everyone: HostDeployPolicy = { metadata: { name: 'p', namespace: 'infra', resourceVersion: '2' }, spec: { hostClaimNamespaces: {} } };
const tenant: Namespace = { metadata: { name: 'tenant-a', resourceVersion: '3' } };
const recordsPath = '/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords';

let factory: SharedInformerFactory | undefined;
let choice: HostChoice | undefined;
afterEach(() => {
  choice?.stop();
  factory?.stop();
});

async function started(client: ControlledClient): Promise<HostChoice> {
  factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
  const records = factory.informerFor<ApiObject>({ path: recordsPath });
  for (const index of Object.values(recordIndexes)) records.addIndexer(index.name, index.fn);
  const informers = {
    hosts: factory.informerFor<BareMetalHost>(metal3Resources.bareMetalHosts),
    policies: factory.informerFor<HostDeployPolicy>(metal3Resources.hostDeployPolicies),
    namespaces: factory.informerFor<Namespace>(metal3Resources.namespaces),
    records,
  };
  informers.hosts.addIndexer(consumerIndex.name, consumerIndex.fn);
  await Promise.all(Object.values(informers).map((informer) => informer.waitForSync()));
  choice = new HostChoice(informers);
  return choice;
}

describe('HostChoice', () => {
  it('selects from an index that follows the host cache through watch events and relists', async () => {
    const client = new ControlledClient();
    const hostsPath = metal3Resources.bareMetalHosts.path;
    client.state.set(hostsPath, { items: [host('h-2'), host('h-3')], resourceVersion: '20' });
    client.state.set(metal3Resources.hostDeployPolicies.path, { items: [everyone], resourceVersion: '20' });
    client.state.set(metal3Resources.namespaces.path, { items: [tenant], resourceVersion: '20' });
    const hostChoice = await started(client);
    const claim = fixtureClaim({ name: 'web', uid: 'rec-1' });
    const chosen = (): string => {
      const selection = hostChoice.select(claim, hostChoice.request(claim));
      return selection.kind === 'selected' ? hostKey(selection.host) : selection.reason;
    };
    // The cache's state when the term began.
    expect(chosen()).toBe('infra/h-2');
    // A new host, first in name order.
    client.push(hostsPath, { type: 'ADDED', object: host('h-1') });
    expect(chosen()).toBe('infra/h-1');
    // Bound to someone: no longer a candidate.
    client.push(hostsPath, { type: 'MODIFIED', object: host('h-1', { consumerRef: recordConsumerRef({ namespace: 'hostclaim-system', name: 'x', uid: 'u' }) }) });
    expect(chosen()).toBe('infra/h-2');
    client.push(hostsPath, { type: 'DELETED', object: host('h-2') });
    expect(chosen()).toBe('infra/h-3');
    // A relist that drops h-3, frees h-1 and brings h-4: the index is the new list.
    client.state.set(hostsPath, { items: [host('h-1'), host('h-4')], resourceVersion: '40' });
    client.push(hostsPath, { type: 'ERROR', object: { metadata: {}, code: 410, reason: 'Expired' } as unknown as KubeObject });
    await settle();
    expect(chosen()).toBe('infra/h-1');
    client.push(hostsPath, { type: 'MODIFIED', object: host('h-1', {}, 'provisioning') });
    expect(chosen()).toBe('infra/h-4');
    client.push(hostsPath, { type: 'DELETED', object: host('h-4') });
    expect(chosen()).toBe('NoBareMetalHost');
    // Reserved hosts are skipped for other claims, not for the claim that reserved them, until the cache shows the binding.
    client.push(hostsPath, { type: 'ADDED', object: host('h-5') });
    hostChoice.reserve('infra/h-5', 'another-record');
    expect(chosen()).toBe('NoBareMetalHost');
    hostChoice.hostChanged(host('h-5', { consumerRef: recordConsumerRef({ namespace: 'hostclaim-system', name: 'another-record', uid: 'u' }) }));
    expect(chosen()).toBe('infra/h-5');
    // The end of the term: the index no longer follows the cache.
    hostChoice.stop();
    client.push(hostsPath, { type: 'ADDED', object: host('h-0') });
    expect(chosen()).toBe('NoBareMetalHost');
  });

  it('names, of the unbound claims, those a host change may matter to: the ones that may take the host, or all when it is kept for a pool', async () => {
    const client = new ControlledClient();
    const wantsB = fixtureRecord({ name: 'wants-b', uid: 'rec-b', spec: { hostSelector: { matchLabels: { pool: 'b' } } } });
    const wantsA = fixtureRecord({ name: 'wants-a', uid: 'rec-a', spec: { hostSelector: { matchLabels: { pool: 'a' } } } });
    const chose = fixtureRecord({ name: 'chose', uid: 'rec-c', annotations: { [bindingAnnotations.host]: 'infra/h-9' } });
    client.state.set(recordsPath, { items: [wantsB, wantsA, chose], resourceVersion: '20' });
    client.state.set(metal3Resources.hostDeployPolicies.path, { items: [everyone], resourceVersion: '20' });
    client.state.set(metal3Resources.namespaces.path, { items: [tenant], resourceVersion: '20' });
    const hostChoice = await started(client);
    const names = (changed: BareMetalHost, deleted = false): (string | undefined)[] =>
      hostChoice
        .unboundConcerned(changed, deleted)
        .map((r) => r.metadata.name)
        .sort();
    const freeB = (): BareMetalHost => ({ ...host('h-1'), metadata: { ...host('h-1').metadata, labels: { pool: 'b' } } });
    // A freed host: only the claim whose selector it matches (the claim that chose a host is not unbound).
    expect(names(freeB())).toEqual(['tenant-a.wants-b']);
    // A host that is not free, or is gone, helps no unbound claim.
    expect(names({ ...freeB(), status: { provisioning: { state: 'provisioning' } } })).toEqual([]);
    expect(names(freeB(), true)).toEqual([]);
    // No policy admits the claims' namespace any more: nobody may take it.
    client.push(metal3Resources.hostDeployPolicies.path, { type: 'DELETED', object: everyone });
    expect(names(freeB())).toEqual([]);
    // A host kept for a node-reuse pool: every unbound claim, as one waiting for it may have to fall back to another host.
    const pooled = freeB();
    expect(names({ ...pooled, metadata: { ...pooled.metadata, labels: { pool: 'b', [hostKeys.nodeReuse]: 'tenant-a.pool' } } }, true)).toEqual(['tenant-a.wants-a', 'tenant-a.wants-b']);
  });
});
