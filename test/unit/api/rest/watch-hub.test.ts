/**
 * WatchHub tests. Scenarios are ported from k8s.io/apiserver v0.36.3
 * pkg/storage/cacher (watch_cache_test.go, cacher_whitebox_test.go,
 * cache_watcher_test.go) and pkg/storage/testing/watcher_tests.go (the
 * storage conformance suite that cacher_test.go runs against the cacher);
 * each block names the upstream test it follows. The code is our own.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../../../src/api/status.js';
import { parseFieldSelector } from '../../../../src/api/field-selector.js';
import { parseLabelSelector } from '../../../../src/api/label-selector.js';
import { SelectionPredicate, selectableFields } from '../../../../src/api/rest/selection.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import {
  WatchHub,
  type WatchEventOut,
  type WatchHubOptions,
  type WatchRequest,
  type WatchSink,
} from '../../../../src/api/rest/watch-hub.js';

const resource = { group: 'tenancy.metal3.io', resource: 'hostclaims' };

function obj(namespace: string, name: string, rv: number, labels: Record<string, string> = {}): ApiObject {
  return {
    apiVersion: 'tenancy.metal3.io/v1alpha1',
    kind: 'HostClaim',
    metadata: { namespace, name, resourceVersion: String(rv), labels },
    spec: { rv },
  };
}

/** A sink that records events; `accepting` false makes send() push back like stream.write. */
class RecordingSink implements WatchSink {
  readonly events: WatchEventOut[] = [];
  closed = 0;
  accepting = true;
  private drainListener: (() => void) | undefined;

  send(event: WatchEventOut): boolean {
    this.events.push(event);
    return this.accepting;
  }

  close(): void {
    this.closed++;
  }

  onDrain(listener: () => void): void {
    this.drainListener = listener;
  }

  drain(): void {
    this.accepting = true;
    this.drainListener?.();
  }

  /** Compact, ordered summaries: "ADDED ns/name@rv", "BOOKMARK rv [end]", "ERROR code reason: message". */
  summary(): string[] {
    return this.events.map(describeEvent);
  }

  take(): string[] {
    const out = this.summary();
    this.events.length = 0;
    return out;
  }
}

function describeEvent(event: WatchEventOut): string {
  switch (event.type) {
    case 'BOOKMARK':
      return `BOOKMARK ${event.resourceVersion}${event.initialEventsEnd ? ' end' : ''}`;
    case 'ERROR':
      return `ERROR ${event.status.code} ${event.status.reason ?? ''}: ${event.status.message}`;
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return `${event.type} ${event.object.metadata.namespace ?? ''}/${event.object.metadata.name ?? ''}@${event.object.metadata.resourceVersion ?? ''}`;
  }
}

function request(overrides: Partial<WatchRequest> = {}): WatchRequest {
  return { selection: SelectionPredicate.everything(), allowBookmarks: false, ...overrides };
}

function hubWith(options: Partial<WatchHubOptions> = {}): WatchHub {
  return new WatchHub({ resource, ...options });
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

function labelled(key: string, value: string): SelectionPredicate {
  return new SelectionPredicate(parseLabelSelector(`${key}=${value}`), parseFieldSelector('', selectableFields));
}

describe('cache state', () => {
  // TestWatchCacheBasic (watch_cache_test.go).
  it('tracks reset, publish, progress and serves sorted lists', () => {
    const hub = hubWith();
    expect(hub.hasSynced()).toBe(false);
    expect(hub.currentResourceVersion()).toBe('');
    hub.reset('10', [obj('b', 'x', 5), obj('a', 'z', 7), obj('a', 'y', 9)]);
    expect(hub.hasSynced()).toBe(true);
    expect(hub.currentResourceVersion()).toBe('10');
    expect(hub.list().map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`)).toEqual(['a/y', 'a/z', 'b/x']);
    expect(hub.list('a').map((o) => o.metadata.name)).toEqual(['y', 'z']);
    expect(hub.list('none')).toEqual([]);

    hub.publish({ type: 'MODIFIED', object: obj('a', 'y', 11) });
    hub.publish({ type: 'ADDED', object: obj('c', 'w', 12) });
    hub.publish({ type: 'DELETED', object: obj('b', 'x', 13) });
    expect(hub.get('a', 'y')?.metadata.resourceVersion).toBe('11');
    expect(hub.get('b', 'x')).toBeUndefined();
    expect(hub.list().map((o) => o.metadata.name)).toEqual(['y', 'z', 'w']);
    expect(hub.currentResourceVersion()).toBe('13');

    hub.progress('20');
    expect(hub.currentResourceVersion()).toBe('20');
    hub.progress('15'); // older bookmarks are ignored
    expect(hub.currentResourceVersion()).toBe('20');

    hub.reset('30', [obj('d', 'v', 25)]);
    expect(hub.list().map((o) => o.metadata.name)).toEqual(['v']);
    expect(hub.stats().objects).toBe(1);
    expect(hub.stats().historyEvents).toBe(0);
  });

  // The watch cache's B-tree is ordered by storage key (store_btree.go), i.e. the bytes of "<namespace>/<name>".
  it('lists in storage-key order, where tenant-a comes before tenant', () => {
    const hub = hubWith();
    hub.reset('10', [obj('tenant', 'a', 1), obj('tenant-a', 'b', 2), obj('tenant-a', 'a', 3), obj('tenant0', 'a', 4)]);
    expect(hub.list().map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`)).toEqual(['tenant-a/a', 'tenant-a/b', 'tenant/a', 'tenant0/a']);
  });

  it('rejects a feed that is not in resourceVersion order', () => {
    const hub = hubWith();
    expect(() => {
      hub.publish({ type: 'ADDED', object: obj('a', 'x', 1) });
    }).toThrow(/before the first reset/);
    hub.reset('10', []);
    expect(() => {
      hub.publish({ type: 'ADDED', object: obj('a', 'x', 10) });
    }).toThrow(/out of order/);
    expect(() => {
      hub.publish({ type: 'ADDED', object: { metadata: { name: 'x', namespace: 'a', resourceVersion: 'abc' } } });
    }).toThrow(/invalid resourceVersion/);
  });
});

