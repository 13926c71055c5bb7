import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labelSelectorFromHostSelector } from '../../../src/api/label-selector.js';
import { hostKeys, provisioningState, type BareMetalHost, type HostDeployPolicy } from '../../../src/metal3/types.js';
import { HostSelectionIndex } from '../../../src/tenancy/host-index.js';
import { boundRecord, isFree, recordConsumerRef } from '../../../src/tenancy/host-references.js';
import {
  admittedHostNamespaces,
  hostKey,
  isCandidate,
  mayTake,
  nodeReuseLabelValue,
  selectHost,
  type ReleasingPoolHosts,
  type Selection,
  type SelectionRequest,
} from '../../../src/tenancy/selection.js';
import { host } from './host-fixture.js';



const keys = (hosts: Iterable<BareMetalHost>): string[] => [...hosts].map(hostKey);
const consumer = recordConsumerRef({ namespace: 'hostclaim-system', name: 'tenant-a.web', uid: 'u-1' });
const pool = nodeReuseLabelValue('tenant-a', 'workers');

describe('HostSelectionIndex', () => {
  it("gives a namespace's candidates in name order", () => {
    const index = new HostSelectionIndex();
    for (const h of [host('b', { namespace: 'infra-2' }), host('c', { namespace: 'infra-1' }), host('a', { namespace: 'infra-2' }), host('z', { namespace: 'other' })]) index.set(h);
    index.set(host('0-bound', { namespace: 'infra-1', consumerRef: consumer }));
    expect(keys(index.candidates('infra-1'))).toEqual(['infra-1/c']);
    expect(keys(index.candidates('infra-2'))).toEqual(['infra-2/a', 'infra-2/b']);
    expect(keys(index.candidates('nowhere'))).toEqual([]);
    // Every host is found by key, candidate or not.
    expect(index.host('infra-1/0-bound')?.metadata.name).toBe('0-bound');
  });

  it('orders DNS names as localeCompare does (by code point, whatever the locale)', () => {
    const index = new HostSelectionIndex();
    const names = ['b-2', 'a-10', 'a-9', 'a.1', 'a-1', 'b-1', 'a1', 'a', '9z', 'a.1.b', 'a-1.b'];
    for (const name of names) index.set(host(name));
    const expected = names.map((name) => `infra/${name}`).sort((a, b) => a.localeCompare(b, 'und'));
    expect(keys(index.candidates('infra'))).toEqual(expected);
    expect(expected).toEqual(names.map((name) => `infra/${name}`).sort());
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,12}[a-z0-9])?$/), { maxLength: 12 }), (random) => {
        const randomIndex = new HostSelectionIndex();
        for (const name of random) randomIndex.set(host(name));
        expect(keys(randomIndex.candidates('infra'))).toEqual(random.map((name) => `infra/${name}`).sort((a, b) => a.localeCompare(b, 'und')));
      }),
    );
  });

  it('stays right across updates and deletes', () => {
    const index = new HostSelectionIndex();
    index.set(host('a'));
    index.set(host('b', { labels: { [hostKeys.nodeReuse]: pool } }));
    const all = 'infra';
    expect(keys(index.candidates(all))).toEqual(['infra/a', 'infra/b']);
    expect(keys(index.labelled(pool))).toEqual(['infra/b']);
    // Bound: no longer a candidate. Set twice: no duplicate.
    index.set(host('a', { consumerRef: consumer }));
    index.set(host('a', { consumerRef: consumer }));
    expect(keys(index.candidates(all))).toEqual(['infra/b']);
    // Released and back to available: a candidate again, once.
    index.set(host('a', { state: 'deprovisioning' }));
    expect(keys(index.candidates(all))).toEqual(['infra/b']);
    index.set(host('a'));
    expect(keys(index.candidates(all))).toEqual(['infra/a', 'infra/b']);
    // The label moved from b to a.
    index.set(host('b'));
    index.set(host('a', { labels: { [hostKeys.nodeReuse]: pool } }));
    expect(keys(index.labelled(pool))).toEqual(['infra/a']);
    expect(index.labelled('other')).toEqual([]);
    index.delete(host('a'));
    expect(keys(index.candidates(all))).toEqual(['infra/b']);
    expect(index.labelled(pool)).toEqual([]);
    expect(index.host('infra/a')).toBeUndefined();
    index.delete(host('never-seen'));
    index.clear();
    expect(keys(index.candidates(all))).toEqual([]);
    expect(index.host('infra/b')).toBeUndefined();
  });
});

