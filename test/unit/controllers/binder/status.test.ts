import { describe, expect, it } from 'vitest';
import type { HostClaimStatus } from '../../../../src/controllers/binder/claim.js';
import { boundConditions, hostErrorText, nextStatus, sanitizedHostError, unboundConditions, type ConditionInput, type UnboundReason } from '../../../../src/controllers/binder/status.js';
import type { BareMetalHost } from '../../../../src/metal3/types.js';
import { claim, host } from './fixtures.js';

const rawError = 'Failed to get power state for node 1be26c0b-03f2-4d2e-ae87-c02d7f33c123. Error: HTTP POST redfish://10.1.2.3:8000/redfish/v1/Systems/1 returned 401 (user ironic-svc)';
const leaks = ['10.1.2.3', 'redfish://', '1be26c0b', 'ironic-svc', 'returned 401', 'bmc-secret', 'node-cz42', 'secret-rack-7'];

function errored(errorType: string | undefined, state = 'provisioning'): BareMetalHost {
  return host({
    namespace: 'secret-rack-7',
    name: 'node-cz42',
    status: {
      provisioning: { state },
      operationalStatus: 'error',
      errorMessage: rawError,
      ...(errorType === undefined ? {} : { errorType }),
      poweredOn: false,
    },
  });
}

function find(conditions: readonly ConditionInput[], type: string): ConditionInput {
  const condition = conditions.find((c) => c.type === type);
  if (condition === undefined) throw new Error(`no ${type} condition`);
  return condition;
}

function expectNoLeak(value: unknown): void {
  const text = JSON.stringify(value);
  for (const leak of leaks) expect(text, leak).not.toContain(leak);
}

const provisionedOn = (): BareMetalHost => host({ status: { provisioning: { state: 'provisioned' }, poweredOn: true } });
const wantsOn = claim({ spec: { poweredOn: true, image: { url: 'http://images/a.qcow2' } } });

describe('sanitizedHostError', () => {
  it('is undefined without error', () => {
    expect(sanitizedHostError(host())).toBeUndefined();
    expect(sanitizedHostError(host({ status: { errorMessage: '', errorType: '' } }))).toBeUndefined();
  });

  it('derives a message from errorType and never copies errorMessage', () => {
    const types = [
      'registration error',
      'provisioned registration error',
      'inspection error',
      'preparation error',
      'provisioning error',
      'power management error',
      'detach error',
      'servicing error',
      'some future error',
      undefined,
    ];
    const messages = new Set<string>();
    for (const type of types) {
      const message = sanitizedHostError(errored(type));
      expect(message, type).toBeDefined();
      expectNoLeak(message);
      messages.add(message ?? '');
    }
    // Known types get their own message.
    expect(messages.size).toBeGreaterThanOrEqual(9);
    expect(sanitizedHostError(errored('provisioning error'))).toMatch(/image/i);
  });

  it('reports an error when only errorType is set', () => {
    expect(sanitizedHostError(host({ status: { errorType: 'inspection error' } }))).toMatch(/inspection/i);
  });
});

describe('unboundConditions', () => {
  it('says why the claim has no host, without naming any host', () => {
    const reasons: UnboundReason[] = ['NoAdmittingPolicy', 'NoBareMetalHost', 'WaitingForNodeReuseHost', 'MissingBareMetalHost', 'BindingEnded'];
    const messages = new Set<string>();
    for (const reason of reasons) {
      const conditions = unboundConditions(reason);
      expect(find(conditions, 'Associated')).toMatchObject({ status: 'False', reason });
      expect(find(conditions, 'Ready')).toMatchObject({ status: 'False' });
      expect(find(conditions, 'Associated').message).not.toBe('');
      expectNoLeak(conditions);
      messages.add(find(conditions, 'Associated').message);
    }
    expect(messages.size).toBe(reasons.length);
    expect(find(unboundConditions('NoAdmittingPolicy'), 'Associated').message).toMatch(/HostDeployPolicy/);
    expect(find(unboundConditions('WaitingForNodeReuseHost'), 'Associated').message).toMatch(/node-reuse pool is not available yet/);
  });
});