describe('watch from resourceVersion unset (rule 1)', () => {
  // RunWatchSemantics "legacy, RV=unset" (watcher_tests.go), with the
  // snapshot coming from the caller's consistent read.
  it('sends the consistent snapshot, then changes after it', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3, { app: 'x' }), obj('ns', 'b', 4)]);
    const sink = new RecordingSink();
    hub.watch(
      request({
        namespace: 'ns',
        selection: labelled('app', 'x'),
        consistentStart: {
          resourceVersion: '12',
          objects: [obj('ns', 'a', 3, { app: 'x' }), obj('ns', 'b', 4), obj('other', 'c', 5, { app: 'x' })],
        },
      }),
      sink,
    );
    // Namespace first, then the selector; no bookmark without sendInitialEvents.
    expect(sink.take()).toEqual(['ADDED ns/a@3']);
    hub.progress('12');
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 13, { app: 'x' }) });
    expect(sink.take()).toEqual(['MODIFIED ns/a@13']);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'b', 14, { app: 'x' }) });
    expect(sink.take()).toEqual(['ADDED ns/b@14']);
  });

  it('does not deliver events the snapshot already reflects when the feed lags behind it', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const sink = new RecordingSink();
    // The caller read RV 14 from kube-apiserver: b was created at 12 and a modified at 14.
    hub.watch(
      request({
        consistentStart: { resourceVersion: '14', objects: [obj('ns', 'a', 14), obj('ns', 'b', 12)] },
        allowBookmarks: true,
        sendInitialEvents: true,
      }),
      sink,
    );
    expect(sink.take()).toEqual(['ADDED ns/a@14', 'ADDED ns/b@12', 'BOOKMARK 14 end']);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 12) });
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 14) });
    expect(sink.take()).toEqual([]);
    hub.publish({ type: 'DELETED', object: obj('ns', 'b', 15) });
    expect(sink.take()).toEqual(['DELETED ns/b@15']);
  });

  it('uses its own state when it is already at least as fresh as the snapshot', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 11) });
    hub.publish({ type: 'DELETED', object: obj('ns', 'a', 12) });
    const sink = new RecordingSink();
    hub.watch(request({ consistentStart: { resourceVersion: '11', objects: [obj('ns', 'a', 3), obj('ns', 'b', 11)] } }), sink);
    // State at 12 (newer than the snapshot at 11): a is already gone.
    expect(sink.take()).toEqual(['ADDED ns/b@11']);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'b', 13) });
    expect(sink.take()).toEqual(['MODIFIED ns/b@13']);
  });

  // RunWatchSemantics "sendInitialEvents=false, RV=unset": changes only.
  it('sends only later changes with sendInitialEvents=false', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const sink = new RecordingSink();
    hub.watch(request({ sendInitialEvents: false, consistentStart: { resourceVersion: '12', objects: [] } }), sink);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 12) });
    hub.publish({ type: 'ADDED', object: obj('ns', 'c', 13) });
    expect(sink.take()).toEqual(['ADDED ns/c@13']);
  });

  it('requires consistentStart', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const sink = new RecordingSink();
    expect(() => hub.watch(request(), sink)).toThrow(/consistentStart is required/);
    expect(() => hub.watch(request({ resourceVersion: '' }), sink)).toThrow(/consistentStart is required/);
    expect(sink.events).toEqual([]);
    expect(hub.stats().watchers).toBe(0);
  });
});

describe('watch from resourceVersion "0" (rule 2)', () => {
  // RunTestWatchFromZero / RunWatchSemantics "legacy, RV=0".
  it('sends the current state sorted, then changes after it', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'b', 4), obj('ns', 'a', 3), obj('other', 'c', 5)]);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 11) });
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '0', namespace: 'ns' }), sink);
    expect(sink.take()).toEqual(['ADDED ns/a@11', 'ADDED ns/b@4']);
    hub.publish({ type: 'ADDED', object: obj('ns', 'c', 12) });
    expect(sink.take()).toEqual(['ADDED ns/c@12']);
  });

  // RunWatchSemantics "sendInitialEvents=false, RV=0".
  it('starts from now without initial events when sendInitialEvents=false', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '0', sendInitialEvents: false }), sink);
    expect(sink.take()).toEqual([]);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 11) });
    expect(sink.take()).toEqual(['ADDED ns/b@11']);
  });
});

