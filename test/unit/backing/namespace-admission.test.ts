/**
 * NamespaceLifecycle admission of the record store's writes, as kube's
 * plugin: the namespaces' shared cache first, kube-apiserver only when the
 * cache does not have the namespace.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../src/api/rest/types.js';
import { WatchHub } from '../../../src/api/rest/watch-hub.js';
import { ApiError } from '../../../src/api/status.js';
import { ContinueTokens } from '../../../src/backing/continue-token.js';
import type { KubeObject } from '../../../src/backing/informer.js';
import { KubeApiError, type KubeClient } from '../../../src/backing/kube-client.js';
import { RecordStore } from '../../../src/backing/record-store.js';
import { SharedInformerFactory } from '../../../src/backing/shared-informers.js';
import { metal3Paths, metal3Resources } from '../../../src/metal3/types.js';
import { hostClaimStorageMapping } from '../../../src/resources/hostclaim/storage.js';
import { hostClaimRecord } from '../../../src/tenancy/claim-record.js';
import { ControlledClient } from '../../support/controlled-client.js';

const gr = { group: 'tenancy.metal3.io', resource: 'hostclaims' };
const mapping = hostClaimStorageMapping('hostclaim-system');

/** The namespaces' list and watch, plus the direct reads (counted) and the record creates the store sends. */
class AdmissionKube extends ControlledClient {
  /** Namespaces kube-apiserver has now, by name (a live read sees them, the cache maybe not yet). */
  readonly live = new Map<string, KubeObject>();
  readonly namespaceReads: string[] = [];
  readonly creates: string[] = [];

  get<T>(path: string): Promise<T> {
    this.namespaceReads.push(path);
    const found = this.live.get(decodeURIComponent(path.split('/').at(-1) ?? ''));
    if (found === undefined) return Promise.reject(new KubeApiError(404, { kind: 'Status', reason: 'NotFound', code: 404 }));
    return Promise.resolve(found as T);
  }

  call(method: string, path: string, options: { body?: unknown }): Promise<{ body: ApiObject; warnings: string[] }> {
    this.creates.push(`${method} ${path}`);
    const body = options.body as ApiObject;
    return Promise.resolve({ body: { ...body, metadata: { ...body.metadata, uid: 'u-1', resourceVersion: '9' } }, warnings: [] });
  }
}

function namespace(name: string, phase: string): KubeObject {
  return { metadata: { name, resourceVersion: '3' }, status: { phase } } as KubeObject;
}

const claim: ApiObject = { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'web' }, spec: {} };

let factory: SharedInformerFactory | undefined;
afterEach(() => factory?.stop());

async function storeWith(cached: readonly KubeObject[]): Promise<{ kube: AdmissionKube; store: RecordStore }> {
  const kube = new AdmissionKube();
  kube.state.set(metal3Paths.namespaces, { items: [...cached], resourceVersion: '5' });
  const client = kube as unknown as KubeClient;
  factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
  const informer = factory.informerFor(metal3Resources.namespaces);
  await informer.waitForSync();
  const store = new RecordStore(client, factory, mapping, hostClaimRecord.plural, gr, new WatchHub({ resource: gr }), new ContinueTokens(Promise.resolve(new Uint8Array(32))), metal3Resources.namespaces);
  return { kube, store };
}

describe('namespace admission of creates', () => {
  it('admits a namespace its cache shows active without asking kube-apiserver', async () => {
    const { kube, store } = await storeWith([namespace('tenant-a', 'Active')]);
    await store.create('tenant-a', claim, {});
    expect(kube.namespaceReads).toEqual([]);
    expect(kube.creates).toHaveLength(1);
  });

  it('refuses a namespace its cache shows terminating (403 NamespaceTerminating), writing nothing', async () => {
    const { kube, store } = await storeWith([namespace('tenant-a', 'Terminating')]);
    const refusal = await store.create('tenant-a', claim, {}).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).code).toBe(403);
    expect((refusal as ApiError).toStatus().details?.causes?.[0]?.reason).toBe('NamespaceTerminating');
    expect(kube.creates).toEqual([]);
  });

  it('asks kube-apiserver about a namespace the cache does not have yet, and admits one created a moment ago', async () => {
    const { kube, store } = await storeWith([]);
    kube.live.set('tenant-new', namespace('tenant-new', 'Active'));
    await store.create('tenant-new', claim, {});
    expect(kube.namespaceReads).toEqual(['/api/v1/namespaces/tenant-new']);
    expect(kube.creates).toHaveLength(1);
  });

  it('refuses a namespace neither the cache nor kube-apiserver has (404), writing nothing', async () => {
    const { kube, store } = await storeWith([]);
    const refusal = await store.create('nowhere', claim, {}).catch((error: unknown) => error);
    expect((refusal as ApiError).code).toBe(404);
    expect(kube.creates).toEqual([]);
  });

  it('asks about a namespace that is no clean path segment with it encoded, and refuses . and .. as client-go does', async () => {
    const { kube, store } = await storeWith([]);
    const nul = await store.create('tenant-a\u0000', claim, {}).catch((error: unknown) => error);
    expect(kube.namespaceReads).toEqual(['/api/v1/namespaces/tenant-a%00']);
    expect([(nul as ApiError).code, (nul as ApiError).message]).toEqual([404, 'namespaces "tenant-a\\x00" not found']);
    const dots = await store.create('..', claim, {}).catch((error: unknown) => error);
    expect([(dots as ApiError).code, (dots as ApiError).message]).toEqual([500, `Internal error occurred: invalid resource name "..": [may not be '..']`]);
    expect(kube.namespaceReads).toHaveLength(1);
    expect(kube.creates).toEqual([]);
  });
});