describe('boundConditions', () => {
  it('is Ready when synchronized, provisioned and in the requested power state', () => {
    const conditions = boundConditions(wantsOn, provisionedOn(), { authorized: true });
    expect(conditions.map((c) => [c.type, c.status])).toEqual([
      ['Associated', 'True'],
      ['Authorized', 'True'],
      ['Synchronized', 'True'],
      ['Provisioned', 'True'],
      ['Ready', 'True'],
    ]);
    expect(find(conditions, 'Associated').reason).toBe('BareMetalHostAssociated');
    expect(find(conditions, 'Synchronized').reason).toBe('ConfigurationSynced');
  });

  it('is not Ready while the power state differs', () => {
    const off = host({ status: { provisioning: { state: 'provisioned' }, poweredOn: false } });
    const ready = find(boundConditions(wantsOn, off, { authorized: true }), 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'PowerStatePending' });
    const wantsOff = claim({ spec: { poweredOn: false, image: { url: 'http://a' } } });
    expect(find(boundConditions(wantsOff, provisionedOn(), { authorized: true }), 'Ready').status).toBe('False');
    expect(find(boundConditions(wantsOff, off, { authorized: true }), 'Ready').status).toBe('True');
  });

  it('is not Ready while not synchronized, with the sync problem as reason', () => {
    const problem = { reason: 'UserDataSecretSyncFailure', message: 'The user data Secret was not found.' };
    const conditions = boundConditions(wantsOn, provisionedOn(), { authorized: true, syncProblem: problem });
    expect(find(conditions, 'Synchronized')).toEqual({ type: 'Synchronized', status: 'False', ...problem });
    expect(find(conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'UserDataSecretSyncFailure' });
  });

  it('is not Ready while not provisioned, with the provisioning reason', () => {
    const cases: [string, string][] = [
      ['provisioning', 'Provisioning'],
      ['deprovisioning', 'Deprovisioning'],
      ['available', 'Waiting'],
    ];
    for (const [state, reason] of cases) {
      const h = host({ status: { provisioning: { state }, poweredOn: true } });
      const conditions = boundConditions(wantsOn, h, { authorized: true });
      expect(find(conditions, 'Provisioned'), state).toMatchObject({ status: 'False', reason });
      expect(find(conditions, 'Ready'), state).toMatchObject({ status: 'False', reason });
    }
    const noWorkload = claim({ spec: { poweredOn: true } });
    expect(find(boundConditions(noWorkload, host(), { authorized: true }), 'Provisioned')).toMatchObject({ status: 'False', reason: 'NoWorkload' });
    const poweredOff = claim({ spec: { poweredOn: false, image: { url: 'http://a' } } });
    expect(find(boundConditions(poweredOff, host(), { authorized: true }), 'Provisioned')).toMatchObject({ status: 'False', reason: 'PoweredOffRequested' });
    expect(find(boundConditions(claim({ spec: { poweredOn: true, customDeploy: { method: 'm' } } }), host(), { authorized: true }), 'Provisioned').reason).toBe('Waiting');
  });

  it('reports host errors sanitized, in every condition', () => {
    for (const state of ['provisioning', 'provisioned', 'available']) {
      const conditions = boundConditions(wantsOn, errored('provisioning error', state), { authorized: true });
      expect(find(conditions, 'Provisioned'), state).toMatchObject({ status: 'False', reason: 'HostError' });
      expect(find(conditions, 'Ready').status, state).toBe('False');
      expectNoLeak(conditions);
    }
  });

  it('says when the policy no longer admits the namespace, without stopping the workload', () => {
    const conditions = boundConditions(wantsOn, provisionedOn(), { authorized: false });
    expect(find(conditions, 'Authorized')).toMatchObject({ status: 'False', reason: 'PolicyRevoked' });
    expect(find(conditions, 'Associated').status).toBe('True');
    expectNoLeak(conditions);
  });
});

