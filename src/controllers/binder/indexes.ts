/**
 * The binder's indexes on the shared HostClaimRecord cache, so that a host
 * or Secret event finds the claims it concerns without reading every
 * record, and on the shared Secret cache, so that a claim finds its Secret
 * copies without a LIST (client-go Indexers, tools/cache/index.go).
 */
import type { ApiObject } from '../../api/rest/types.js';
import type { IndexFunc } from '../../backing/cache-index.js';
import { secretReferences } from '../../tenancy/secret-references.js';
import type { BareMetalHost } from '../../metal3/types.js';
import { boundRecord } from '../../tenancy/host-references.js';
import { claimOf, isReleasingForPool } from './claim.js';
import { copyOwnerLabel } from './secret-copies.js';

/** The one value of the unbound index. */
export const unboundValue = 'unbound';
/** The one value of the releasing-for-pool index. */
export const releasingValue = 'releasing';

interface Index {
  readonly name: string;
  readonly fn: IndexFunc<ApiObject>;
}

export const recordIndexes = {
  /** The record's uid: a host's consumerRef names it. */
  uid: { name: 'binder/uid', fn: (record) => (record.metadata.uid === undefined ? [] : [record.metadata.uid]) },
  /** `<namespace>/<name>` of the host a claim has chosen. */
  chosenHost: {
    name: 'binder/chosen-host',
    fn: (record) => {
      const host = claimOf(record)?.chosenHost;
      return host === undefined ? [] : [host];
    },
  },
  /** Claims without a chosen host, under one value. */
  unbound: {
    name: 'binder/unbound',
    fn: (record) => {
      const claim = claimOf(record);
      return claim !== undefined && claim.chosenHost === undefined ? [unboundValue] : [];
    },
  },
  /** Deleted claims whose release marks their host for a node-reuse pool, under one value. */
  releasingForPool: {
    name: 'binder/releasing-for-pool',
    fn: (record) => {
      const claim = claimOf(record);
      return claim !== undefined && isReleasingForPool(claim) ? [releasingValue] : [];
    },
  },
  /** `<tenant namespace>/<secret name>` of each Secret a claim references. */
  secrets: {
    name: 'binder/secrets',
    fn: (record) => {
      const claim = claimOf(record);
      return claim === undefined ? [] : Object.values(secretReferences(claim.spec)).map((name) => `${claim.namespace}/${name}`);
    },
  },
} as const satisfies Record<string, Index>;

/** On the shared host cache: `<namespace>/<name>` of the record a host names as consumer. */
export const consumerIndex = {
  name: 'binder/consumer',
  fn: (host: BareMetalHost): readonly string[] => {
    const bound = boundRecord(host);
    return bound === undefined ? [] : [`${bound.namespace}/${bound.name}`];
  },
};

/** On the shared Secret (metadata) cache: `<namespace>/<record uid>` of each claim's Secret copy, from its owner label. */
export const copyIndex: Index = {
  name: 'binder/copy-owner',
  fn: (secret) => {
    const owner = secret.metadata.labels?.[copyOwnerLabel];
    return owner === undefined ? [] : [`${secret.metadata.namespace ?? ''}/${owner}`];
  },
};
