import { describe, expect, it } from 'vitest';
import { hostKeys, type BareMetalHost, type HostDeployPolicy } from '../../../src/metal3/types.js';
import {
  admittedHostNamespaces,
  hostKey,
  isCandidate,
  matchesSelector,
  mayTake,
  nodeReuseLabelValue,
  selectHost,
  type HostSelector,
  type Selection,
  type SelectionRequest,
} from '../../../src/tenancy/selection.js';
import { HostSelectionIndex } from '../../../src/tenancy/host-index.js';
import { host } from './host-fixture.js';



function policy(namespace: string, names?: string[]): HostDeployPolicy {
  return { metadata: { name: 'p', namespace }, spec: { hostClaimNamespaces: names === undefined ? {} : { names } } };
}

function request(overrides: Partial<SelectionRequest> = {}): SelectionRequest {
  return { namespace: { name: 'tenant-a', labels: {} }, ...overrides };
}

const infraPolicy = [policy('infra')];
const none = new Set<string>();

/** selectHost over the index the binder keeps, built from these hosts in this order. */
function select(req: SelectionRequest, hosts: readonly BareMetalHost[], policies: readonly HostDeployPolicy[], reserved: ReadonlySet<string>, releasing?: ReadonlyMap<string, string>): Selection {
  const index = new HostSelectionIndex();
  for (const h of hosts) index.set(h);
  return selectHost(req, index, policies, reserved, releasing);
}

function selectedName(selection: ReturnType<typeof selectHost>): string | undefined {
  return selection.kind === 'selected' ? hostKey(selection.host) : undefined;
}