describe('watch from resourceVersion X (rule 3)', () => {
  // TestEvents / TestMarker (watch_cache_test.go), RunTestWatchFromNonZero.
  it('replays history after X, then continues live, in order', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 9)]);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 11) });
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 12) });
    hub.publish({ type: 'DELETED', object: obj('ns', 'a', 13) });
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '11' }), sink);
    expect(sink.take()).toEqual(['ADDED ns/b@12', 'DELETED ns/a@13']);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'b', 14) });
    expect(sink.take()).toEqual(['MODIFIED ns/b@14']);

    // Starting exactly at the list resourceVersion is within the window (TestMarker).
    const fromList = new RecordingSink();
    hub.watch(request({ resourceVersion: '10' }), fromList);
    expect(fromList.take()).toEqual(['MODIFIED ns/a@11', 'ADDED ns/b@12', 'DELETED ns/a@13', 'MODIFIED ns/b@14']);
    // Starting at the current resourceVersion replays nothing.
    const fromNow = new RecordingSink();
    hub.watch(request({ resourceVersion: '14' }), fromNow);
    expect(fromNow.take()).toEqual([]);
  });

  it('answers a resourceVersion older than the list with 410 Expired and closes', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 9)]);
    const sink = new RecordingSink();
    const stop = hub.watch(request({ resourceVersion: '9' }), sink);
    expect(sink.events).toHaveLength(1);
    const event = sink.events[0];
    expect(event?.type).toBe('ERROR');
    if (event?.type !== 'ERROR') return;
    expect(event.status).toBeInstanceOf(ApiError);
    expect(event.status.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old resource version: 9 (10)',
      reason: 'Expired',
      code: 410,
    });
    expect(sink.closed).toBe(1);
    expect(hub.stats().watchers).toBe(0);
    expect(hub.stats().terminations.expired).toBe(1);
    stop(); // harmless
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 11) });
    expect(sink.events).toHaveLength(1);
  });

  // TestEvents "full cache": the window moves with evictions.
  it('moves the window start to the newest evicted event', () => {
    const hub = hubWith({ historySize: 3 });
    hub.reset('10', [obj('ns', 'pod', 10)]);
    for (let rv = 11; rv <= 15; rv++) hub.publish({ type: 'MODIFIED', object: obj('ns', 'pod', rv) });
    // History holds 13, 14, 15; 11 and 12 were evicted.
    expect(hub.stats().historyEvents).toBe(3);
    const old = new RecordingSink();
    hub.watch(request({ resourceVersion: '11' }), old);
    expect(old.take()).toEqual(['ERROR 410 Expired: too old resource version: 11 (12)']);
    const edge = new RecordingSink();
    hub.watch(request({ resourceVersion: '12' }), edge);
    expect(edge.take()).toEqual(['MODIFIED ns/pod@13', 'MODIFIED ns/pod@14', 'MODIFIED ns/pod@15']);
  });

  // RunTestDelayedWatchDelivery-style: the client saw a newer write through another replica.
  it('waits for a resourceVersion the feed has not reached', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '13' }), sink);
    hub.publish({ type: 'ADDED', object: obj('ns', 'a', 11) });
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 13) });
    expect(sink.take()).toEqual([]);
    hub.publish({ type: 'ADDED', object: obj('ns', 'c', 14) });
    expect(sink.take()).toEqual(['ADDED ns/c@14']);
  });

  it('rejects a malformed resourceVersion with 422 before sending anything', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const sink = new RecordingSink();
    const error = thrown(() => hub.watch(request({ resourceVersion: 'abc' }), sink));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).toStatus()).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message:
        'hostclaims.tenancy.metal3.io "" is invalid: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
      details: {
        group: 'tenancy.metal3.io',
        kind: 'hostclaims',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
            field: 'resourceVersion',
          },
        ],
      },
    });
    expect((thrown(() => hub.watch(request({ resourceVersion: '18446744073709551616' }), sink)) as ApiError).message).toContain(
      'value out of range',
    );
    expect(sink.events).toEqual([]);
    expect(hub.stats().watchers).toBe(0);
  });
});