/**
 * The selection as it was written before the index (every host filtered
 * per claim): the oracle the indexed selection must agree with, claim for
 * claim, node reuse included.
 */
function reference(request: SelectionRequest, hosts: readonly BareMetalHost[], policies: readonly HostDeployPolicy[], reserved: ReadonlySet<string>, releasing: ReleasingPoolHosts): Selection {
  const admitted = admittedHostNamespaces(request, policies);
  if (admitted.size === 0) return { kind: 'none', reason: 'NoAdmittingPolicy' };
  const selected = (h: BareMetalHost): boolean => {
    try {
      return labelSelectorFromHostSelector(request.hostSelector).matches(h.metadata.labels ?? {});
    } catch {
      return false;
    }
  };
  const eligible = (h: BareMetalHost): boolean => admitted.has(h.metadata.namespace ?? '') && selected(h) && !reserved.has(hostKey(h));
  const poolValue = request.nodeReuse === undefined || request.nodeReuse === '' ? undefined : nodeReuseLabelValue(request.namespace.name, request.nodeReuse);
  const candidates = hosts.filter((h) => isCandidate(h) && mayTake(h, request) && eligible(h));
  const preferred = (list: readonly BareMetalHost[]): BareMetalHost | undefined => {
    const domain = request.failureDomain;
    const rank = (h: BareMetalHost): number => (domain !== undefined && domain !== '' && h.metadata.labels?.[hostKeys.failureDomain] === domain ? 0 : 1);
    let best: BareMetalHost | undefined;
    for (const h of list) if (best === undefined || (rank(h) - rank(best) || hostKey(h).localeCompare(hostKey(best), 'und')) < 0) best = h;
    return best;
  };
  const poolHost = preferred(candidates.filter((h) => poolValue !== undefined && h.metadata.labels?.[hostKeys.nodeReuse] === poolValue));
  if (poolHost !== undefined) return { kind: 'selected', host: poolHost };
  const comingBack = (h: BareMetalHost, p: string): boolean =>
    (releasing.get(hostKey(h)) ?? h.metadata.labels?.[hostKeys.nodeReuse]) === p &&
    (isFree(h) || boundRecord(h) !== undefined) &&
    h.metadata.deletionTimestamp === undefined &&
    (h.status?.errorMessage ?? '') === '' &&
    !(hostKeys.unhealthy in (h.metadata.annotations ?? {}));
  if (poolValue !== undefined && hosts.some((h) => comingBack(h, poolValue) && eligible(h))) return { kind: 'none', reason: 'WaitingForNodeReuseHost' };
  const h = preferred(candidates);
  return h === undefined ? { kind: 'none', reason: 'NoBareMetalHost' } : { kind: 'selected', host: h };
}