describe('selectHost', () => {
  it('says NoAdmittingPolicy when no policy admits the namespace, even with free hosts', () => {
    const hosts = [host('h-0')];
    expect(select(request(), hosts, [], none)).toEqual({ kind: 'none', reason: 'NoAdmittingPolicy' });
    expect(select(request(), hosts, [policy('infra', ['tenant-b'])], none)).toEqual({ kind: 'none', reason: 'NoAdmittingPolicy' });
    // A policy without hostClaimNamespaces admits nothing.
    expect(select(request(), hosts, [{ metadata: { name: 'p', namespace: 'infra' }, spec: {} }], none)).toEqual({
      kind: 'none',
      reason: 'NoAdmittingPolicy',
    });
  });

  it('says NoBareMetalHost when a policy admits but no host qualifies', () => {
    expect(select(request(), [], infraPolicy, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
    expect(select(request(), [host('h-0', { state: 'provisioned' })], infraPolicy, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
  });

  it('only considers hosts in admitted namespaces', () => {
    const hosts = [host('a-host', { namespace: 'other' }), host('z-host', { namespace: 'infra' })];
    expect(selectedName(select(request(), hosts, infraPolicy, none))).toBe('infra/z-host');
    expect(select(request(), [host('a-host', { namespace: 'other' })], infraPolicy, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
  });

  it('chooses among every admitted namespace, in name order', () => {
    const hosts = [host('b', { namespace: 'infra-2' }), host('c', { namespace: 'infra-1' }), host('a', { namespace: 'infra-2' })];
    const policies = [policy('infra-1'), policy('infra-2')];
    expect(selectedName(select(request(), hosts, policies, none))).toBe('infra-1/c');
    expect(selectedName(select(request(), [host('b', { namespace: 'infra-2' }), host('a', { namespace: 'infra-2' })], policies, none))).toBe('infra-2/a');
  });

  it('restricts to inNamespace when it is admitted', () => {
    const hosts = [host('a', { namespace: 'infra-1' }), host('b', { namespace: 'infra-2' })];
    const policies = [policy('infra-1'), policy('infra-2')];
    const selection = select(request({ hostSelector: { inNamespace: 'infra-2' } }), hosts, policies, none);
    expect(selectedName(selection)).toBe('infra-2/b');
    // inNamespace admitted but with no free host there: nothing, even though infra-1 has one.
    expect(select(request({ hostSelector: { inNamespace: 'infra-2' } }), [hosts[0]!], policies, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
  });

  it('yields nothing when inNamespace is not admitted', () => {
    const hosts = [host('a', { namespace: 'infra-1' }), host('b', { namespace: 'forbidden' })];
    const selection = select(request({ hostSelector: { inNamespace: 'forbidden' } }), hosts, [policy('infra-1'), policy('forbidden', ['tenant-b'])], none);
    expect(selection.kind).toBe('none');
    expect(selection).toEqual({ kind: 'none', reason: 'NoAdmittingPolicy' });
  });

  it('skips reserved hosts', () => {
    const hosts = [host('a'), host('b')];
    expect(selectedName(select(request(), hosts, infraPolicy, new Set(['infra/a'])))).toBe('infra/b');
    expect(select(request(), hosts, infraPolicy, new Set(['infra/a', 'infra/b']))).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
    // Reservation is by namespace and name.
    expect(selectedName(select(request(), [host('a')], infraPolicy, new Set(['other/a'])))).toBe('infra/a');
  });

  it('applies the host selector', () => {
    const hosts = [host('a', { labels: { size: 'small' } }), host('b', { labels: { size: 'large', gpu: 'yes' } })];
    expect(selectedName(select(request({ hostSelector: { matchLabels: { size: 'large' } } }), hosts, infraPolicy, none))).toBe('infra/b');
    expect(select(request({ hostSelector: { matchLabels: { size: 'medium' } } }), hosts, infraPolicy, none)).toEqual({
      kind: 'none',
      reason: 'NoBareMetalHost',
    });
    expect(selectedName(select(request({ hostSelector: { matchExpressions: [{ key: 'gpu', operator: '!' }] } }), hosts, infraPolicy, none))).toBe(
      'infra/a',
    );
  });

  describe('node reuse (CAPM3 chooseHost)', () => {
    const nr = hostKeys.nodeReuse;
    const fd = hostKeys.failureDomain;
    const poolA = nodeReuseLabelValue('tenant-a', 'workers');
    const poolB = nodeReuseLabelValue('tenant-b', 'workers');
    const ours = { apiVersion: 'infra.tenancy.metal3.io/v1alpha1', kind: 'HostClaimRecord', namespace: 'hostclaim-system', name: 'tenant-a.old', uid: 'u-1' };
    const pooled = request({ nodeReuse: 'workers' });

    it('never gives a host kept for a pool to a claim of another pool or of none', () => {
      const keptForB = host('0-kept', { labels: { [nr]: poolB } });
      const plain = host('z-plain');
      expect(selectedName(select(request(), [keptForB, plain], infraPolicy, none))).toBe('infra/z-plain');
      expect(selectedName(select(pooled, [keptForB, plain], infraPolicy, none))).toBe('infra/z-plain');
      // Not even when nothing else fits.
      expect(select(request(), [keptForB], infraPolicy, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
      expect(select(pooled, [keptForB], infraPolicy, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
      // An empty pool name is no pool; a label set by someone else (CAPM3's bare pool name) is kept too.
      expect(select(request({ nodeReuse: '' }), [host('h', { labels: { [nr]: poolA } })], infraPolicy, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
      expect(select(pooled, [host('h', { labels: { [nr]: 'workers' } })], infraPolicy, none)).toEqual({ kind: 'none', reason: 'NoBareMetalHost' });
    });

    it('takes an available host of its own pool first, then the failure domain, then name order', () => {
      const plain = host('a-plain');
      const inDomain = host('b-domain', { labels: { [fd]: 'rack-1' } });
      const inPool = host('c-pool', { labels: { [nr]: poolA } });
      const inBoth = host('d-both', { labels: { [nr]: poolA, [fd]: 'rack-1' } });
      const req = request({ nodeReuse: 'workers', failureDomain: 'rack-1' });
      expect(selectedName(select(req, [plain, inDomain, inPool, inBoth], infraPolicy, none))).toBe('infra/d-both');
      expect(selectedName(select(req, [plain, inDomain, inPool], infraPolicy, none))).toBe('infra/c-pool');
      expect(selectedName(select(req, [plain, inDomain], infraPolicy, none))).toBe('infra/b-domain');
      expect(selectedName(select(req, [plain], infraPolicy, none))).toBe('infra/a-plain');
      // Another available pool host is taken while one is still deprovisioning.
      const returning = host('0-returning', { labels: { [nr]: poolA }, state: 'deprovisioning' });
      expect(selectedName(select(pooled, [returning, inPool, plain], infraPolicy, none))).toBe('infra/c-pool');
    });

    it('waits for its pool host while it is released or deprovisioned, rather than taking another', () => {
      const plain = host('a-plain');
      for (const [what, returning] of [
        ['deprovisioning', host('p', { labels: { [nr]: poolA }, state: 'deprovisioning' })],
        ['provisioned, still held by the releasing claim', host('p', { labels: { [nr]: poolA }, state: 'provisioned', consumerRef: ours })],
        ['paused', host('p', { labels: { [nr]: poolA }, annotations: { [hostKeys.paused]: '' } })],
      ] as const) {
        expect(select(pooled, [returning, plain], infraPolicy, none), what).toEqual({ kind: 'none', reason: 'WaitingForNodeReuseHost' });
      }
    });

    it('waits for a pool host whose deleted claim has not been released yet, before it carries the label', () => {
      // The race of a rolling upgrade: the old claim is deleted, the new one is created before the release labels the host.
      const plain = host('a-plain');
      const unlabelled = host('p', { state: 'provisioned', consumerRef: ours });
      expect(selectedName(select(pooled, [unlabelled, plain], infraPolicy, none))).toBe('infra/a-plain');
      expect(select(pooled, [unlabelled, plain], infraPolicy, none, new Map([['infra/p', poolA]]))).toEqual({ kind: 'none', reason: 'WaitingForNodeReuseHost' });
      // The release's label is the pool's, whatever the host carried before.
      const relabelled = host('p', { labels: { [nr]: poolB }, state: 'provisioned', consumerRef: ours });
      expect(select(pooled, [relabelled, plain], infraPolicy, none, new Map([['infra/p', poolA]]))).toEqual({ kind: 'none', reason: 'WaitingForNodeReuseHost' });
      // A host released for another pool, or for another namespace's pool of the same name, is not waited for.
      expect(selectedName(select(pooled, [unlabelled, plain], infraPolicy, none, new Map([['infra/p', poolB]])))).toBe('infra/a-plain');
      expect(selectedName(select(request({ nodeReuse: 'other' }), [unlabelled, plain], infraPolicy, none, new Map([['infra/p', poolA]])))).toBe('infra/a-plain');
      // Nor one that will not come back.
      const failing = host('p', { state: 'provisioned', consumerRef: ours, errorMessage: 'failed' });
      expect(selectedName(select(pooled, [failing, plain], infraPolicy, none, new Map([['infra/p', poolA]])))).toBe('infra/a-plain');
    });

    it('does not wait for a pool host that will not come back, or that it may not use', () => {
      const plain = host('a-plain');
      const cases: [string, BareMetalHost, SelectionRequest?][] = [
        ['in error', host('p', { labels: { [nr]: poolA }, state: 'deprovisioning', errorMessage: 'failed' })],
        ['being deleted', host('p', { labels: { [nr]: poolA }, state: 'deprovisioning', deletionTimestamp: '2024-01-01T00:00:00Z' })],
        ['unhealthy', host('p', { labels: { [nr]: poolA }, annotations: { [hostKeys.unhealthy]: '' } })],
        ['held by another consumer', host('p', { labels: { [nr]: poolA }, state: 'provisioned', consumerRef: { kind: 'Metal3Machine', name: 'm', namespace: 'x' } })],
        ['another pool', host('p', { labels: { [nr]: poolB }, state: 'deprovisioning' })],
        ['not matching the selector', host('p', { labels: { [nr]: poolA, role: 'db' }, state: 'deprovisioning' }), request({ nodeReuse: 'workers', hostSelector: { matchLabels: { role: 'worker' } } })],
        ['in a namespace not admitted', host('p', { namespace: 'other', labels: { [nr]: poolA }, state: 'deprovisioning' })],
      ];
      for (const [what, returning, req] of cases) {
        const worker = host('a-plain', { labels: { role: 'worker' } });
        expect(selectedName(select(req ?? pooled, [returning, req === undefined ? plain : worker], infraPolicy, none)), what).toBe('infra/a-plain');
      }
      // A pool host being bound by a sibling claim right now is not waited for.
      const sibling = host('p', { labels: { [nr]: poolA } });
      expect(selectedName(select(pooled, [sibling, plain], infraPolicy, new Set(['infra/p'])))).toBe('infra/a-plain');
    });

    it('without any host of its pool, takes any unlabelled host', () => {
      expect(selectedName(select(pooled, [host('b'), host('a')], infraPolicy, none))).toBe('infra/a');
    });
  });

  describe('mayTake', () => {
    it('allows unlabelled hosts to everyone and pool hosts only to their pool', () => {
      const inPool = host('p', { labels: { [hostKeys.nodeReuse]: nodeReuseLabelValue('tenant-a', 'workers') } });
      expect(mayTake(host('h'), request())).toBe(true);
      expect(mayTake(host('h'), request({ nodeReuse: 'workers' }))).toBe(true);
      expect(mayTake(inPool, request({ nodeReuse: 'workers' }))).toBe(true);
      expect(mayTake(inPool, request())).toBe(false);
      expect(mayTake(inPool, request({ nodeReuse: 'other' }))).toBe(false);
      expect(mayTake(inPool, request({ nodeReuse: 'workers', namespace: { name: 'tenant-b', labels: {} } }))).toBe(false);
    });
  });

  it('is reproducible whatever the input order, and does not reorder its input', () => {
    const hosts = [host('h-3'), host('h-1'), host('h-2')];
    const before = hosts.map((h) => h.metadata.name);
    expect(selectedName(select(request(), hosts, infraPolicy, none))).toBe('infra/h-1');
    expect(selectedName(select(request(), [...hosts].reverse(), infraPolicy, none))).toBe('infra/h-1');
    expect(hosts.map((h) => h.metadata.name)).toEqual(before);
  });

  it('ranks by failure domain, then name, over many hosts in any order', () => {
    const fd = hostKeys.failureDomain;
    // 200 hosts, h-000..h-199; the failure domain on h-150..h-199 only.
    const hosts = Array.from({ length: 200 }, (_, i) => {
      const name = `h-${String(i).padStart(3, '0')}`;
      return host(name, i >= 150 ? { labels: { [fd]: 'rack-9' } } : {});
    });
    const shuffled = [...hosts.filter((_, i) => i % 2 === 1).reverse(), ...hosts.filter((_, i) => i % 2 === 0)];
    for (const order of [hosts, [...hosts].reverse(), shuffled]) {
      expect(selectedName(select(request({ failureDomain: 'rack-9' }), order, infraPolicy, none))).toBe('infra/h-150');
      expect(selectedName(select(request({ failureDomain: 'rack-1' }), order, infraPolicy, none))).toBe('infra/h-000');
      expect(selectedName(select(request(), order, infraPolicy, new Set(['infra/h-000', 'infra/h-001'])))).toBe('infra/h-002');
    }
  });

  it('never selects with a selector the API would have rejected, whatever the hosts', () => {
    const hosts = [host('a', { labels: { zone: 'z1' } }), host('b')];
    expect(select(request({ hostSelector: { matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['0'] }] } }), hosts, infraPolicy, none)).toEqual({
      kind: 'none',
      reason: 'NoBareMetalHost',
    });
  });
});

describe('isCandidate', () => {
  it('accepts a free, available or ready host without error', () => {
    expect(isCandidate(host('h', { state: 'available' }))).toBe(true);
    expect(isCandidate(host('h', { state: 'ready' }))).toBe(true);
    expect(isCandidate(host('h', { consumerRef: null }))).toBe(true);
    expect(isCandidate(host('h', { errorMessage: '' }))).toBe(true);
    expect(isCandidate(host('h', { operationalStatus: 'OK' }))).toBe(true);
  });

  it('rejects hosts with a consumer', () => {
    expect(isCandidate(host('h', { consumerRef: { kind: 'Metal3Machine', name: 'm', namespace: 'x' } }))).toBe(false);
    expect(isCandidate(host('h', { consumerRef: {} }))).toBe(false);
  });

  it('rejects hosts being deleted', () => {
    expect(isCandidate(host('h', { deletionTimestamp: '2024-01-01T00:00:00Z' }))).toBe(false);
  });

  it('rejects every state other than available and ready', () => {
    for (const state of [
      '',
      'registering',
      'inspecting',
      'preparing',
      'provisioning',
      'provisioned',
      'deprovisioning',
      'externally provisioned',
      'match profile',
      'powering off before delete',
      'deleting',
      'unmanaged',
    ]) {
      expect(isCandidate(host('h', { state })), state).toBe(false);
    }
    const noStatus: BareMetalHost = { metadata: { name: 'h', namespace: 'infra' }, spec: {} };
    expect(isCandidate(noStatus)).toBe(false);
  });

  it('rejects hosts with an error', () => {
    expect(isCandidate(host('h', { errorMessage: 'BMC unreachable' }))).toBe(false);
  });

  it('rejects paused, detached and unhealthy hosts, whatever the annotation value', () => {
    for (const key of [hostKeys.paused, hostKeys.detached, hostKeys.unhealthy]) {
      expect(isCandidate(host('h', { annotations: { [key]: '' } })), key).toBe(false);
      expect(isCandidate(host('h', { annotations: { [key]: 'metal3.io/capm3' } })), key).toBe(false);
    }
    expect(isCandidate(host('h', { operationalStatus: 'detached' }))).toBe(false);
    // Unrelated annotations and the wrong pause key do not matter.
    expect(isCandidate(host('h', { annotations: { 'paused.metal3.io': '', note: 'x' } }))).toBe(true);
  });
});

describe('matchesSelector', () => {
  const labels = { size: 'large', zone: 'z1', gpu: '' };
  const h = host('h', { labels });
  const sel = (selector: HostSelector): boolean => matchesSelector(h, selector);

  it('matches everything without a selector', () => {
    expect(matchesSelector(h, undefined)).toBe(true);
    expect(matchesSelector(host('bare'), {})).toBe(true);
  });

  it('requires every matchLabels entry', () => {
    expect(sel({ matchLabels: { size: 'large' } })).toBe(true);
    expect(sel({ matchLabels: { size: 'large', zone: 'z1' } })).toBe(true);
    expect(sel({ matchLabels: { size: 'large', zone: 'z2' } })).toBe(false);
    expect(sel({ matchLabels: { missing: '' } })).toBe(false);
    expect(sel({ matchLabels: { gpu: '' } })).toBe(true);
    expect(matchesSelector(host('bare'), { matchLabels: { size: 'large' } })).toBe(false);
  });

  it('supports the label-selection operators in, notin, exists and !', () => {
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'in', values: ['z1', 'z2'] }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'in', values: ['z2'] }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'missing', operator: 'in', values: ['z1'] }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'notin', values: ['z2'] }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'notin', values: ['z1'] }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'missing', operator: 'notin', values: ['z1'] }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'gpu', operator: 'exists' }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'missing', operator: 'exists' }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'missing', operator: '!' }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'gpu', operator: '!' }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: '=', values: ['z1'] }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: '==', values: ['z2'] }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: '!=', values: ['z2'] }] })).toBe(true);
  });

  it('never matches an unknown operator', () => {
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['0'] }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] })).toBe(false);
  });

  it('requires matchLabels and every expression together', () => {
    expect(sel({ matchLabels: { size: 'large' }, matchExpressions: [{ key: 'zone', operator: 'in', values: ['z1'] }, { key: 'gpu', operator: 'exists' }] })).toBe(true);
    expect(sel({ matchLabels: { size: 'large' }, matchExpressions: [{ key: 'zone', operator: 'in', values: ['z1'] }, { key: 'gpu', operator: '!' }] })).toBe(
      false,
    );
    expect(sel({ matchLabels: { size: 'small' }, matchExpressions: [{ key: 'zone', operator: 'in', values: ['z1'] }] })).toBe(false);
  });
});

