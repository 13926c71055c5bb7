import { describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../../../src/metal3/types.js';
import { recordConsumerRef } from '../../../../src/tenancy/host-references.js';
import { virtualUid } from '../../../../src/backing/storage-mapping.js';
import { HardwareDataModel } from '../../../../src/resources/hardwaredata/model.js';

const specSchema = loadSchemaSource().resolvedObjectSchema('HardwareDataSpec');

function host(namespace: string, name: string, rv: number, consumerRef?: BareMetalHost['spec']['consumerRef']): BareMetalHost {
  return {
    metadata: { namespace, name, uid: `uid-${namespace}-${name}`, resourceVersion: String(rv), labels: { rack: 'r1' } },
    spec: { ...(consumerRef === undefined ? {} : { consumerRef }) },
    status: { hardware: { ramMebibytes: 1024, serial: 'not in the schema' } },
  };
}

function namespace(name: string, rv: number, labels: Record<string, string> = {}): Namespace {
  return { metadata: { name, resourceVersion: String(rv), labels } };
}

function policy(hostNamespace: string, name: string, rv: number, constraints: NonNullable<HostDeployPolicy['spec']>['hostClaimNamespaces']): HostDeployPolicy {
  return { metadata: { namespace: hostNamespace, name, resourceVersion: String(rv), annotations: { 'tenancy.metal3.io/shared-labels': 'rack' } }, spec: { hostClaimNamespaces: constraints } };
}

function model(): HardwareDataModel {
  const m = new HardwareDataModel(specSchema);
  m.visibility.replaceNamespaces([namespace('tenant', 5), namespace('tenant-a', 6, { team: 'blue' }), namespace('tenant-b', 7, { team: 'blue' }), namespace('other', 8)]);
  m.visibility.replacePolicies([policy('infra', 'blue', 30, { hasLabels: [{ name: 'team', value: 'blue' }] }), policy('infra', 'tenant', 20, { names: ['tenant'] })]);
  m.replaceHosts([host('infra', 'h1', 40), host('infra', 'h2', 10), host('pool', 'p1', 50)]);
  return m;
}

const keys = (objects: readonly { metadata: { namespace?: string; name?: string; resourceVersion?: string } }[]): string[] =>
  objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}`);

describe('HardwareDataModel', () => {
  it('projects each tenant namespace from its class, with the newest input revision as resourceVersion', () => {
    const m = model();
    // h2 (10) seen by tenant-a: namespace 6, policy blue 30 → 30; h1: host 40.
    expect(keys(m.list('tenant-a'))).toEqual(['tenant-a/infra.h1@40', 'tenant-a/infra.h2@30']);
    expect(keys(m.list('tenant'))).toEqual(['tenant/infra.h1@40', 'tenant/infra.h2@20']);
    expect(keys(m.list('other'))).toEqual([]);
    expect(m.get('tenant-b', 'infra.h2')?.metadata.labels).toEqual({ rack: 'r1' });
    expect(m.get('tenant-b', 'infra.h2')?.['spec']).toEqual({ hardware: { ramMebibytes: 1024 } });
    expect(m.get('other', 'infra.h2')).toBeUndefined();
    expect(m.get('tenant-a', 'pool.p1')).toBeUndefined();
  });

  it('lists all namespaces in storage-key order, page by page', () => {
    const m = model();
    const all = keys(m.list());
    expect(all).toEqual(['tenant-a/infra.h1@40', 'tenant-a/infra.h2@30', 'tenant-b/infra.h1@40', 'tenant-b/infra.h2@30', 'tenant/infra.h1@40', 'tenant/infra.h2@20']);
    expect(keys([...m.listFrom({ namespace: 'tenant-b', name: 'infra.h1' })])).toEqual(all.slice(3));
    expect(keys([...m.listFrom({ namespace: 'tenant-a', name: 'infra.h2' })])).toEqual(all.slice(2));
    expect(m.count()).toBe(6);
  });

  it('shows a bound host only to the namespace of its claim, whatever the policies', () => {
    const m = model();
    const record = { namespace: 'hostclaim-system', name: 'other.c', uid: 'record-uid' };
    m.setClaim(virtualUid(record.uid), 'other');
    m.setHost('infra/h1', host('infra', 'h1', 41, recordConsumerRef(record)));
    expect(keys(m.list('other'))).toEqual(['other/infra.h1@41']);
    expect(keys(m.list('tenant-a'))).toEqual(['tenant-a/infra.h2@30']);
    expect([...m.tenantsOf(m.host('infra/h1') as BareMetalHost)]).toEqual(['other']);
    expect(m.hostsBoundTo(virtualUid(record.uid)).map((h) => h.metadata.name)).toEqual(['h1']);
    m.setClaim(virtualUid(record.uid), undefined);
    expect(keys(m.list('other'))).toEqual([]);
  });

  it('groups namespaces admitted by the same policies into one class, recomputed on label changes', () => {
    const m = model();
    expect(m.visibility.admitting('tenant-a')).toBe(m.visibility.admitting('tenant-b'));
    expect([...m.visibility.namespacesAdmittedTo('infra')].sort()).toEqual(['tenant', 'tenant-a', 'tenant-b']);
    expect(m.visibility.setNamespace('tenant-b', namespace('tenant-b', 9))).toBe(true);
    expect(m.visibility.setNamespace('tenant-b', namespace('tenant-b', 10, { other: 'x' }))).toBe(false);
    expect([...m.visibility.namespacesAdmittedTo('infra')].sort()).toEqual(['tenant', 'tenant-a']);
    expect(m.visibility.setPolicy('infra/tenant', undefined)).toEqual(new Set(['tenant']));
  });
});