describe('sendInitialEvents=true (rule 4)', () => {
  // RunWatchSemantics "allowWatchBookmarks=true, sendInitialEvents=true, RV=0"
  // and TestInitialEventsEndBookmark (cacher_whitebox_test.go).
  it('sends the state, one initial-events-end bookmark, then live events', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3), obj('ns', 'b', 4)]);
    hub.progress('12');
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '0', sendInitialEvents: true, allowBookmarks: true }), sink);
    expect(sink.take()).toEqual(['ADDED ns/a@3', 'ADDED ns/b@4', 'BOOKMARK 12 end']);
    hub.publish({ type: 'ADDED', object: obj('ns', 'c', 13) });
    expect(sink.take()).toEqual(['ADDED ns/c@13']);
  });

  it('marks the end of the initial events only for a client that allows bookmarks (setInitialEventsEndBookmarkIfRequested)', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const without = new RecordingSink();
    hub.watch(request({ resourceVersion: '5', sendInitialEvents: true }), without);
    expect(without.take()).toEqual(['ADDED ns/a@3']);
    const withBookmarks = new RecordingSink();
    hub.watch(request({ resourceVersion: '5', sendInitialEvents: true, allowBookmarks: true }), withBookmarks);
    expect(withBookmarks.take()).toEqual(['ADDED ns/a@3', 'BOOKMARK 10 end']);
  });

  it('delivers events that arrive during the initial events after the bookmark, in order', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3), obj('ns', 'b', 4), obj('ns', 'c', 5)]);
    const sink = new RecordingSink();
    sink.accepting = false; // the socket pushes back after the first write
    hub.watch(request({ resourceVersion: '10', sendInitialEvents: true, allowBookmarks: true }), sink);
    expect(sink.summary()).toEqual(['ADDED ns/a@3']);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 11) });
    hub.publish({ type: 'DELETED', object: obj('ns', 'c', 12) });
    expect(sink.summary()).toEqual(['ADDED ns/a@3']);
    sink.drain();
    expect(sink.take()).toEqual([
      'ADDED ns/a@3',
      'ADDED ns/b@4',
      'ADDED ns/c@5',
      'BOOKMARK 10 end',
      'MODIFIED ns/a@11',
      'DELETED ns/c@12',
    ]);
  });

  // TestWaitUntilWatchCacheFreshAndForceAllEvents (cacher_whitebox_test.go).
  it('waits for the feed to reach X, then sends the state at that point', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '12', sendInitialEvents: true, allowBookmarks: true }), sink);
    expect(hub.stats().pendingWatchers).toBe(1);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 11) });
    expect(sink.take()).toEqual([]);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 13) });
    expect(sink.take()).toEqual(['ADDED ns/a@13', 'ADDED ns/b@11', 'BOOKMARK 13 end']);
    expect(hub.stats().pendingWatchers).toBe(0);
    hub.publish({ type: 'ADDED', object: obj('ns', 'c', 14) });
    expect(sink.take()).toEqual(['ADDED ns/c@14']);
  });

  it('uses the hub state and its resourceVersion for the end bookmark when the hub is ahead of the snapshot', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 13) });
    const sink = new RecordingSink();
    hub.watch(
      request({ sendInitialEvents: true, allowBookmarks: true, consistentStart: { resourceVersion: '12', objects: [obj('ns', 'a', 3)] } }),
      sink,
    );
    expect(sink.take()).toEqual(['ADDED ns/a@3', 'ADDED ns/b@13', 'BOOKMARK 13 end']);
  });

  it('forgets a waiting watch-list when the caller unsubscribes', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const sink = new RecordingSink();
    const stop = hub.watch(request({ resourceVersion: '12', sendInitialEvents: true, allowBookmarks: true }), sink);
    stop();
    expect(hub.stats().watchers).toBe(0);
    hub.progress('12');
    expect(sink.events).toEqual([]);
    expect(sink.closed).toBe(0);
  });

  it('starts a waiting watch-list on a backing bookmark too', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '15', sendInitialEvents: true, allowBookmarks: true }), sink);
    hub.progress('16');
    expect(sink.take()).toEqual(['ADDED ns/a@3', 'BOOKMARK 16 end']);
  });

  describe('with fake timers', () => {
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    // TestWaitUntilFreshAndListTimeout (watch_cache_test.go): 504 after the block timeout.
    it('gives up with 504 Too large resource version', () => {
      const hub = hubWith({ freshnessTimeoutMs: 3000 });
      hub.reset('10', []);
      const sink = new RecordingSink();
      hub.watch(request({ resourceVersion: '20', sendInitialEvents: true, allowBookmarks: true }), sink);
      vi.advanceTimersByTime(2999);
      expect(sink.events).toEqual([]);
      vi.advanceTimersByTime(1);
      const event = sink.events[0];
      expect(event?.type).toBe('ERROR');
      if (event?.type !== 'ERROR') return;
      expect(event.status.toStatus()).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Timeout: Too large resource version: 20, current: 10',
        reason: 'Timeout',
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
        code: 504,
      });
      expect(sink.closed).toBe(1);
      expect(hub.stats().terminations.tooLargeResourceVersion).toBe(1);
      expect(hub.stats().watchers).toBe(0);
    });
  });
});

describe('selector transitions (rule 5)', () => {
  // TestCacheWatcherHandlesFiltering (cache_watcher_test.go) and the
  // conformance "should observe an object deletion if it stops meeting the
  // requirements of the selector".
  it('turns label changes into ADDED/MODIFIED/DELETED for the watcher', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 5, { app: 'x' })]);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '10', selection: labelled('app', 'x') }), sink);

    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 11, { app: 'x' }) }); // both match
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 12, { app: 'y' }) }); // leaves the selection
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 13, { app: 'z' }) }); // neither matches
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 14, { app: 'x' }) }); // enters the selection
    hub.publish({ type: 'DELETED', object: obj('ns', 'a', 15, { app: 'x' }) });
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 16, { app: 'y' }) }); // never matches
    hub.publish({ type: 'DELETED', object: obj('ns', 'b', 17, { app: 'y' }) });
    expect(sink.summary()).toEqual(['MODIFIED ns/a@11', 'DELETED ns/a@12', 'ADDED ns/a@14', 'DELETED ns/a@15']);

    // Like the cacher, the DELETED for a selector exit carries the last
    // matching state at the event's resourceVersion.
    const exit = sink.events[1];
    expect(exit?.type === 'DELETED' ? exit.object.metadata.labels : undefined).toEqual({ app: 'x' });
    expect(exit?.type === 'DELETED' ? exit.object.spec : undefined).toEqual({ rv: 11 });
  });

  it('applies the same transitions when replaying history', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 5, { app: 'x' })]);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 11, { app: 'y' }) });
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 12, { app: 'x' }) });
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '10', selection: labelled('app', 'x') }), sink);
    expect(sink.summary()).toEqual(['DELETED ns/a@11', 'ADDED ns/a@12']);
  });
});

