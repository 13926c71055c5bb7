/**
 * The HardwareData feed applies input changes in revision order; a change
 * waiting on a quiet input makes it prove that input current with a probe
 * of the whole collection (all hosts, at full size 10,000). So only changes
 * HardwareData reads may wait: a claim's uid and namespace never change, so
 * a claim MODIFIED (a label, the binder's status) changes nothing it shows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { WatchHub } from '../../../../src/api/rest/watch-hub.js';
import type { KubeClient } from '../../../../src/backing/kube-client.js';
import type { CollectionVersions } from '../../../../src/backing/metadata-protobuf.js';
import { SharedInformerFactory } from '../../../../src/backing/shared-informers.js';
import { metal3Resources, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../../../src/metal3/types.js';
import { HardwareDataFeed } from '../../../../src/resources/hardwaredata/feed.js';
import { HardwareDataModel } from '../../../../src/resources/hardwaredata/model.js';
import { ControlledClient } from '../../../support/controlled-client.js';

const recordsPath = '/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords';

/** The informers' client, also answering the fences' metadata probes from `state` and recording them. */
class ProbedClient extends ControlledClient {
  readonly probes: string[] = [];

  listVersions(path: string): Promise<CollectionVersions> {
    this.probes.push(path);
    const { items, resourceVersion } = this.state.get(path) ?? { items: [], resourceVersion: '1' };
    const versions = items.map(({ metadata }) => ({ namespace: metadata.namespace ?? '', name: metadata.name ?? '', resourceVersion: metadata.resourceVersion ?? '' }));
    return Promise.resolve({ resourceVersion, items: versions });
  }
}

function claim(uid: string, resourceVersion: string, labels: Record<string, string> = {}): ApiObject {
  return { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { namespace: 'tenant-a', name: `c-${uid}`, uid, resourceVersion, labels }, spec: {} };
}

const host: BareMetalHost = { metadata: { namespace: 'infra', name: 'h-1', uid: 'h-1', resourceVersion: '5' }, spec: {} };
const policy: HostDeployPolicy = { metadata: { namespace: 'infra', name: 'all', resourceVersion: '6' }, spec: { hostClaimNamespaces: {} } };
const tenant: Namespace = { metadata: { name: 'tenant-a', resourceVersion: '7' } };

/** Long enough for the feed's prod (100 ms after a change starts waiting) and its probe. */
const afterProdMs = 300;
const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let stop: (() => void) | undefined;
afterEach(() => {
  stop?.();
  stop = undefined;
});

async function startedFeed(): Promise<{ client: ProbedClient; claims: WatchHub; hardwareData: WatchHub }> {
  const client = new ProbedClient();
  client.state.set(metal3Resources.bareMetalHosts.path, { items: [host], resourceVersion: '20' });
  client.state.set(metal3Resources.hostDeployPolicies.path, { items: [policy], resourceVersion: '20' });
  client.state.set(metal3Resources.namespaces.path, { items: [tenant], resourceVersion: '20' });
  const factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
  const claims = new WatchHub({ resource: { group: 'tenancy.metal3.io', resource: 'hostclaims' } });
  claims.reset('20', [claim('u-1', '15')]);
  const model = new HardwareDataModel(loadSchemaSource().resolvedObjectSchema('HardwareDataSpec'));
  const hardwareData = new WatchHub({ resource: { group: 'tenancy.metal3.io', resource: 'hardwaredata' }, derivedState: model });
  const feed = new HardwareDataFeed(client as unknown as KubeClient, factory, hardwareData, model, {
    hub: claims,
    resource: { path: recordsPath },
    probe: { kind: 'metadata' },
  });
  feed.start();
  stop = () => {
    feed.stop();
    claims.stop();
    hardwareData.stop();
    factory.stop();
  };
  for (let i = 0; i < 50 && !hardwareData.hasSynced(); i++) await wait(10);
  expect(hardwareData.hasSynced()).toBe(true);
  return { client, claims, hardwareData };
}

describe('HardwareDataFeed', () => {
  it('lets a claim MODIFIED pass without waiting on the quiet inputs (no probe of every host)', async () => {
    const { client, claims, hardwareData } = await startedFeed();
    const before = hardwareData.currentResourceVersion();
    claims.publish({ type: 'MODIFIED', object: claim('u-1', '30', { seq: '1' }) });
    claims.publish({ type: 'MODIFIED', object: claim('u-1', '31', { seq: '2' }) });
    await wait(afterProdMs);
    expect(client.probes).toEqual([]);
    // Nothing HardwareData shows changed: no event, no new position.
    expect(hardwareData.currentResourceVersion()).toBe(before);
  });

  it('orders a new claim after the quiet inputs, proving them current with a probe', async () => {
    const { client, claims } = await startedFeed();
    claims.publish({ type: 'ADDED', object: claim('u-2', '30') });
    await wait(afterProdMs);
    expect(client.probes).toEqual(expect.arrayContaining([metal3Resources.bareMetalHosts.path, metal3Resources.hostDeployPolicies.path, metal3Resources.namespaces.path]));
  });
});
