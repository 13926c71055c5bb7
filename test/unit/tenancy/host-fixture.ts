import type { BareMetalHost } from '../../../src/metal3/types.js';

/** What a test host may differ in; everything else is an `available` host in `infra`. */
export interface HostOptions {
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  state?: string;
  errorMessage?: string;
  operationalStatus?: string;
  deletionTimestamp?: string;
  consumerRef?: BareMetalHost['spec']['consumerRef'];
}

export function host(name: string, options: HostOptions = {}): BareMetalHost {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name,
      namespace: options.namespace ?? 'infra',
      ...(options.labels === undefined ? {} : { labels: options.labels }),
      ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
      ...(options.deletionTimestamp === undefined ? {} : { deletionTimestamp: options.deletionTimestamp }),
    },
    spec: { online: false, ...(options.consumerRef === undefined ? {} : { consumerRef: options.consumerRef }) },
    status: {
      provisioning: { state: options.state ?? 'available' },
      ...(options.errorMessage === undefined ? {} : { errorMessage: options.errorMessage }),
      ...(options.operationalStatus === undefined ? {} : { operationalStatus: options.operationalStatus }),
    },
  };
}