describe('bookmarks (rule 6)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // TestCacherSendBookmarkEvents / TestBookmarksOnResourceVersionUpdates (cacher_whitebox_test.go).
  it('sends one bookmark per interval at the current resourceVersion, when allowed', () => {
    const hub = hubWith({ bookmarkIntervalMs: 1000 });
    hub.reset('10', [obj('ns', 'a', 3)]);
    const allowed = new RecordingSink();
    const denied = new RecordingSink();
    hub.watch(request({ resourceVersion: '10', allowBookmarks: true }), allowed);
    hub.watch(request({ resourceVersion: '10' }), denied);

    vi.advanceTimersByTime(1000);
    expect(allowed.take()).toEqual([]); // nothing newer than the watch start
    hub.progress('15');
    vi.advanceTimersByTime(999);
    expect(allowed.take()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(allowed.take()).toEqual(['BOOKMARK 15']);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 16) });
    vi.advanceTimersByTime(1000);
    expect(allowed.take()).toEqual(['ADDED ns/b@16', 'BOOKMARK 16']);
    expect(denied.take()).toEqual(['ADDED ns/b@16']);
  });

  it('starts periodic bookmarks only after the initial events are sent', () => {
    const hub = hubWith({ bookmarkIntervalMs: 1000 });
    hub.reset('10', [obj('ns', 'a', 3), obj('ns', 'b', 4)]);
    const sink = new RecordingSink();
    sink.accepting = false;
    hub.watch(request({ resourceVersion: '0', sendInitialEvents: true, allowBookmarks: true }), sink);
    hub.progress('20');
    vi.advanceTimersByTime(5000);
    expect(sink.summary()).toEqual(['ADDED ns/a@3']);
    sink.drain();
    expect(sink.take()).toEqual(['ADDED ns/a@3', 'ADDED ns/b@4', 'BOOKMARK 10 end']);
    vi.advanceTimersByTime(1000);
    expect(sink.take()).toEqual(['BOOKMARK 20']);
  });

  it('does not send a bookmark behind a resourceVersion the watcher waits for', () => {
    const hub = hubWith({ bookmarkIntervalMs: 1000 });
    hub.reset('10', []);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '30', allowBookmarks: true }), sink);
    hub.progress('20');
    vi.advanceTimersByTime(3000);
    expect(sink.take()).toEqual([]);
    hub.progress('31');
    vi.advanceTimersByTime(1000);
    expect(sink.take()).toEqual(['BOOKMARK 31']);
  });

  // cache_watcher.go nextBookmarkTime / TestCacherSendsMultipleWatchBookmarks.
  it('sends a last bookmark 2 s before the deadline', () => {
    const hub = hubWith({ bookmarkIntervalMs: 60_000 });
    hub.reset('10', []);
    hub.progress('11');
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '0', sendInitialEvents: false, allowBookmarks: true, deadline: Date.now() + 10_000 }), sink);
    hub.progress('12');
    vi.advanceTimersByTime(7999);
    expect(sink.take()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sink.take()).toEqual(['BOOKMARK 12']);
    hub.progress('13');
    vi.advanceTimersByTime(120_000);
    expect(sink.take()).toEqual([]);
  });
});

describe('slow consumers (rule 7)', () => {
  // TestDispatchEventWillNotBeBlockedByTimedOutWatcher (cacher_whitebox_test.go).
  it('closes a watcher whose buffer overflows without blocking the others', () => {
    const hub = hubWith({ bufferSize: 3 });
    hub.reset('10', []);
    const slow = new RecordingSink();
    const fast = new RecordingSink();
    hub.watch(request({ resourceVersion: '10' }), slow);
    hub.watch(request({ resourceVersion: '10' }), fast);
    slow.accepting = false;

    hub.publish({ type: 'ADDED', object: obj('ns', 'a', 11) }); // written, then the sink pushes back
    for (let rv = 12; rv <= 14; rv++) hub.publish({ type: 'ADDED', object: obj('ns', `p${rv}`, rv) }); // queued
    expect(slow.summary()).toEqual(['ADDED ns/a@11']);
    expect(slow.closed).toBe(0);
    hub.publish({ type: 'ADDED', object: obj('ns', 'p15', 15) }); // the fourth queued event overflows
    // Like the cacher: closed without an error event; the client re-watches from ns/a@11.
    expect(slow.summary()).toEqual(['ADDED ns/a@11']);
    expect(slow.closed).toBe(1);
    expect(fast.summary()).toHaveLength(5);
    expect(hub.stats().terminations.slowConsumer).toBe(1);
    expect(hub.stats().watchers).toBe(1);

    slow.drain(); // nothing more once closed
    expect(slow.summary()).toEqual(['ADDED ns/a@11']);
  });

  it('resumes on drain and keeps the order', () => {
    const hub = hubWith({ bufferSize: 10 });
    hub.reset('10', []);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '10' }), sink);
    sink.accepting = false;
    for (let rv = 11; rv <= 14; rv++) hub.publish({ type: 'ADDED', object: obj('ns', `p${rv}`, rv) });
    expect(sink.summary()).toEqual(['ADDED ns/p11@11']);
    sink.drain();
    expect(sink.take()).toEqual(['ADDED ns/p11@11', 'ADDED ns/p12@12', 'ADDED ns/p13@13', 'ADDED ns/p14@14']);
    hub.publish({ type: 'ADDED', object: obj('ns', 'p15', 15) });
    expect(sink.take()).toEqual(['ADDED ns/p15@15']);
  });

  // TestCacheWatcherDraining (cache_watcher_test.go): with the end bookmark
  // still to send, the watcher finishes the initial events before closing.
  it('finishes a watch-list up to its end bookmark before closing', () => {
    const hub = hubWith({ bufferSize: 1 });
    hub.reset('10', [obj('ns', 'a', 3), obj('ns', 'b', 4)]);
    const sink = new RecordingSink();
    sink.accepting = false;
    hub.watch(request({ resourceVersion: '0', sendInitialEvents: true, allowBookmarks: true }), sink);
    hub.publish({ type: 'ADDED', object: obj('ns', 'c', 11) });
    hub.publish({ type: 'ADDED', object: obj('ns', 'd', 12) }); // overflow
    expect(sink.closed).toBe(0);
    sink.drain();
    expect(sink.take()).toEqual(['ADDED ns/a@3', 'ADDED ns/b@4', 'BOOKMARK 10 end']);
    expect(sink.closed).toBe(1);
    expect(hub.stats().terminations.slowConsumer).toBe(1);
  });

  it('does not count initial events against the buffer', () => {
    const hub = hubWith({ bufferSize: 1 });
    const objects = Array.from({ length: 50 }, (_, i) => obj('ns', `o${String(i).padStart(2, '0')}`, i + 1));
    hub.reset('100', objects);
    const sink = new RecordingSink();
    sink.accepting = false;
    hub.watch(request({ resourceVersion: '0' }), sink);
    for (let i = 0; i < 50; i++) sink.drain();
    expect(sink.summary()).toHaveLength(50);
    expect(sink.closed).toBe(0);
  });

  it('detaches a sink that throws and keeps serving the others', () => {
    const errors: unknown[] = [];
    const hub = hubWith({ onSinkError: (e) => errors.push(e) });
    hub.reset('10', []);
    const broken = new RecordingSink();
    broken.send = () => {
      throw new Error('socket gone');
    };
    const healthy = new RecordingSink();
    hub.watch(request({ resourceVersion: '10' }), broken);
    hub.watch(request({ resourceVersion: '10' }), healthy);
    hub.publish({ type: 'ADDED', object: obj('ns', 'a', 11) });
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 12) });
    expect(healthy.summary()).toEqual(['ADDED ns/a@11', 'ADDED ns/b@12']);
    expect(errors).toHaveLength(1);
    expect(hub.stats().terminations.sinkError).toBe(1);
    expect(hub.stats().watchers).toBe(1);
  });
});

