import { describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import type { ProbeScope } from '../../../../src/backing/consistent-read.js';
import { bookkeeping, virtualUid } from '../../../../src/backing/storage-mapping.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../../../src/metal3/types.js';
import { HardwareDataModel } from '../../../../src/resources/hardwaredata/model.js';
import { readObject, type ObjectInput, type ObjectInputs } from '../../../../src/resources/hardwaredata/object-read.js';

const specSchema = loadSchemaSource().resolvedObjectSchema('HardwareDataSpec');

const host = (name: string, resourceVersion: string, consumerRef?: BareMetalHost['spec']['consumerRef']): BareMetalHost => ({
  metadata: { namespace: 'infra', name, uid: `uid-${name}`, resourceVersion },
  spec: consumerRef === undefined ? {} : { consumerRef },
});
const namespace = (name: string, resourceVersion: string, labels: Record<string, string> = {}): Namespace => ({ metadata: { name, resourceVersion, labels } });
const policy: HostDeployPolicy = { metadata: { namespace: 'infra', name: 'gold', resourceVersion: '9' }, spec: { hostClaimNamespaces: { hasLabels: [{ name: 'tier', value: 'gold' }] } } };
const record: ApiObject = {
  apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
  kind: 'HostClaimRecord',
  metadata: { namespace: 'hostclaim-system', name: 'tenant-a.web', uid: 'record-uid', labels: { [bookkeeping.namespaceLabel]: 'tenant-a' }, annotations: { [bookkeeping.nameAnnotation]: 'web' } },
};
const boundRef = { apiVersion: 'infra.tenancy.metal3.io/v1alpha1', kind: 'HostClaimRecord', namespace: 'hostclaim-system', name: 'tenant-a.web', uid: 'record-uid' };

/** The feed's caches as the read sees them, every fence recorded; `stale` inputs cannot prove themselves current. */
function inputs(state: { hosts: BareMetalHost[]; namespaces: Namespace[]; claims?: boolean; stale?: ObjectInput[] }): ObjectInputs & { fenced: string[] } {
  const fenced: string[] = [];
  return {
    fenced,
    // The model knows nothing yet: the read must not depend on it for dotted names.
    model: new HardwareDataModel(specSchema),
    host: (ns, name) => state.hosts.find((h) => h.metadata.namespace === ns && h.metadata.name === name),
    namespace: (name) => state.namespaces.find((n) => n.metadata.name === name),
    policiesIn: (ns) => [policy].filter((p) => p.metadata.namespace === ns),
    record: (reference) => (state.claims === true && reference.name === record.metadata.name ? record : undefined),
    hasClaim: (ns, name, uid) => state.claims === true && ns === 'tenant-a' && name === 'web' && uid === virtualUid('record-uid'),
    fence: (input: ObjectInput, scope: ProbeScope) => {
      fenced.push(`${input}: ${scope.fieldSelector ?? ''}`);
      return Promise.resolve(!(state.stale ?? []).includes(input));
    },
  };
}

const gold = namespace('tenant-a', '4', { tier: 'gold' });

describe('a consistent HardwareData GET fenced by its own inputs', () => {
  it('probes only the host, the tenant namespace and the policies of the host namespace, and computes the object from the caches', async () => {
    const read = inputs({ hosts: [host('h1', '7')], namespaces: [gold] });
    const result = await readObject(read, 'tenant-a', 'infra.h1');
    expect([result?.object?.metadata.namespace, result?.object?.metadata.name, result?.object?.metadata.resourceVersion]).toEqual(['tenant-a', 'infra.h1', '9']);
    expect(read.fenced).toEqual(['hosts: metadata.namespace=infra,metadata.name=h1', 'namespaces: metadata.name=tenant-a', 'policies: metadata.namespace=infra']);
  });

  it('answers not found for a tenant no policy admits, a missing host and a missing tenant namespace', async () => {
    const silver = namespace('tenant-b', '5', { tier: 'silver' });
    const read = inputs({ hosts: [host('h1', '7')], namespaces: [gold, silver] });
    expect(await readObject(read, 'tenant-b', 'infra.h1')).toEqual({ object: undefined });
    expect(await readObject(read, 'tenant-a', 'infra.h2')).toEqual({ object: undefined });
    expect(await readObject(read, 'tenant-c', 'infra.h1')).toEqual({ object: undefined });
  });

  it("shows a bound host to its claim's namespace only, after proving the claim record current", async () => {
    const bound = host('h1', '12', boundRef);
    const read = inputs({ hosts: [bound], namespaces: [gold, namespace('tenant-b', '5', { tier: 'gold' })], claims: true });
    expect((await readObject(read, 'tenant-a', 'infra.h1'))?.object?.metadata.name).toBe('infra.h1');
    expect(read.fenced).toContain('claims: metadata.name=tenant-a.web');
    expect(await readObject(read, 'tenant-b', 'infra.h1')).toEqual({ object: undefined });
    // The claim is gone (the record no longer in the cache): nobody sees the host.
    expect(await readObject(inputs({ hosts: [bound], namespaces: [gold] }), 'tenant-a', 'infra.h1')).toEqual({ object: undefined });
  });

  it('leaves the read to the whole-input path when a scope cannot be proven current, or a digest name is not known', async () => {
    expect(await readObject(inputs({ hosts: [host('h1', '7')], namespaces: [gold], stale: ['namespaces'] }), 'tenant-a', 'infra.h1')).toBeUndefined();
    expect(await readObject(inputs({ hosts: [host('h1', '7', boundRef)], namespaces: [gold], claims: true, stale: ['claims'] }), 'tenant-a', 'infra.h1')).toBeUndefined();
    expect(await readObject(inputs({ hosts: [], namespaces: [gold] }), 'tenant-a', `${'x'.repeat(20)}-a1b2c3`)).toBeUndefined();
  });
});
