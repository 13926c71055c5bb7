import { describe, expect, it } from 'vitest';
import type { Call } from '../../../../src/api/rest/contracts.js';
import { ScopedSelection } from '../../../../src/api/rest/namespace-scope.js';
import { listScoped } from '../../../../src/api/rest/scoped-list.js';
import { parseListParameters } from '../../../../src/api/rest/query.js';
import { SelectionPredicate } from '../../../../src/api/rest/selection.js';
import type { ListQuery } from '../../../../src/api/rest/store.js';
import type { ApiObject, ObjectList } from '../../../../src/api/rest/types.js';
import { WatchHub, type WatchEventOut, type WatchSink } from '../../../../src/api/rest/watch-hub.js';
import { ApiError } from '../../../../src/api/status.js';

const gr = { group: 'tenancy.metal3.io', resource: 'hostclaims' };

function obj(namespace: string, name: string, rv: number, labels: Record<string, string> = {}): ApiObject {
  return { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { namespace, name, resourceVersion: String(rv), labels } };
}

class Sink implements WatchSink {
  readonly events: WatchEventOut[] = [];
  send(event: WatchEventOut): boolean {
    this.events.push(event);
    return true;
  }
  close(): void {
    // nothing to release
  }
  onDrain(): void {
    // always accepting
  }
  take(): string[] {
    const out = this.events.map((e) =>
      e.type === 'BOOKMARK' ? `BOOKMARK ${e.resourceVersion}` : e.type === 'ERROR' ? 'ERROR' : `${e.type} ${e.object.metadata.namespace ?? ''}/${e.object.metadata.name ?? ''}@${e.object.metadata.resourceVersion ?? ''}`,
    );
    this.events.length = 0;
    return out;
  }
}

function hubWith(objects: ApiObject[], rv: string): WatchHub {
  const hub = new WatchHub({ resource: gr });
  hub.reset(rv, objects);
  return hub;
}

function scopedWatch(hub: WatchHub, selection: ScopedSelection, request: { resourceVersion?: string; allowBookmarks?: boolean } = {}): Sink {
  const sink = new Sink();
  hub.watch({ selection, resourceVersion: request.resourceVersion ?? '0', allowBookmarks: request.allowBookmarks ?? false, scope: selection }, sink);
  return sink;
}

describe('a watch of all namespaces narrowed to the readable ones', () => {
  it('starts with and receives only objects of readable namespaces', () => {
    const hub = hubWith([obj('a', 'x', 5), obj('b', 'y', 6), obj('c', 'z', 7)], '10');
    const sink = scopedWatch(hub, new ScopedSelection(SelectionPredicate.everything(), new Set(['a', 'c'])));
    expect(sink.take()).toEqual(['ADDED a/x@5', 'ADDED c/z@7']);
    hub.publish({ type: 'MODIFIED', object: obj('b', 'y', 11) });
    hub.publish({ type: 'ADDED', object: obj('b', 'w', 12) });
    hub.publish({ type: 'MODIFIED', object: obj('a', 'x', 13) });
    hub.publish({ type: 'DELETED', object: obj('c', 'z', 14) });
    expect(sink.take()).toEqual(['MODIFIED a/x@13', 'DELETED c/z@14']);
  });

  it('replays history of readable namespaces only', () => {
    const hub = hubWith([], '10');
    hub.publish({ type: 'ADDED', object: obj('a', 'x', 11) });
    hub.publish({ type: 'ADDED', object: obj('b', 'y', 12) });
    const sink = scopedWatch(hub, new ScopedSelection(SelectionPredicate.everything(), new Set(['b'])), { resourceVersion: '10' });
    expect(sink.take()).toEqual(['ADDED b/y@12']);
  });

  it('gets ADDED for what a grant makes readable and DELETED for what a revocation hides, then a bookmark', () => {
    const hub = hubWith([obj('a', 'x', 5), obj('b', 'y', 6), obj('b', 'v', 8, { tier: 'gold' }), obj('c', 'z', 7)], '10');
    const labelled = new SelectionPredicate(parseListParameters(new URLSearchParams('labelSelector=tier!=gold')).selection.label, SelectionPredicate.everything().field);
    const selection = new ScopedSelection(labelled, new Set(['a']));
    const sink = scopedWatch(hub, selection, { allowBookmarks: true });
    expect(sink.take()).toEqual(['ADDED a/x@5']);
    selection.update(new Set(['a', 'b']));
    // b/v is outside the label selector: not added.
    expect(sink.take()).toEqual(['ADDED b/y@6', 'BOOKMARK 10']);
    hub.publish({ type: 'MODIFIED', object: obj('b', 'y', 11) });
    expect(sink.take()).toEqual(['MODIFIED b/y@11']);
    selection.update(new Set(['b']));
    expect(sink.take()).toEqual(['DELETED a/x@5', 'BOOKMARK 11']);
    hub.publish({ type: 'MODIFIED', object: obj('a', 'x', 12) });
    expect(sink.take()).toEqual([]);
    // An unchanged set sends nothing; every namespace adds the rest.
    selection.update(new Set(['b']));
    expect(sink.take()).toEqual([]);
    selection.update('all');
    expect(sink.take()).toEqual(['ADDED a/x@12', 'ADDED c/z@7', 'BOOKMARK 12']);
  });

  it('narrows a watch that started with every namespace when the requester loses that right', () => {
    const hub = hubWith([obj('a', 'x', 5), obj('b', 'y', 6)], '10');
    const selection = new ScopedSelection(SelectionPredicate.everything(), 'all');
    const sink = scopedWatch(hub, selection);
    expect(sink.take()).toEqual(['ADDED a/x@5', 'ADDED b/y@6']);
    selection.update(new Set(['b']));
    expect(sink.take()).toEqual(['DELETED a/x@5']);
    hub.publish({ type: 'MODIFIED', object: obj('a', 'x', 11) });
    expect(sink.take()).toEqual([]);
  });

  it('stops following the scope once unsubscribed', () => {
    const hub = hubWith([obj('a', 'x', 5)], '10');
    const selection = new ScopedSelection(SelectionPredicate.everything(), new Set<string>());
    const sink = new Sink();
    const stop = hub.watch({ selection, resourceVersion: '0', allowBookmarks: false, scope: selection }, sink);
    stop();
    selection.update(new Set(['a']));
    expect(sink.take()).toEqual([]);
  });
});

