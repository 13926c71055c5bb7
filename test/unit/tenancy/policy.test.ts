import { describe, expect, it } from 'vitest';
import type { HostClaimNamespaces, HostDeployPolicy } from '../../../src/metal3/types.js';
import {
  admits,
  admittingPolicies,
  allowsDetaching,
  allowsDetachingAnnotation,
  sharedLabelsAnnotation,
  sharesLabelKey,
  tenantNamespace,
  type TenantNamespace,
} from '../../../src/tenancy/policy.js';

function policy(hostClaimNamespaces: HostClaimNamespaces | null | undefined, namespace = 'infra', annotations?: Record<string, string>): HostDeployPolicy {
  return {
    metadata: { name: 'policy', namespace, ...(annotations === undefined ? {} : { annotations }) },
    ...(hostClaimNamespaces === undefined ? { spec: {} } : { spec: { hostClaimNamespaces } }),
  };
}

function ns(name: string, labels: Record<string, string> = {}): TenantNamespace {
  return { name, labels };
}

describe('admits', () => {
  it('admits nothing when hostClaimNamespaces is omitted, null, or the spec is missing', () => {
    expect(admits(policy(undefined), ns('tenant-a'))).toBe(false);
    expect(admits(policy(null), ns('tenant-a'))).toBe(false);
    expect(admits({ metadata: { name: 'p', namespace: 'infra' } }, ns('tenant-a'))).toBe(false);
  });

  it('admits every namespace when hostClaimNamespaces is empty', () => {
    expect(admits(policy({}), ns('tenant-a'))).toBe(true);
    expect(admits(policy({}), ns('anything-else', { team: 'x' }))).toBe(true);
  });

  it('matches names exactly', () => {
    const p = policy({ names: ['tenant-a', 'tenant-b'] });
    expect(admits(p, ns('tenant-a'))).toBe(true);
    expect(admits(p, ns('tenant-b'))).toBe(true);
    expect(admits(p, ns('tenant-c'))).toBe(false);
    expect(admits(p, ns('tenant-ab'))).toBe(false);
    expect(admits(p, ns('xtenant-a'))).toBe(false);
    expect(admits(p, ns('tenant'))).toBe(false);
  });

  it('anchors nameMatches to the whole namespace name', () => {
    const literal = policy({ nameMatches: 'tenant-a' });
    expect(admits(literal, ns('tenant-a'))).toBe(true);
    expect(admits(literal, ns('xtenant-a'))).toBe(false);
    expect(admits(literal, ns('tenant-ab'))).toBe(false);

    const prefix = policy({ nameMatches: 'tenant-.*' });
    expect(admits(prefix, ns('tenant-a'))).toBe(true);
    expect(admits(prefix, ns('my-tenant-a'))).toBe(false);

    const charClass = policy({ nameMatches: 'tenant-[ab]' });
    expect(admits(charClass, ns('tenant-b'))).toBe(true);
    expect(admits(charClass, ns('tenant-c'))).toBe(false);
    expect(admits(charClass, ns('tenant-bb'))).toBe(false);
  });

  it('anchors an alternation as a whole, not just its first and last branches', () => {
    const p = policy({ nameMatches: 'a|b' });
    expect(admits(p, ns('a'))).toBe(true);
    expect(admits(p, ns('b'))).toBe(true);
    expect(admits(p, ns('ab'))).toBe(false);
    expect(admits(p, ns('ax'))).toBe(false);
    expect(admits(p, ns('xb'))).toBe(false);

    const words = policy({ nameMatches: 'dev|prod' });
    expect(admits(words, ns('prod'))).toBe(true);
    expect(admits(words, ns('devx'))).toBe(false);
    expect(admits(words, ns('xprod'))).toBe(false);
  });

  it('admits nothing with an invalid pattern', () => {
    for (const pattern of ['(', 'tenant-[a', '*', '(?<=a)b', 'a{2,1}']) {
      expect(admits(policy({ nameMatches: pattern }), ns('tenant-a')), pattern).toBe(false);
      // Even a name equal to the pattern text is not admitted.
      expect(admits(policy({ nameMatches: pattern }), ns(pattern)), pattern).toBe(false);
    }
  });

  it('admits nothing with an absurdly long pattern', () => {
    const long = `${'(tenant-a)?'.repeat(200)}tenant-a`;
    expect(admits(policy({ nameMatches: long }), ns('tenant-a'))).toBe(false);
  });

  it('evaluates catastrophic-backtracking patterns in linear time', () => {
    const subject = `${'a'.repeat(40)}!`;
    for (const pattern of ['(a+)+$', '(a|aa)+$', '(a*)*b', '(a|a)*c']) {
      const start = performance.now();
      expect(admits(policy({ nameMatches: pattern }), ns(subject)), pattern).toBe(false);
      expect(performance.now() - start, pattern).toBeLessThan(200);
    }
    // And a long subject, still fast.
    const start = performance.now();
    expect(admits(policy({ nameMatches: '(a+)+$' }), ns(`${'a'.repeat(5000)}!`))).toBe(false);
    expect(performance.now() - start).toBeLessThan(200);
  });

  it('requires hasLabels keys, and their values when given', () => {
    const present = policy({ hasLabels: [{ name: 'tenancy/enabled' }] });
    expect(admits(present, ns('t', { 'tenancy/enabled': 'whatever' }))).toBe(true);
    expect(admits(present, ns('t', { 'tenancy/enabled': '' }))).toBe(true);
    expect(admits(present, ns('t', { other: 'x' }))).toBe(false);
    expect(admits(present, ns('t'))).toBe(false);

    const valued = policy({ hasLabels: [{ name: 'team', value: 'blue' }] });
    expect(admits(valued, ns('t', { team: 'blue' }))).toBe(true);
    expect(admits(valued, ns('t', { team: 'red' }))).toBe(false);
    expect(admits(valued, ns('t', { team: 'blue-ish' }))).toBe(false);
    expect(admits(valued, ns('t'))).toBe(false);

    const several = policy({ hasLabels: [{ name: 'team', value: 'blue' }, { name: 'env' }] });
    expect(admits(several, ns('t', { team: 'blue', env: 'prod' }))).toBe(true);
    expect(admits(several, ns('t', { team: 'blue' }))).toBe(false);
    expect(admits(several, ns('t', { env: 'prod' }))).toBe(false);
  });

  it('requires every present constraint to hold together', () => {
    const p = policy({ names: ['tenant-a', 'tenant-b', 'other'], nameMatches: 'tenant-.*', hasLabels: [{ name: 'team', value: 'blue' }] });
    expect(admits(p, ns('tenant-a', { team: 'blue' }))).toBe(true);
    // names ok, pattern ok, label missing
    expect(admits(p, ns('tenant-b'))).toBe(false);
    // names ok, label ok, pattern fails
    expect(admits(p, ns('other', { team: 'blue' }))).toBe(false);
    // pattern ok, label ok, names fail
    expect(admits(p, ns('tenant-c', { team: 'blue' }))).toBe(false);
  });

  it('treats empty names, empty pattern and empty hasLabels as absent constraints', () => {
    expect(admits(policy({ names: [], nameMatches: '', hasLabels: [] }), ns('anyone'))).toBe(true);
  });
});

