import { describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { virtualUid } from '../../../../src/backing/storage-mapping.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../../../src/metal3/types.js';
import { recordConsumerRef } from '../../../../src/tenancy/host-references.js';
import { sharedInventoryAnnotation, sharedLabelsAnnotation } from '../../../../src/tenancy/policy.js';
import {
  bootMacAddressAnnotation,
  claimNamespacesOf,
  hardwareData,
  hardwareDataUid,
  isVisible,
  sharedLabels,
  tenantView,
} from '../../../../src/resources/hardwaredata/projection.js';

const specSchema = loadSchemaSource().resolvedObjectSchema('HardwareDataSpec');

const inventory = {
  systemVendor: { manufacturer: 'Dell', productName: 'R650', serialNumber: 'SN1' },
  cpu: { arch: 'x86_64', count: 32, model: 'Xeon', clockMegahertz: 2100.5, flags: ['avx'] },
  ramMebibytes: 65536,
  nics: [{ name: 'eno1', mac: '00:11:22:33:44:55', ip: '192.0.2.10', speedGbps: 25, pxe: true }],
  storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 960_000_000_000 }],
  hostname: 'node-1',
};

function host(name: string, extra: { labels?: Record<string, string>; consumerRef?: BareMetalHost['spec']['consumerRef']; deleting?: boolean; hardware?: Record<string, unknown> } = {}): BareMetalHost {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name,
      namespace: 'infra',
      uid: `uid-${name}`,
      resourceVersion: '7',
      creationTimestamp: '2026-01-02T03:04:05Z',
      labels: extra.labels ?? {},
      annotations: { 'baremetalhost.metal3.io/status': '{"goodCredentials":{}}' },
      ...(extra.deleting === true ? { deletionTimestamp: '2026-02-01T00:00:00Z' } : {}),
    },
    spec: {
      online: true,
      bootMACAddress: '00:11:22:33:44:55',
      bmc: { address: 'redfish://10.0.0.1/redfish/v1/Systems/1', credentialsName: 'node-1-bmc-secret' },
      ...(extra.consumerRef === undefined ? {} : { consumerRef: extra.consumerRef }),
    },
    status: {
      hardware: extra.hardware ?? inventory,
      errorMessage: 'BMC 10.0.0.1 unreachable',
      provisioning: { state: 'available', ID: 'ironic-node-uuid' },
      goodCredentials: { credentials: { name: 'node-1-bmc-secret', namespace: 'infra' } },
    },
  };
}

function namespace(name: string, labels: Record<string, string> = {}): Namespace {
  return { metadata: { name, labels } };
}

function policy(names: string[] | undefined, annotations: Record<string, string> = {}): HostDeployPolicy {
  return {
    metadata: { name: 'p', namespace: 'infra', annotations },
    spec: { hostClaimNamespaces: names === undefined ? {} : { names } },
  };
}

function claim(namespaceName: string, recordUid: string): ApiObject {
  return { metadata: { name: 'web-0', namespace: namespaceName, uid: virtualUid(recordUid) } };
}

const boundToRecord = (recordUid: string) => recordConsumerRef({ namespace: 'hostclaim-system', name: 'x.web-0', uid: recordUid });

function view(tenant: string, policies: HostDeployPolicy[], claims: ApiObject[] = []) {
  return tenantView(namespace(tenant), policies, claimNamespacesOf(claims));
}

describe('visibility', () => {
  const onlyA = [policy(['tenant-a'])];

  it('shows a free host to the namespaces a policy of its namespace admits, and only to them', () => {
    expect(isVisible(host('h1'), view('tenant-a', onlyA))).toBe(true);
    expect(isVisible(host('h1'), view('tenant-b', onlyA))).toBe(false);
    expect(isVisible(host('h1'), view('tenant-a', []))).toBe(false);
  });

  it('follows the policy semantics: hostClaimNamespaces {} admits all, omitted admits none', () => {
    expect(isVisible(host('h1'), view('tenant-b', [policy(undefined)]))).toBe(true);
    expect(isVisible(host('h1'), view('tenant-b', [{ metadata: { name: 'p', namespace: 'infra' }, spec: {} }]))).toBe(false);
  });

  it('ignores policies of other namespaces', () => {
    const elsewhere: HostDeployPolicy = { ...policy(['tenant-a']), metadata: { name: 'p', namespace: 'other-infra' } };
    expect(isVisible(host('h1'), view('tenant-a', [elsewhere]))).toBe(false);
  });

  it('hides a free host that is being deleted', () => {
    expect(isVisible(host('h1', { deleting: true }), view('tenant-a', onlyA))).toBe(false);
  });

  it("hides a host bound to another tenant's claim, even from an admitted namespace", () => {
    const bound = host('h1', { consumerRef: boundToRecord('rec-b') });
    expect(isVisible(bound, view('tenant-a', onlyA, [claim('tenant-b', 'rec-b')]))).toBe(false);
    expect(isVisible(bound, view('tenant-b', [], [claim('tenant-b', 'rec-b')]))).toBe(true);
  });

  it("keeps showing the tenant its own bound host after the policy is revoked", () => {
    const bound = host('h1', { consumerRef: boundToRecord('rec-a') });
    expect(isVisible(bound, view('tenant-a', [], [claim('tenant-a', 'rec-a')]))).toBe(true);
  });

  it('hides a host bound to a claim that no longer exists, or to a consumer that is not a claim', () => {
    expect(isVisible(host('h1', { consumerRef: boundToRecord('gone') }), view('tenant-a', onlyA))).toBe(false);
    const machine = host('h1', { consumerRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'Metal3Machine', namespace: 'tenant-a', name: 'm' } });
    expect(isVisible(machine, view('tenant-a', onlyA))).toBe(false);
  });
});

