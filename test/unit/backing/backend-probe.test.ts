import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackendProbe, kubeReadinessPath } from '../../../src/backing/backend-probe.js';
import { KubeApiError, KubeUnavailableError, type Representation } from '../../../src/backing/kube-client.js';

/** A kube client whose lists succeed or fail as the test says, recording what each asked. */
class FakeClient {
  healthy = true;
  hang = false;
  readonly calls: { path: string; query: unknown; representation: Representation; signal: AbortSignal | undefined }[] = [];

  list<T>(path: string, query: unknown, representation: Representation, signal?: AbortSignal): Promise<T> {
    this.calls.push({ path, query, representation, signal });
    if (this.hang) {
      return new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => {
          reject(new Error('aborted'));
        });
      });
    }
    if (!this.healthy) return Promise.reject(new KubeUnavailableError(false, { cause: new Error('connect ECONNREFUSED') }));
    return Promise.resolve({ metadata: { resourceVersion: '5' }, items: [] } as T);
  }

  /** kube-apiserver's own /readyz: 500 until its informers (RBAC among them) have synced. */
  kubeReady = true;
  readonly textPaths: string[] = [];

  getText(path: string): Promise<string> {
    this.textPaths.push(path);
    if (!this.healthy) return Promise.reject(new KubeUnavailableError(false, { cause: new Error('connect ECONNREFUSED') }));
    return this.kubeReady ? Promise.resolve('ok') : Promise.reject(new KubeApiError(500, { message: '[-]informer-sync failed: reason withheld' }));
  }
}

const path = '/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords';

describe('BackendProbe', () => {
  let probe: BackendProbe | undefined;

  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });

  afterEach(() => {
    probe?.stop();
    vi.useRealTimers();
  });

  it('is not ready until kube-apiserver answered a consistent, metadata-only list of one record', async () => {
    const client = new FakeClient();
    client.healthy = false;
    probe = new BackendProbe(client, path, { intervalMs: 1000 });
    probe.start();
    await vi.advanceTimersByTimeAsync(1);
    expect(probe.failure()).toBe('kube-apiserver has not answered yet');
    client.healthy = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(probe.failure()).toBeUndefined();
    expect(client.calls[0]).toMatchObject({ path, query: { limit: '1' }, representation: 'metadata' });
  });

  it('turns not ready after two failures in a row, ready again at the first success, and says when it recovered', async () => {
    const client = new FakeClient();
    const events: string[] = [];
    probe = new BackendProbe(client, path, {
      intervalMs: 1000,
      onFailing: () => events.push('failing'),
      onRecovered: () => events.push('recovered'),
    });
    probe.start();
    await vi.advanceTimersByTimeAsync(1);
    expect(probe.failure()).toBeUndefined();
    client.healthy = false;
    await vi.advanceTimersByTimeAsync(1000);
    // One failure is not an outage.
    expect(probe.failure()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1000);
    expect(probe.failure()).toBe('kube-apiserver failed 2 probes in a row');
    await vi.advanceTimersByTimeAsync(3000);
    expect(events).toEqual(['failing']);
    client.healthy = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(probe.failure()).toBeUndefined();
    expect(events).toEqual(['failing', 'recovered']);
  });

  it("is not ready while kube-apiserver's own /readyz fails, though it serves the list (restarted, its RBAC informers not synced)", async () => {
    const client = new FakeClient();
    client.kubeReady = false;
    probe = new BackendProbe(client, path, { intervalMs: 1000 });
    probe.start();
    await vi.advanceTimersByTimeAsync(1);
    expect(probe.failure()).toBe('kube-apiserver has not answered yet');
    client.kubeReady = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(probe.failure()).toBeUndefined();
    expect(client.textPaths).toEqual([kubeReadinessPath, kubeReadinessPath]);
  });

  it('counts a probe kube-apiserver does not answer within its timeout as a failure (a frozen kube-apiserver)', async () => {
    const client = new FakeClient();
    probe = new BackendProbe(client, path, { intervalMs: 1000, timeoutMs: 2000 });
    probe.start();
    await vi.advanceTimersByTimeAsync(1);
    client.hang = true;
    // Probes at 1 s (times out at 3 s) and 4 s (times out at 6 s).
    await vi.advanceTimersByTimeAsync(5500);
    expect(probe.failure()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1000);
    expect(probe.failure()).toBe('kube-apiserver failed 2 probes in a row');
  });

  it('tells the informers to retry after a single failed probe too', async () => {
    const client = new FakeClient();
    let recovered = 0;
    probe = new BackendProbe(client, path, { intervalMs: 1000, onRecovered: () => (recovered += 1) });
    probe.start();
    await vi.advanceTimersByTimeAsync(1);
    client.healthy = false;
    await vi.advanceTimersByTimeAsync(1000);
    client.healthy = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(recovered).toBe(1);
  });
});