describe('nextStatus', () => {
  const now = '2025-01-02T03:04:05Z';
  const later = '2025-01-02T04:00:00Z';
  const binding = { bareMetalHost: { namespace: 'infra', name: 'host-0' }, poweredOn: true };

  it('names the tenant HardwareData <host-namespace>.<host-name> in the claim namespace', () => {
    const status = nextStatus(claim({ namespace: 'tenant-b' }), unboundConditions('NoBareMetalHost'), { bareMetalHost: { namespace: 'infra-2', name: 'host-7' } }, now);
    expect(status.bareMetalHost).toEqual({ namespace: 'infra-2', name: 'host-7' });
    expect(status.hardwareData).toEqual({ namespace: 'tenant-b', name: 'infra-2.host-7' });
  });

  it('falls back to a valid, distinct name when <host-namespace>.<host-name> is too long', () => {
    const longName = 'h'.repeat(250);
    const a = nextStatus(claim(), [], { bareMetalHost: { namespace: 'infra', name: longName } }, now).hardwareData?.name ?? '';
    const b = nextStatus(claim(), [], { bareMetalHost: { namespace: 'infra', name: `${longName}x` } }, now).hardwareData?.name ?? '';
    for (const name of [a, b]) {
      expect(name.length).toBeLessThanOrEqual(253);
      expect(name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    }
    expect(a).not.toBe(b);
  });

  it('omits bareMetalHost, hardwareData and poweredOn when unbound', () => {
    const status = nextStatus(claim(), unboundConditions('NoBareMetalHost'), {}, now);
    expect(status).not.toHaveProperty('bareMetalHost');
    expect(status).not.toHaveProperty('hardwareData');
    expect(status).not.toHaveProperty('poweredOn');
    expect(status.lastUpdated).toBe(now);
    expect(status.conditions?.every((c) => c.lastTransitionTime === now && c.observedGeneration === 1)).toBe(true);
  });

  it('keeps lastTransitionTime while a condition status is unchanged, and moves it when it changes', () => {
    const first = nextStatus(claim({ generation: 3 }), unboundConditions('NoBareMetalHost'), {}, now);
    const previous = claim({ generation: 3, status: first });
    // Same status, different reason: transition time kept.
    const second = nextStatus(previous, unboundConditions('NoAdmittingPolicy'), {}, later);
    expect(second.conditions?.find((c) => c.type === 'Associated')).toMatchObject({ reason: 'NoAdmittingPolicy', lastTransitionTime: now, observedGeneration: 3 });
    expect(second.lastUpdated).toBe(later);
    // Status flips: transition time moves.
    const bound = nextStatus(previous, boundConditions(wantsOn, provisionedOn(), { authorized: true }), binding, later);
    expect(bound.conditions?.find((c) => c.type === 'Associated')?.lastTransitionTime).toBe(later);
    expect(bound.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe(later);
    // New condition types start now.
    expect(bound.conditions?.find((c) => c.type === 'Synchronized')?.lastTransitionTime).toBe(later);
  });

  it('keeps lastUpdated when nothing changed', () => {
    const inputs = boundConditions(wantsOn, provisionedOn(), { authorized: true });
    const first = nextStatus(claim(), inputs, binding, now);
    const second = nextStatus(claim({ status: first }), inputs, binding, later);
    expect(second).toEqual(first);
    expect(second.lastUpdated).toBe(now);
  });

  it('keeps lastUpdated when the previous status came back from kube with keys in another order', () => {
    const inputs = boundConditions(wantsOn, provisionedOn(), { authorized: true });
    const first = nextStatus(claim(), inputs, binding, now);
    const reorder = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reorder);
      if (typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(
        Object.entries(value)
          .sort(([a], [b]) => (a < b ? 1 : -1))
          .map(([k, v]) => [k, reorder(v)]),
      );
    };
    const fromKube = reorder(JSON.parse(JSON.stringify(first))) as HostClaimStatus;
    expect(Object.keys(fromKube)).not.toEqual(Object.keys(first));
    const second = nextStatus(claim({ status: fromKube }), inputs, binding, later);
    expect(second.lastUpdated).toBe(now);
    expect(second.conditions?.map((c) => c.lastTransitionTime)).toEqual(first.conditions?.map((c) => c.lastTransitionTime));
  });

  it('moves lastUpdated when something else changed', () => {
    const inputs = boundConditions(wantsOn, provisionedOn(), { authorized: true });
    const first = nextStatus(claim(), inputs, binding, now);
    expect(nextStatus(claim({ status: first }), inputs, { ...binding, poweredOn: false }, later).lastUpdated).toBe(later);
    expect(nextStatus(claim({ status: first, generation: 2 }), inputs, binding, later).lastUpdated).toBe(later);
    const revoked = boundConditions(wantsOn, provisionedOn(), { authorized: false });
    expect(nextStatus(claim({ status: first }), revoked, binding, later).lastUpdated).toBe(later);
  });

  it('sets lastUpdated when the previous status has none', () => {
    const inputs = unboundConditions('NoBareMetalHost');
    const first = nextStatus(claim(), inputs, {}, now);
    const { lastUpdated: _dropped, ...withoutLastUpdated } = first;
    expect(nextStatus(claim({ status: withoutLastUpdated }), inputs, {}, later).lastUpdated).toBe(later);
  });

  it('never carries the raw host error into the status', () => {
    const status = nextStatus(claim(), boundConditions(wantsOn, errored('power management error', 'provisioned'), { authorized: true }), binding, now);
    const text = JSON.stringify(status);
    expect(text).not.toContain('10.1.2.3');
    expect(text).not.toContain(rawError);
  });
});

describe('hostErrorText', () => {
  it("is the host's own error text with its BMC address and credentials name replaced, or undefined without one", () => {
    const h = host({ status: { errorType: 'registration error', errorMessage: 'POST redfish://10.1.2.3/redfish/v1/Systems/1 with host-0-bmc-secret: 10.1.2.3 refused' } });
    expect(hostErrorText(h)).toBe('POST <BMC address> with <BMC credentials>: <BMC address> refused');
    expect(hostErrorText(host({ status: { errorType: 'registration error', errorMessage: '' } }))).toBeUndefined();
    expect(hostErrorText(host())).toBeUndefined();
  });
});