describe('tenantNamespace', () => {
  it('takes the labels of the namespace object, or none when it is unknown', () => {
    expect(tenantNamespace({ metadata: { name: 'tenant-a', labels: { team: 'blue' } } }, 'tenant-a')).toEqual({ name: 'tenant-a', labels: { team: 'blue' } });
    expect(tenantNamespace(undefined, 'tenant-a')).toEqual({ name: 'tenant-a', labels: {} });
    const unknown = tenantNamespace(undefined, 'tenant-a');
    expect(admits(policy({ hasLabels: [{ name: 'team' }] }), unknown)).toBe(false);
  });
});

describe('admittingPolicies', () => {
  it('groups the admitting policies by the host namespace they govern', () => {
    const a1 = policy({ names: ['tenant-a'] }, 'infra-1');
    const a2 = policy({}, 'infra-1');
    const deny = policy({ names: ['tenant-b'] }, 'infra-2');
    const a3 = policy({ nameMatches: 'tenant-.' }, 'infra-3');
    const omitted = policy(undefined, 'infra-4');
    const result = admittingPolicies([a1, deny, a2, a3, omitted], ns('tenant-a'));
    expect([...result.keys()].sort()).toEqual(['infra-1', 'infra-3']);
    expect(result.get('infra-1')).toEqual([a1, a2]);
    expect(result.get('infra-3')).toEqual([a3]);
    expect(result.has('infra-2')).toBe(false);
    expect(result.has('infra-4')).toBe(false);
  });

  it('ignores policies without a namespace and returns nothing when none admits', () => {
    const clusterScoped: HostDeployPolicy = { metadata: { name: 'p' }, spec: { hostClaimNamespaces: {} } };
    expect(admittingPolicies([clusterScoped], ns('tenant-a')).size).toBe(0);
    expect(admittingPolicies([policy({ names: ['tenant-b'] })], ns('tenant-a')).size).toBe(0);
    expect(admittingPolicies([], ns('tenant-a')).size).toBe(0);
  });
});

describe('allowsDetaching', () => {
  it('is true only when some policy carries the annotation with value "true"', () => {
    expect(allowsDetaching([])).toBe(false);
    expect(allowsDetaching([policy({})])).toBe(false);
    expect(allowsDetaching([policy({}, 'infra', { [allowsDetachingAnnotation]: 'false' })])).toBe(false);
    expect(allowsDetaching([policy({}, 'infra', { [allowsDetachingAnnotation]: 'yes' })])).toBe(false);
    expect(allowsDetaching([policy({}, 'infra', { [allowsDetachingAnnotation]: '' })])).toBe(false);
    expect(allowsDetaching([policy({}), policy({}, 'infra', { [allowsDetachingAnnotation]: 'true' })])).toBe(true);
  });
});

describe('sharesLabelKey', () => {
  it('matches the shared-labels pattern against the whole key', () => {
    const p = policy({}, 'infra', { [sharedLabelsAnnotation]: 'example.com/.*|rack' });
    expect(sharesLabelKey([p], 'example.com/gpu')).toBe(true);
    expect(sharesLabelKey([p], 'rack')).toBe(true);
    expect(sharesLabelKey([p], 'rack-id')).toBe(false);
    expect(sharesLabelKey([p], 'x.example.com/gpu')).toBe(false);
    expect(sharesLabelKey([policy({})], 'rack')).toBe(false);
    expect(sharesLabelKey([policy({}, 'infra', { [sharedLabelsAnnotation]: '' })], '')).toBe(false);
    expect(sharesLabelKey([policy({}, 'infra', { [sharedLabelsAnnotation]: '(' })], '(')).toBe(false);
  });
});