describe('reset (relist)', () => {
  // TestCacherDontMissEventsOnReinitialization / TestCacheIntervalInvalidationStopsWatch
  // (cacher_whitebox_test.go): watchers cannot continue across a relist
  // that passed their position.
  it('ends open watchers with 410 Expired', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const first = new RecordingSink();
    const second = new RecordingSink();
    hub.watch(request({ resourceVersion: '0', namespace: 'ns' }), first);
    hub.watch(request({ resourceVersion: '10' }), second);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 15) });
    first.take();
    second.take();

    hub.reset('20', [obj('ns', 'a', 3), obj('ns', 'c', 18)]);
    expect(first.take()).toEqual(['ERROR 410 Expired: too old resource version: 15 (20)']);
    expect(second.take()).toEqual(['ERROR 410 Expired: too old resource version: 15 (20)']);
    expect(first.closed).toBe(1);
    expect(second.closed).toBe(1);
    expect(hub.stats().watchers).toBe(0);
    expect(hub.stats().terminations.expired).toBe(2);

    // After the relist the window starts at its resourceVersion.
    const old = new RecordingSink();
    hub.watch(request({ resourceVersion: '15' }), old);
    expect(old.take()).toEqual(['ERROR 410 Expired: too old resource version: 15 (20)']);
  });

  it('keeps watchers already positioned at or after the relist', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const ahead = new RecordingSink();
    const pending = new RecordingSink();
    hub.watch(request({ resourceVersion: '25' }), ahead);
    hub.watch(request({ resourceVersion: '22', sendInitialEvents: true, allowBookmarks: true }), pending);
    hub.reset('25', [obj('ns', 'a', 24)]);
    expect(ahead.take()).toEqual([]);
    expect(ahead.closed).toBe(0);
    expect(pending.take()).toEqual(['ADDED ns/a@24', 'BOOKMARK 25 end']);
    hub.publish({ type: 'MODIFIED', object: obj('ns', 'a', 26) });
    expect(ahead.take()).toEqual(['MODIFIED ns/a@26']);
    expect(pending.take()).toEqual(['MODIFIED ns/a@26']);
  });
});