describe('label sharing', () => {
  const labels = {
    'example.com/rack': 'r1',
    'example.com/rack-extra': 'x',
    role: 'worker',
    'cluster.x-k8s.io/cluster-name': 'tenant-b-cluster',
    'infrastructure.cluster.x-k8s.io/node-reuse': 'tenant-b.pool',
    'metal3.io/uuid': 'u',
    'capi.metal3.io/unhealthy': '',
    'tenancy.metal3.io/x': 'y',
  };

  it('copies nothing without a pattern', () => {
    expect(sharedLabels(labels, [policy(['tenant-a'])])).toEqual({});
  });

  it('matches the whole key (the pattern is anchored)', () => {
    const shared = sharedLabels(labels, [policy(['tenant-a'], { [sharedLabelsAnnotation]: 'example.com/rack' })]);
    expect(shared).toEqual({ 'example.com/rack': 'r1' });
  });

  it('never copies infrastructure domains, whatever the pattern', () => {
    const shared = sharedLabels(labels, [policy(['tenant-a'], { [sharedLabelsAnnotation]: '.*' })]);
    expect(shared).toEqual({ 'example.com/rack': 'r1', 'example.com/rack-extra': 'x', role: 'worker' });
  });

  it('unites the patterns of every admitting policy and ignores invalid ones', () => {
    const shared = sharedLabels(labels, [
      policy(['tenant-a'], { [sharedLabelsAnnotation]: 'role' }),
      policy(['tenant-a'], { [sharedLabelsAnnotation]: 'example\\.com/rack' }),
      policy(['tenant-a'], { [sharedLabelsAnnotation]: '(' }),
    ]);
    expect(shared).toEqual({ 'example.com/rack': 'r1', role: 'worker' });
  });

  it('uses only the policies that admit the tenant', () => {
    const policies = [policy(['tenant-b'], { [sharedLabelsAnnotation]: '.*' }), policy(['tenant-a'])];
    expect(hardwareData(host('h1', { labels }), view('tenant-a', policies), specSchema)?.metadata.labels).toBeUndefined();
  });
});

