/**
 * The HardwareData feed applies input changes in revision order; a change
 * waiting on a quiet input makes it prove that input current with a probe
 * of the whole collection (all hosts, at full size 10,000). So only changes
 * HardwareData reads may wait: a claim's uid and namespace never change, so
 * a claim MODIFIED (a label, the binder's status) changes nothing it shows.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
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

async function startedFeed(options: { tenants?: readonly Namespace[]; historySize?: number } = {}): Promise<{ client: ProbedClient; claims: WatchHub; hardwareData: WatchHub }> {
  const client = new ProbedClient();
  client.state.set(metal3Resources.bareMetalHosts.path, { items: [host], resourceVersion: '20' });
  client.state.set(metal3Resources.hostDeployPolicies.path, { items: [policy], resourceVersion: '20' });
  client.state.set(metal3Resources.namespaces.path, { items: [...(options.tenants ?? [tenant])], resourceVersion: '20' });
  const factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
  const claims = new WatchHub({ resource: { group: 'tenancy.metal3.io', resource: 'hostclaims' } });
  claims.reset('20', [claim('u-1', '15')]);
  const model = new HardwareDataModel(loadSchemaSource().resolvedObjectSchema('HardwareDataSpec'));
  const hardwareData = new WatchHub({ resource: { group: 'tenancy.metal3.io', resource: 'hardwaredata' }, derivedState: model, ...(options.historySize === undefined ? {} : { historySize: options.historySize }) });
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

  describe('a change touching many tenant namespaces', () => {
    const tenants = Array.from({ length: 20 }, (_, i): Namespace => ({ metadata: { name: `tenant-${i}`, resourceVersion: '7' } }));
    const bound: BareMetalHost = { ...host, metadata: { ...host.metadata, resourceVersion: '30' }, spec: { consumerRef: { apiVersion: 'infra.tenancy.metal3.io/v1alpha1', kind: 'HostClaimRecord', namespace: 'hostclaim-system', name: 'other' } } };

    /** The namespaces that got an event, and those that got a gap, when the free host every tenant sees is bound elsewhere. */
    async function bindHost(historySize: number): Promise<{ published: string[]; gaps: string[] }> {
      const { client, hardwareData } = await startedFeed({ tenants, historySize });
      vi.spyOn(hardwareData, 'watched').mockImplementation((namespace) => namespace === 'tenant-3');
      const published: string[] = [];
      const gaps: string[] = [];
      vi.spyOn(hardwareData, 'publish').mockImplementation((event) => {
        published.push(event.object.metadata.namespace ?? '');
      });
      vi.spyOn(hardwareData, 'gap').mockImplementation((_rv, namespaces) => {
        gaps.push(...(namespaces ?? []));
      });
      // What the fences' probes find once the host changed: every input at least as new as the change.
      client.state.set(metal3Resources.bareMetalHosts.path, { items: [bound], resourceVersion: '40' });
      for (const path of [metal3Resources.hostDeployPolicies.path, metal3Resources.namespaces.path, recordsPath]) {
        client.state.set(path, { items: client.state.get(path)?.items ?? [], resourceVersion: '40' });
      }
      client.push(metal3Resources.bareMetalHosts.path, { type: 'MODIFIED', object: bound });
      await wait(afterProdMs);
      return { published: published.sort(), gaps: gaps.sort() };
    }

    it('is generated for every namespace while it fills at most a tenth of the history', async () => {
      const { published, gaps } = await bindHost(200);
      expect(published).toEqual(tenants.map((t) => t.metadata.name).sort());
      expect(gaps).toEqual([]);
    });

    it('beyond that, only for the watched namespaces; the others get a gap (a resume across it is 410)', async () => {
      const { published, gaps } = await bindHost(100);
      expect(published).toEqual(['tenant-3']);
      expect(gaps).toEqual(tenants.map((t) => t.metadata.name).filter((name) => name !== 'tenant-3').sort());
    });
  });
});
