import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { bookkeeping, virtualUid } from '../../../../src/backing/storage-mapping.js';
import { bindingAnnotations, claimOf, hasReleaseFinalizer, releaseFinalizer, releaseLabel, releasingPoolHosts } from '../../../../src/controllers/binder/claim.js';
import type { BareMetalHost } from '../../../../src/metal3/types.js';
import { hostClaimStorageMapping } from '../../../../src/resources/hostclaim/storage.js';
import type { RecordIdentity } from '../../../../src/tenancy/host-references.js';
import { claim, host, record } from './fixtures.js';

describe('claimOf', () => {
  it('reads the tenant namespace, name and virtual uid from the bookkeeping', () => {
    const claim = claimOf(record({ namespace: 'tenant-b', name: 'db-1', uid: 'rec-1', generation: 4, spec: { poweredOn: true, nodeReuse: 'pool' } }));
    expect(claim).toBeDefined();
    expect(claim).toMatchObject({
      namespace: 'tenant-b',
      name: 'db-1',
      uid: virtualUid('rec-1'),
      generation: 4,
      identity: { namespace: 'hostclaim-system', name: 'tenant-b.db-1', uid: 'rec-1' },
      spec: { poweredOn: true, nodeReuse: 'pool' },
      status: {},
      deleting: false,
      chosenHost: undefined,
      ended: undefined,
    });
    expect(claim?.uid).not.toBe('rec-1');
  });

  it('matches what the storage mapping writes', () => {
    const mapping = hostClaimStorageMapping('hostclaim-system');
    const backing = mapping.toBacking({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'web-0', annotations: { note: 'n' } }, spec: {} }, 'tenant-a');
    const stored: ApiObject = { ...backing, metadata: { ...backing.metadata, uid: 'u-1' } };
    const claim = claimOf(stored);
    expect(claim?.namespace).toBe('tenant-a');
    expect(claim?.name).toBe('web-0');
    expect(claim?.identity).toEqual({ namespace: 'hostclaim-system', name: 'tenant-a.web-0', uid: 'u-1' });
    expect(claim?.uid).toBe(mapping.toVirtual(stored)?.metadata.uid);
    expect(claim?.annotations['note']).toBe('n');
  });

  it('reads the binding state and deletion', () => {
    const claim = claimOf(
      record({
        annotations: { [bindingAnnotations.host]: 'infra/host-3', [bindingAnnotations.ended]: 'BindingEnded', 'reboot.metal3.io': '' },
        finalizers: [releaseFinalizer],
        deletionTimestamp: '2025-01-01T00:00:00Z',
        status: { poweredOn: true },
      }),
    );
    expect(claim?.chosenHost).toBe('infra/host-3');
    expect(claim?.ended).toBe('BindingEnded');
    expect(claim?.deleting).toBe(true);
    expect(claim?.status).toEqual({ poweredOn: true });
    expect(claim?.annotations['reboot.metal3.io']).toBe('');
    expect(claim === undefined ? false : hasReleaseFinalizer(claim)).toBe(true);
  });

  it('has no release finalizer unless it is there', () => {
    const claim = claimOf(record({ finalizers: ['example.com/other'] }));
    expect(claim === undefined ? true : hasReleaseFinalizer(claim)).toBe(false);
  });

  it('treats a non-object spec or status as empty', () => {
    const base = record();
    expect(claimOf({ ...base, spec: 'nonsense', status: null })).toMatchObject({ spec: {}, status: {} });
    const { spec: _spec, ...noSpec } = base;
    expect(claimOf(noSpec)?.spec).toEqual({});
  });

  it('returns undefined for records without bookkeeping, uid or name', () => {
    const base = record();
    const without = (mutate: (r: ApiObject) => void): ApiObject => {
      const copy = structuredClone(base);
      mutate(copy);
      return copy;
    };
    expect(claimOf(base)).toBeDefined();
    expect(
      claimOf(
        without((r) => {
          Reflect.deleteProperty(r.metadata.labels ?? {}, bookkeeping.namespaceLabel);
        }),
      ),
    ).toBeUndefined();
    expect(
      claimOf(
        without((r) => {
          Reflect.deleteProperty(r.metadata.annotations ?? {}, bookkeeping.nameAnnotation);
        }),
      ),
    ).toBeUndefined();
    expect(
      claimOf(
        without((r) => {
          Reflect.deleteProperty(r.metadata, 'uid');
        }),
      ),
    ).toBeUndefined();
    expect(
      claimOf(
        without((r) => {
          Reflect.deleteProperty(r.metadata, 'name');
        }),
      ),
    ).toBeUndefined();
    expect(claimOf({ metadata: { name: 'x', uid: 'u' } })).toBeUndefined();
  });

  it('returns undefined for records whose bookkeeping disagrees with their name, as the API does', () => {
    // The API (StorageMapping.toVirtual) refuses such a record; the binder must not act on it either,
    // or it would bind hosts and copy Secrets for a claim no tenant can see, in another tenant's name.
    const forged = record({ namespace: 'tenant-a', name: 'web-0' });
    forged.metadata.labels = { ...forged.metadata.labels, [bookkeeping.namespaceLabel]: 'tenant-b' };
    expect(hostClaimStorageMapping('hostclaim-system').toVirtual(forged)).toBeUndefined();
    expect(claimOf(forged)).toBeUndefined();
  });
});