describe('the HardwareData object', () => {
  const policies = [policy(['tenant-a'], { [sharedLabelsAnnotation]: 'role' })];

  it('is named after the host, lives in the tenant namespace and carries nothing of the host but what is allowed', () => {
    const object = hardwareData(host('h1', { labels: { role: 'worker' } }), view('tenant-a', policies), specSchema);
    expect(object).toEqual({
      apiVersion: 'tenancy.metal3.io/v1alpha1',
      kind: 'HardwareData',
      metadata: {
        name: 'infra.h1',
        namespace: 'tenant-a',
        uid: hardwareDataUid('tenant-a', 'uid-h1'),
        creationTimestamp: '2026-01-02T03:04:05Z',
        labels: { role: 'worker' },
        annotations: { 'tenancy.metal3.io/boot-mac-address': '00:11:22:33:44:55' },
      },
      // The chassis serial number is withheld by default (inventory.ts).
      spec: { hardware: { ...inventory, systemVendor: { manufacturer: 'Dell', productName: 'R650' } } },
    });
  });

  it('carries the boot MAC address as an annotation only when the host has a well-formed one', () => {
    const withMac = (bootMACAddress: unknown): BareMetalHost => {
      const h = host('h1');
      return { ...h, spec: { ...h.spec, bootMACAddress } };
    };
    const annotations = (h: BareMetalHost): unknown => hardwareData(h, view('tenant-a', policies), specSchema)?.metadata.annotations;
    expect(annotations(withMac('AA-bb-CC-dd-EE-ff'))).toEqual({ [bootMacAddressAnnotation]: 'AA-bb-CC-dd-EE-ff' });
    for (const bad of [undefined, '', '00:11:22:33:44', '00:11:22:33:44:55:66', 'redfish://10.0.0.1', 42]) {
      expect(annotations(withMac(bad)), String(bad)).toBeUndefined();
    }
  });

  it('has a stable uid per tenant and host, never the host uid', () => {
    const uid = hardwareDataUid('tenant-a', 'uid-h1');
    expect(uid).toBe(hardwareDataUid('tenant-a', 'uid-h1'));
    expect(uid).not.toBe(hardwareDataUid('tenant-b', 'uid-h1'));
    expect(uid).not.toBe('uid-h1');
    expect(uid).not.toBe(virtualUid('uid-h1'));
    expect(uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('keeps the uids every release has served (they are part of the API), whatever the derivation or its cache', () => {
    // Computed by the first derivation (the SHA-1 digest's bytes, version and variant bits set on the bytes); one per variant digit.
    const served: [string, string, string][] = [
      ['tenant-a', '0c1a7c9e-3a1b-4f0e-9d2c-5b6a7e8f9a01', '18a0aa26-94bf-56ae-9c51-a4411a95106f'],
      ['tenant-9', 'h', 'b6ed13c5-0260-5cb5-af16-5d6c50899e19'],
      ['tenant-7', 'h', '8e65970b-5bc5-532a-b679-19fbc24f97be'],
      ['tenant-11', 'h', '69fdad39-629e-5f0c-8c74-1737f6998544'],
      ['tenant-12', 'h', 'a6580cd0-527e-52eb-91ad-ed723421358f'],
    ];
    for (const [tenant, hostUid, uid] of served) expect(hardwareDataUid(tenant, hostUid)).toBe(uid);
    // Past the hosts whose uids are kept, and back: derived again, the same.
    for (let i = 0; i < 20; i++) hardwareDataUid('tenant-a', `other-host-${i}`);
    for (const [tenant, hostUid, uid] of served) expect(hardwareDataUid(tenant, hostUid)).toBe(uid);
  });

  it('shares what tenants admitted by the same policies see, and nothing that differs between them', () => {
    const shared = [policy(undefined, { [sharedLabelsAnnotation]: 'role' })];
    const labelled = host('h1', { labels: { role: 'worker', rack: 'r1' } });
    const a = hardwareData(labelled, tenantView(namespace('tenant-a'), shared, claimNamespacesOf([])), specSchema, '7');
    const b = hardwareData(labelled, tenantView(namespace('tenant-b'), shared, claimNamespacesOf([])), specSchema, '8');
    expect(a?.metadata).toMatchObject({ namespace: 'tenant-a', uid: hardwareDataUid('tenant-a', 'uid-h1'), resourceVersion: '7', labels: { role: 'worker' } });
    expect(b?.metadata).toMatchObject({ namespace: 'tenant-b', uid: hardwareDataUid('tenant-b', 'uid-h1'), resourceVersion: '8', labels: { role: 'worker' } });
    // Another class (other policies) over the same host version gets its own labels and inventory.
    const rackOnly = [policy(undefined, { [sharedLabelsAnnotation]: 'rack', [sharedInventoryAnnotation]: 'serialNumbers' })];
    const c = hardwareData(labelled, tenantView(namespace('tenant-c'), rackOnly, claimNamespacesOf([])), specSchema);
    expect(c?.metadata.labels).toEqual({ rack: 'r1' });
    expect(c?.['spec']).toEqual({ hardware: inventory });
    expect(a?.['spec']).not.toEqual(c?.['spec']);
    // A new host version is projected anew.
    const relabelled = { ...labelled, metadata: { ...labelled.metadata, labels: { role: 'storage' } } };
    expect(hardwareData(relabelled, tenantView(namespace('tenant-a'), shared, claimNamespacesOf([])), specSchema)?.metadata.labels).toEqual({ role: 'storage' });
  });

  it('falls back to a digest name beyond 253 characters', () => {
    const long = host('h'.repeat(250));
    expect(hardwareData(long, view('tenant-a', policies), specSchema)?.metadata.name).toMatch(/^h-[0-9a-f]{64}$/);
  });

  it('prunes status.hardware to the schema: no BMC address, credentials or other junk survives', () => {
    const junk = {
      ...inventory,
      bmc: { address: 'redfish://10.0.0.1', credentialsName: 'node-1-bmc-secret' },
      systemVendor: { manufacturer: { address: 'redfish://10.0.0.1' }, productName: 'R650', credentialsName: 'node-1-bmc-secret' },
      nics: [{ name: 'eno1', secret: 'node-1-bmc-secret' }, 'redfish://10.0.0.1'],
      cpu: { arch: 'x86_64', count: '32' },
      ramMebibytes: 1.5,
    };
    const object = hardwareData(host('h1', { hardware: junk }), view('tenant-a', policies), specSchema);
    expect(object?.['spec']).toEqual({ hardware: { systemVendor: { productName: 'R650' }, nics: [{ name: 'eno1' }], cpu: { arch: 'x86_64' }, storage: inventory.storage, hostname: 'node-1' } });
    const text = JSON.stringify(object);
    for (const secret of ['10.0.0.1', 'bmc-secret', 'ironic-node-uuid', 'unreachable', 'goodCredentials', 'consumerRef', 'baremetalhost.metal3.io']) {
      expect(text).not.toContain(secret);
    }
  });

  it('has an empty spec before inspection', () => {
    const uninspected: BareMetalHost = { ...host('h1'), status: {} };
    expect(hardwareData(uninspected, view('tenant-a', policies), specSchema)?.['spec']).toEqual({});
  });
});
