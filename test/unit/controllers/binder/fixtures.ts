/** Shared builders for the binder's unit tests: records as kube stores them, and hosts. */
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { bookkeeping } from '../../../../src/backing/storage-mapping.js';
import { claimOf, type Claim, type HostClaimSpec, type HostClaimStatus } from '../../../../src/controllers/binder/claim.js';
import type { BareMetalHost } from '../../../../src/metal3/types.js';

export interface RecordOptions {
  readonly namespace?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly spec?: HostClaimSpec;
  readonly status?: HostClaimStatus;
  readonly annotations?: Record<string, string>;
  readonly finalizers?: string[];
  readonly deletionTimestamp?: string;
}

export function record(options: RecordOptions = {}): ApiObject {
  const namespace = options.namespace ?? 'tenant-a';
  const name = options.name ?? 'web-0';
  return {
    apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
    kind: 'HostClaimRecord',
    metadata: {
      name: `${namespace}.${name}`,
      namespace: 'hostclaim-system',
      uid: options.uid ?? 'record-uid',
      resourceVersion: '7',
      generation: options.generation ?? 1,
      labels: { [bookkeeping.namespaceLabel]: namespace },
      annotations: { ...options.annotations, [bookkeeping.nameAnnotation]: name },
      ...(options.finalizers === undefined ? {} : { finalizers: options.finalizers }),
      ...(options.deletionTimestamp === undefined ? {} : { deletionTimestamp: options.deletionTimestamp }),
    },
    spec: options.spec ?? { poweredOn: false },
    ...(options.status === undefined ? {} : { status: options.status }),
  };
}

export function claim(options: RecordOptions = {}): Claim {
  const result = claimOf(record(options));
  if (result === undefined) throw new Error('fixture record has no bookkeeping');
  return result;
}

export interface HostOptions {
  readonly namespace?: string;
  readonly name?: string;
  readonly spec?: Partial<BareMetalHost['spec']>;
  readonly annotations?: Record<string, string>;
  readonly labels?: Record<string, string>;
  readonly status?: BareMetalHost['status'];
}

export function host(options: HostOptions = {}): BareMetalHost {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name: options.name ?? 'host-0',
      namespace: options.namespace ?? 'infra',
      uid: 'host-uid',
      resourceVersion: '100',
      ...(options.labels === undefined ? {} : { labels: options.labels }),
      ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    },
    spec: {
      online: false,
      bmc: { address: 'redfish://10.1.2.3/redfish/v1/Systems/1', credentialsName: 'host-0-bmc-secret' },
      consumerRef: { apiVersion: 'infra.tenancy.metal3.io/v1alpha1', kind: 'HostClaimRecord', namespace: 'hostclaim-system', name: 'tenant-a.web-0', uid: 'record-uid' },
      ...options.spec,
    },
    status: options.status ?? { provisioning: { state: 'available' }, poweredOn: false },
  };
}

/** Deep-freezes a value so any mutation by the code under test throws. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