describe('listScoped', () => {
  /** A store whose namespaced lists answer from `objects` at a per-namespace resourceVersion; it records the namespaces asked. */
  function call(objects: ApiObject[], versions: Record<string, string>, asked: (string | undefined)[]): Call {
    const store = {
      hub: hubWith([], '99'),
      list: (namespace: string | undefined, query: ListQuery): Promise<ObjectList> => {
        asked.push(namespace);
        expect(query.limit).toBeUndefined();
        return Promise.resolve({
          apiVersion: 'tenancy.metal3.io/v1alpha1',
          kind: 'HostClaimList',
          metadata: { resourceVersion: versions[namespace ?? ''] ?? '1' },
          items: objects.filter((o) => o.metadata.namespace === namespace),
        });
      },
    };
    return {
      resource: { access: 'read-only', store, strategy: { descriptor: { kind: 'HostClaim' } } },
      gv: { group: 'tenancy.metal3.io', version: 'v1alpha1' },
    } as unknown as Call;
  }

  it('reads only the readable namespaces, ignores limit, and answers the oldest resourceVersion of its parts', async () => {
    const asked: (string | undefined)[] = [];
    const objects = [obj('t2', 'b', 3), obj('t1', 'a', 2), obj('other', 'secret', 4), obj('t3', 'c', 5, { tier: 'gold' })];
    const params = parseListParameters(new URLSearchParams('limit=1&labelSelector=tier!=gold'));
    const list = await listScoped(call(objects, { t1: '20', t2: '18', t3: '25' }, asked), params, new Set(['t3', 't1', 't2']));
    expect(asked).toEqual(['t1', 't2', 't3']);
    expect(list).toEqual({
      apiVersion: 'tenancy.metal3.io/v1alpha1',
      kind: 'HostClaimList',
      metadata: { resourceVersion: '18' },
      items: [obj('t1', 'a', 2), obj('t2', 'b', 3)],
    });
  });

  it('with no readable namespace reads nothing and answers the hub resourceVersion; a namespace field selector narrows', async () => {
    const asked: (string | undefined)[] = [];
    expect(await listScoped(call([], {}, asked), parseListParameters(new URLSearchParams()), new Set())).toEqual({
      apiVersion: 'tenancy.metal3.io/v1alpha1',
      kind: 'HostClaimList',
      metadata: { resourceVersion: '99' },
      items: [],
    });
    await listScoped(call([], {}, asked), parseListParameters(new URLSearchParams('fieldSelector=metadata.namespace=t2')), new Set(['t1', 't2']));
    expect(asked).toEqual(['t2']);
  });

  it('reads the namespaces together when the store can, and still keeps only them', async () => {
    const asked: (string | undefined)[] = [];
    const base = call([], {}, asked);
    const together: string[][] = [];
    const store = {
      ...base.resource.store,
      listNamespaces: (namespaces: readonly string[]): Promise<ObjectList> => {
        together.push([...namespaces]);
        return Promise.resolve({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaimList', metadata: { resourceVersion: '30' }, items: [obj('t2', 'b', 3), obj('other', 'x', 4), obj('t1', 'a', 2)] });
      },
    };
    const withStore = { ...base, resource: { ...base.resource, store } } as unknown as Call;
    const list = await listScoped(withStore, parseListParameters(new URLSearchParams()), new Set(['t2', 't1']));
    expect([together, asked, list.metadata.resourceVersion, list.items]).toEqual([[['t1', 't2']], [], '30', [obj('t1', 'a', 2), obj('t2', 'b', 3)]]);
  });

  it('refuses a continue token (it never issues one)', async () => {
    const error = await listScoped(call([], {}, []), parseListParameters(new URLSearchParams('continue=abc')), new Set(['t1'])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).toStatus()).toMatchObject({ code: 400, reason: 'BadRequest', message: 'invalid continue token: continue key is not valid: it was issued for another list' });
  });
});