/** A small deterministic generator (mulberry32), so a failure is reproducible. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('selectHost over the index', () => {
  it('agrees with filtering every host, claim for claim, through adds, updates, deletes and relists', () => {
    const next = random(12);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
    const namespaces = ['infra-1', 'infra-2', 'infra-3'];
    const pools = [nodeReuseLabelValue('tenant-a', 'workers'), nodeReuseLabelValue('tenant-a', 'db'), nodeReuseLabelValue('tenant-b', 'workers')];
    const randomHost = (): BareMetalHost => {
      const labels: Record<string, string> = {};
      if (next() < 0.3) labels[hostKeys.nodeReuse] = pick(pools);
      if (next() < 0.4) labels[hostKeys.failureDomain] = pick(['rack-1', 'rack-2']);
      if (next() < 0.5) labels['role'] = pick(['worker', 'db']);
      return host(pick(['a', 'b', 'B', 'c-1', 'c-10', 'c-2', 'd.x', 'e_y']), {
        namespace: pick(namespaces),
        labels,
        state: pick(['available', 'available', 'ready', 'provisioned', 'deprovisioning']),
        ...(next() < 0.1 ? { errorMessage: 'failed' } : {}),
        ...(next() < 0.3 ? { consumerRef: recordConsumerRef({ namespace: 'hostclaim-system', name: pick(['r1', 'r2']), uid: 'u' }) } : {}),
        ...(next() < 0.05 ? { annotations: { [hostKeys.unhealthy]: '' } } : {}),
        ...(next() < 0.05 ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      });
    };
    const policies: HostDeployPolicy[] = [
      { metadata: { name: 'p', namespace: 'infra-1' }, spec: { hostClaimNamespaces: {} } },
      { metadata: { name: 'p', namespace: 'infra-2' }, spec: { hostClaimNamespaces: { names: ['tenant-a'] } } },
      { metadata: { name: 'p', namespace: 'infra-3' }, spec: { hostClaimNamespaces: {} } },
    ];
    const index = new HostSelectionIndex();
    const state = new Map<string, BareMetalHost>();
    let compared = 0;
    for (let step = 0; step < 400; step++) {
      const roll = next();
      if (roll < 0.6) {
        const h = randomHost();
        state.set(hostKey(h), h);
        index.set(h);
      } else if (roll < 0.9) {
        const existing = [...state.values()];
        if (existing.length > 0) {
          const gone = pick(existing);
          state.delete(hostKey(gone));
          index.delete(gone);
        }
      } else {
        // A relist, as the binder's handler sees it: the adds, updates and deletes it implies.
        const listed = new Map(Array.from({ length: 1 + Math.floor(next() * 8) }, randomHost).map((h) => [hostKey(h), h]));
        for (const [key, old] of state) if (!listed.has(key)) index.delete(old);
        for (const h of listed.values()) index.set(h);
        state.clear();
        for (const [key, h] of listed) state.set(key, h);
      }
      const hosts = [...state.values()];
      const releasing: ReleasingPoolHosts = new Map(hosts.filter((h) => boundRecord(h) !== undefined && next() < 0.5).map((h) => [hostKey(h), pick(pools)]));
      for (let claim = 0; claim < 6; claim++) {
        const request: SelectionRequest = {
          namespace: { name: pick(['tenant-a', 'tenant-b']), labels: {} },
          ...(next() < 0.5 ? { nodeReuse: pick(['workers', 'db', '']) } : {}),
          ...(next() < 0.4 ? { failureDomain: pick(['rack-1', 'rack-2', '']) } : {}),
          ...(next() < 0.3 ? { hostSelector: { matchLabels: { role: pick(['worker', 'db']) } } } : {}),
          ...(next() < 0.2 ? { hostSelector: { inNamespace: pick(namespaces) } } : {}),
        };
        const reserved = new Set(hosts.filter(() => next() < 0.2).map(hostKey));
        const expected = reference(request, hosts, policies, reserved, releasing);
        const actual = selectHost(request, index, policies, reserved, releasing);
        expect(summary(actual), JSON.stringify({ step, request, reserved: [...reserved], releasing: [...releasing], hosts })).toEqual(summary(expected));
        compared++;
      }
    }
    expect(compared).toBe(2400);
  });
});

function summary(selection: Selection): string {
  return selection.kind === 'selected' ? `selected ${hostKey(selection.host)} (${provisioningState(selection.host)})` : `none ${selection.reason}`;
}
