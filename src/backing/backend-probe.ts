/**
 * Can kube-apiserver serve this server consistently right now? The answer
 * behind the `kube-apiserver` readiness check, as kube-apiserver's own
 * /readyz has an `etcd` check (k8s.io/apiserver pkg/server/healthz,
 * storage/storagebackend/factory `EtcdHealthCheck`): an API server whose
 * storage cannot answer is alive but not ready.
 *
 * The probe is what every consistent read of the server needs: a
 * consistent (resourceVersion unset), metadata-only LIST of at most one
 * record. kube-apiserver answers it only with etcd reachable (it reads the
 * current revision from etcd), the records' CRD served and this server's
 * RBAC loaded, so a restarted, frozen or storage-less kube-apiserver fails
 * it. It also asks for kube-apiserver's own /readyz: a restarted
 * kube-apiserver answers before its informers (RBAC among them) have
 * synced, and until then its SubjectAccessReviews deny what a RoleBinding
 * not yet loaded allows (auth/authorizer.ts does not trust a denial while
 * this probe fails). That /readyz leaves out kube-apiserver's storage
 * checks (`etcd`, `etcd-readiness`): the LIST above is this server's storage
 * check, and kube-apiserver's own lags etcd's return by up to ~20 s (its
 * check client reconnects with gRPC backoff and caches its last error),
 * while kube-apiserver already serves. One probe every `intervalMs`, each bounded by `timeoutMs`; not ready
 * after `failureThreshold` failures in a row (as a kubelet probe's
 * failureThreshold: one slow answer on a busy machine is not an outage),
 * ready again at the first success. A success after any failure runs
 * `onRecovered` (the informers then retry at once instead of waiting out
 * their backoff).
 */
import type { KubeClient } from './kube-client.js';

export interface BackendProbeOptions {
  readonly intervalMs?: number;
  readonly timeoutMs?: number;
  readonly failureThreshold?: number;
  /** Runs when a probe succeeds after one failed (not on the first success). */
  readonly onRecovered?: () => void;
  /** Runs when the server turns unready; the cause is for the log. */
  readonly onFailing?: (error: unknown) => void;
}

const defaultIntervalMs = 2_000;
const defaultTimeoutMs = 5_000;
const defaultFailureThreshold = 2;
/** kube-apiserver's readiness apart from its storage checks (healthz `exclude`). */
export const kubeReadinessPath = '/readyz?exclude=etcd&exclude=etcd-readiness';

export class BackendProbe {
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly failureThreshold: number;
  private consecutiveFailures = 0;
  private succeededOnce = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly client: Pick<KubeClient, 'list' | 'getText'>,
    private readonly path: string,
    private readonly options: BackendProbeOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? defaultIntervalMs;
    this.timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    this.failureThreshold = options.failureThreshold ?? defaultFailureThreshold;
  }

  start(): void {
    void this.probe();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** undefined while kube-apiserver serves consistent reads; otherwise why not (for the log, never for clients). */
  failure(): string | undefined {
    if (!this.succeededOnce) return 'kube-apiserver has not answered yet';
    return this.consecutiveFailures >= this.failureThreshold ? `kube-apiserver failed ${this.consecutiveFailures} probes in a row` : undefined;
  }

  private async probe(): Promise<void> {
    const deadline = new AbortController();
    const timeout = setTimeout(() => {
      deadline.abort(new Error(`no answer within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    try {
      await this.client.list(this.path, { limit: '1' }, 'metadata', deadline.signal);
      await this.client.getText(kubeReadinessPath, deadline.signal);
      const recovered = this.succeededOnce && this.consecutiveFailures > 0;
      this.consecutiveFailures = 0;
      this.succeededOnce = true;
      if (recovered) this.options.onRecovered?.();
    } catch (error) {
      this.consecutiveFailures++;
      if (this.consecutiveFailures === this.failureThreshold) this.options.onFailing?.(error);
    } finally {
      clearTimeout(timeout);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.probe(), this.intervalMs);
    this.timer.unref();
  }
}