describe('namespaces', () => {
  // RunTestNamespaceScopedWatch / RunTestClusterScopedWatch (watcher_tests.go).
  it('isolates namespaced watchers and feeds all-namespaces watchers everything', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const a = new RecordingSink();
    const b = new RecordingSink();
    const all = new RecordingSink();
    hub.watch(request({ resourceVersion: '10', namespace: 'a' }), a);
    hub.watch(request({ resourceVersion: '10', namespace: 'b' }), b);
    hub.watch(request({ resourceVersion: '10' }), all);
    hub.publish({ type: 'ADDED', object: obj('a', 'x', 11) });
    hub.publish({ type: 'ADDED', object: obj('b', 'x', 12) });
    hub.publish({ type: 'DELETED', object: obj('a', 'x', 13) });
    expect(a.summary()).toEqual(['ADDED a/x@11', 'DELETED a/x@13']);
    expect(b.summary()).toEqual(['ADDED b/x@12']);
    expect(all.summary()).toEqual(['ADDED a/x@11', 'ADDED b/x@12', 'DELETED a/x@13']);
  });

  it('replays only the watcher namespace from the history', () => {
    const hub = hubWith();
    hub.reset('10', []);
    hub.publish({ type: 'ADDED', object: obj('tenant', 'x', 11) });
    hub.publish({ type: 'ADDED', object: obj('tenant-a', 'x', 12) });
    hub.publish({ type: 'ADDED', object: obj('tenant-b', 'y', 13) });
    const namespaced = new RecordingSink();
    const everywhere = new RecordingSink();
    hub.watch(request({ resourceVersion: '10', namespace: 'tenant-a' }), namespaced);
    hub.watch(request({ resourceVersion: '10' }), everywhere);
    expect(namespaced.summary()).toEqual(['ADDED tenant-a/x@12']);
    expect(everywhere.summary()).toEqual(['ADDED tenant/x@11', 'ADDED tenant-a/x@12', 'ADDED tenant-b/y@13']);
  });

  it('only evaluates the watchers of the event namespace', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const counting = new SelectionPredicate(parseLabelSelector(''), parseFieldSelector('', selectableFields));
    const evaluations = vi.spyOn(counting, 'matches');
    const sinks: RecordingSink[] = [];
    for (let i = 0; i < 1000; i++) {
      const sink = new RecordingSink();
      sinks.push(sink);
      hub.watch(request({ resourceVersion: '10', namespace: `ns-${i}`, selection: counting }), sink);
    }
    hub.publish({ type: 'ADDED', object: obj('ns-7', 'x', 11) });
    expect(evaluations).toHaveBeenCalledTimes(1);
    expect(sinks.filter((s) => s.events.length > 0)).toEqual([sinks[7]]);
    expect(hub.stats().watchers).toBe(1000);
  });
});

describe('lifecycle', () => {
  it('refuses watches before the first reset with 429', () => {
    const hub = hubWith();
    const error = thrown(() => hub.watch(request({ resourceVersion: '0' }), new RecordingSink()));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).toStatus()).toMatchObject({
      code: 429,
      reason: 'TooManyRequests',
      message: 'storage is (re)initializing',
      details: { retryAfterSeconds: 1 },
    });
  });

  it('stops delivery on unsubscribe without closing the sink', () => {
    const hub = hubWith();
    hub.reset('10', []);
    const sink = new RecordingSink();
    const stop = hub.watch(request({ resourceVersion: '10' }), sink);
    hub.publish({ type: 'ADDED', object: obj('ns', 'a', 11) });
    stop();
    stop();
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 12) });
    expect(sink.summary()).toEqual(['ADDED ns/a@11']);
    expect(sink.closed).toBe(0);
    expect(hub.stats().watchers).toBe(0);
  });

  // TestCacherDontAcceptRequestsStopped (cacher_whitebox_test.go). Rule 8.
  it('stop() closes every watcher without an error and refuses new ones', async () => {
    const hub = hubWith();
    hub.reset('10', []);
    const active = new RecordingSink();
    const pending = new RecordingSink();
    hub.watch(request({ resourceVersion: '10' }), active);
    hub.watch(request({ resourceVersion: '50', sendInitialEvents: true, allowBookmarks: true }), pending);
    const waiting = hub.waitForResourceVersion('60');
    hub.stop();
    expect(active.summary()).toEqual([]);
    expect(active.closed).toBe(1);
    expect(pending.closed).toBe(1);
    expect(hub.stats().watchers).toBe(0);
    await expect(waiting).rejects.toMatchObject({ code: 429, message: 'apiserver cacher is stopped' });
    expect(() => hub.watch(request({ resourceVersion: '0' }), new RecordingSink())).toThrow('apiserver cacher is stopped');
  });

  it('counts what it does', () => {
    const hub = hubWith();
    hub.reset('10', [obj('ns', 'a', 3)]);
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '0' }), sink);
    hub.publish({ type: 'ADDED', object: obj('ns', 'b', 11) });
    hub.watch(request({ resourceVersion: '1' }), new RecordingSink());
    expect(hub.stats()).toEqual({
      watchers: 1,
      pendingWatchers: 0,
      objects: 2,
      historyEvents: 1,
      eventsPublished: 1,
      eventsDelivered: 3,
      terminations: { expired: 1, slowConsumer: 0, tooLargeResourceVersion: 0, sinkError: 0 },
    });
  });
});

describe('waitForResourceVersion', () => {
  // TestWaitUntilFreshAndGetList / TestWaitUntilFreshAndListTimeout (watch_cache_test.go).
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves at once when the feed is fresh enough', async () => {
    const hub = hubWith();
    hub.reset('10', []);
    await expect(hub.waitForResourceVersion('10')).resolves.toBeUndefined();
    await expect(hub.waitForResourceVersion('0')).resolves.toBeUndefined();
    await expect(hub.waitForResourceVersion('')).resolves.toBeUndefined();
  });

  it('resolves when the feed reaches the resourceVersion', async () => {
    const hub = hubWith();
    hub.reset('10', []);
    let done = false;
    const waiting = hub.waitForResourceVersion('12').then(() => {
      done = true;
    });
    hub.publish({ type: 'ADDED', object: obj('ns', 'a', 11) });
    await Promise.resolve();
    expect(done).toBe(false);
    hub.progress('12');
    await waiting;
    expect(done).toBe(true);
  });

  it('rejects with 504 after the freshness timeout, and on abort', async () => {
    const hub = hubWith({ freshnessTimeoutMs: 3000 });
    hub.reset('10', []);
    const late = hub.waitForResourceVersion('20');
    const assertion = expect(late).rejects.toMatchObject({ code: 504, message: 'Timeout: Too large resource version: 20, current: 10' });
    vi.advanceTimersByTime(3000);
    await assertion;

    const controller = new AbortController();
    const aborted = hub.waitForResourceVersion('20', controller.signal);
    controller.abort(new Error('client went away'));
    await expect(aborted).rejects.toThrow('client went away');
    await expect(hub.waitForResourceVersion('x1')).rejects.toMatchObject({ code: 422 });
  });
});