describe('admittedHostNamespaces', () => {
  it('lists the admitting namespaces, narrowed by inNamespace', () => {
    const policies = [policy('infra-1'), policy('infra-2', ['tenant-a']), policy('infra-3', ['tenant-b'])];
    expect([...admittedHostNamespaces(request(), policies)].sort()).toEqual(['infra-1', 'infra-2']);
    expect([...admittedHostNamespaces(request({ hostSelector: { inNamespace: 'infra-2' } }), policies)]).toEqual(['infra-2']);
    expect([...admittedHostNamespaces(request({ hostSelector: { inNamespace: 'infra-3' } }), policies)]).toEqual([]);
    expect([...admittedHostNamespaces(request({ hostSelector: { inNamespace: '' } }), policies)].sort()).toEqual(['infra-1', 'infra-2']);
  });
});

describe('nodeReuseLabelValue', () => {
  const validLabelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

  it('is the readable <namespace>.<pool> when that is a valid label value', () => {
    expect(nodeReuseLabelValue('tenant-a', 'workers')).toBe('tenant-a.workers');
    expect(nodeReuseLabelValue('t', 'Pool_1')).toBe('t.Pool_1');
    const exactly63 = nodeReuseLabelValue('n'.repeat(31), 'p'.repeat(31));
    expect(exactly63).toBe(`${'n'.repeat(31)}.${'p'.repeat(31)}`);
    expect(exactly63).toHaveLength(63);
  });

  it('is always a valid label value of at most 63 characters', () => {
    const inputs: [string, string][] = [
      ['tenant-a', 'workers'],
      ['n'.repeat(63), 'p'],
      ['n'.repeat(31), 'p'.repeat(32)],
      ['tenant-a', 'p'.repeat(200)],
      ['tenant-a', 'pool-'],
      ['tenant-a', '-pool'],
      ['tenant-a', ''],
      ['tenant-a', 'has space'],
      ['tenant-a', 'slash/pool'],
      ['tenant-a', 'ünïcode'],
    ];
    for (const [namespace, pool] of inputs) {
      const value = nodeReuseLabelValue(namespace, pool);
      expect(value.length, `${namespace}/${pool}`).toBeLessThanOrEqual(63);
      expect(value, `${namespace}/${pool}`).toMatch(validLabelValue);
      expect(value).not.toBe('');
    }
  });

  // Namespaces are DNS labels (no dots, no slashes), which is what makes both forms unambiguous.
  it('is deterministic and distinct for distinct inputs', () => {
    const inputs: [string, string][] = [
      ['tenant-a', 'workers'],
      ['tenant-a', 'workers2'],
      ['tenant-b', 'workers'],
      ['tenant-a-workers', 'x'],
      ['tenant', 'a.workers'],
      ['tenant-a', 'p'.repeat(100)],
      ['tenant-a', 'p'.repeat(101)],
      ['tenant-b', 'p'.repeat(100)],
      ['n'.repeat(63), 'p'],
      ['n'.repeat(63), 'q'],
      ['tenant-a', 'pool-'],
      ['tenant-a', 'pool_'],
      ['tenant-a', ''],
      ['tenant-a', 'a/b'],
      ['tenant-a', 'a_b'],
    ];
    const values = inputs.map(([namespace, pool]) => nodeReuseLabelValue(namespace, pool));
    expect(new Set(values).size).toBe(inputs.length);
    expect(inputs.map(([namespace, pool]) => nodeReuseLabelValue(namespace, pool))).toEqual(values);
  });

  it('never collides between the readable and the digest forms', () => {
    const digest = nodeReuseLabelValue('tenant-a', 'p'.repeat(100));
    expect(digest).not.toContain('.');
    expect(nodeReuseLabelValue('tenant-a', 'x')).toContain('.');
  });
});