describe('releaseLabel', () => {
  it('is the pool label of the claim\'s namespace and pool, and none without a pool', () => {
    expect(releaseLabel(claim({ namespace: 'tenant-b', spec: { nodeReuse: 'db' } }))).toBe('tenant-b.db');
    expect(releaseLabel(claim({ spec: { nodeReuse: '' } }))).toBeUndefined();
    expect(releaseLabel(claim())).toBeUndefined();
  });
});

describe('releasingPoolHosts', () => {
  const deleted = '2025-01-01T00:00:00Z';
  const consumer = (name: string, uid: string): { spec: { consumerRef: { apiVersion: string; kind: string; namespace: string; name: string; uid: string } } } => ({
    spec: { consumerRef: { apiVersion: 'infra.tenancy.metal3.io/v1alpha1', kind: 'HostClaimRecord', namespace: 'hostclaim-system', name, uid } },
  });
  const records = [
    record({ namespace: 'tenant-a', name: 'db-0', uid: 'u-a', spec: { nodeReuse: 'db' }, finalizers: [releaseFinalizer], deletionTimestamp: deleted }),
    record({ namespace: 'tenant-b', name: 'db-0', uid: 'u-b', spec: { nodeReuse: 'db' }, finalizers: [releaseFinalizer] }),
    record({ namespace: 'tenant-b', name: 'plain', uid: 'u-p', finalizers: [releaseFinalizer], deletionTimestamp: deleted }),
    record({ namespace: 'tenant-b', name: 'again', uid: 'u-new', spec: { nodeReuse: 'db' }, finalizers: [releaseFinalizer], deletionTimestamp: deleted }),
  ];

  it('maps each host bound to a deleted pool claim to the label its release puts on it', () => {
    const hosts = [
      host({ name: 'r-0', ...consumer('tenant-a.db-0', 'u-a') }),
      // Bound to a pool claim that is not being deleted.
      host({ name: 'r-1', ...consumer('tenant-b.db-0', 'u-b') }),
      // Bound to a deleted claim without a pool: released unlabelled.
      host({ name: 'r-2', ...consumer('tenant-b.plain', 'u-p') }),
      // Bound to an earlier claim of that name (another uid): an orphan, not this claim's host.
      host({ name: 'r-3', ...consumer('tenant-b.again', 'u-old') }),
      // Bound to a record the cache does not have, and free.
      host({ name: 'r-4', ...consumer('tenant-b.gone', 'u-g') }),
      host({ name: 'r-5', spec: { consumerRef: null } }),
    ];
    const naming = (identity: RecordIdentity): BareMetalHost[] =>
      hosts.filter((h) => h.spec.consumerRef?.namespace === identity.namespace && h.spec.consumerRef.name === identity.name);
    expect(releasingPoolHosts(records, naming)).toEqual(new Map([['infra/r-0', 'tenant-a.db']]));
  });

  it('finds nothing without deleted pool claims', () => {
    expect(releasingPoolHosts(records.slice(1, 3), () => [host({ name: 'r-1', ...consumer('tenant-b.db-0', 'u-b') })])).toEqual(new Map());
  });
});