/** A derived state for the tests below: objects set by hand, as a model would compute them. */
class HandState {
  readonly objects = new Map<string, ApiObject>();
  get(namespace: string, name: string): ApiObject | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }
  list(namespace?: string): ApiObject[] {
    return [...this.objects.values()].filter((o) => namespace === undefined || o.metadata.namespace === namespace);
  }
  count(): number {
    return this.objects.size;
  }
  set(object: ApiObject): ApiObject | undefined {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    const prev = this.objects.get(key);
    this.objects.set(key, object);
    return prev;
  }
}

describe('derived hubs', () => {
  function derivedHub(historySize = 100): { hub: WatchHub; state: HandState } {
    const state = new HandState();
    const hub = hubWith({ derivedState: state, historySize });
    hub.restart('10');
    return { hub, state };
  }

  function change(hub: WatchHub, state: HandState, object: ApiObject, position: number): void {
    const prev = state.set(object);
    hub.publish({ type: prev === undefined ? 'ADDED' : 'MODIFIED', object }, { resourceVersion: String(position), prev });
  }

  it('serves its state from the source and replays changes at the resume resourceVersion too (repeats, never misses)', () => {
    const { hub, state } = derivedHub();
    change(hub, state, obj('a', 'x', 11), 12);
    change(hub, state, obj('a', 'y', 9), 12);
    change(hub, state, obj('a', 'z', 13), 13);
    expect(hub.list('a').map((o) => o.metadata.name)).toEqual(['x', 'y', 'z']);
    expect(hub.stats().objects).toBe(3);
    const from12 = new RecordingSink();
    hub.watch(request({ resourceVersion: '12' }), from12);
    // The object carries its own resourceVersion (its inputs'), the history its position.
    expect(from12.take()).toEqual(['ADDED a/x@11', 'ADDED a/y@9', 'ADDED a/z@13']);
    const from13 = new RecordingSink();
    hub.watch(request({ resourceVersion: '13' }), from13);
    expect(from13.take()).toEqual(['ADDED a/z@13']);
    expect(() => {
      hub.publish({ type: 'ADDED', object: obj('a', 'w', 1) }, { resourceVersion: '12', prev: undefined });
    }).toThrow('out of order');
    expect(() => {
      hub.reset('20', []);
    }).toThrow('derived');
  });

  it('gives every watcher the same event object, so it is serialized once', () => {
    const { hub, state } = derivedHub();
    const one = new RecordingSink();
    const two = new RecordingSink();
    hub.watch(request({ resourceVersion: '10' }), one);
    hub.watch(request({ resourceVersion: '10', namespace: 'a' }), two);
    change(hub, state, obj('a', 'x', 11), 11);
    expect(one.events).toHaveLength(1);
    expect(one.events[0]).toBe(two.events[0]);
  });

  it('ends a resume across a gap of its namespace (or any gap, cluster-wide) with 410, and not others', () => {
    const { hub, state } = derivedHub();
    change(hub, state, obj('a', 'x', 11), 11);
    hub.gap('12', new Set(['b']));
    expect(hub.watched('b')).toBe(false);
    const inA = new RecordingSink();
    const inB = new RecordingSink();
    const everywhere = new RecordingSink();
    hub.watch(request({ resourceVersion: '11', namespace: 'a' }), inA);
    hub.watch(request({ resourceVersion: '11', namespace: 'b' }), inB);
    hub.watch(request({ resourceVersion: '11' }), everywhere);
    expect(inA.take()).toEqual(['ADDED a/x@11']);
    expect(inB.take()).toEqual(['ERROR 410 Expired: too old resource version: 11 (13)']);
    expect(everywhere.take()).toEqual(['ERROR 410 Expired: too old resource version: 11 (13)']);
    expect(hub.watched('a')).toBe(true);
  });

  it('expires resumes at a resourceVersion whose changes were partly evicted', () => {
    const { hub, state } = derivedHub(2);
    change(hub, state, obj('a', 'x', 20), 20);
    change(hub, state, obj('a', 'y', 20), 20);
    change(hub, state, obj('a', 'z', 21), 21);
    const from20 = new RecordingSink();
    hub.watch(request({ resourceVersion: '20' }), from20);
    expect(from20.take()).toEqual(['ERROR 410 Expired: too old resource version: 20 (21)']);
    const from21 = new RecordingSink();
    hub.watch(request({ resourceVersion: '21' }), from21);
    expect(from21.take()).toEqual(['ADDED a/z@21']);
  });

  it('restarts on a relist: watchers behind it get 410', () => {
    const { hub } = derivedHub();
    const sink = new RecordingSink();
    hub.watch(request({ resourceVersion: '10' }), sink);
    hub.restart('30');
    expect(sink.take()).toEqual(['ERROR 410 Expired: too old resource version: 10 (30)']);
    expect(sink.closed).toBe(1);
  });
});
