// The soak's steady load on one replica: readers (GET a claim, LIST a
// namespace's claims, LIST its HardwareData), writers (a merge patch of a
// label on a claim the binder does not bind), and binding churn (a claim
// created against the free pool-b hosts, waited for until Associated,
// deleted, waited for until gone). Every answer other than the expected
// one is recorded in the ErrorLog.
import { CLAIMS, newClaim, tenantNamespace } from '../bench/scenario.js';
import type { SoakClient } from './client.js';
import { errorKind, reasonOf } from './client.js';
import type { SoakConfig } from './config.js';
import type { ErrorLog } from './errors.js';

export interface LoadCounts {
  reads: number;
  writes: number;
  churnCycles: number;
  /** Seconds from a churn claim's create until it was Associated, summed (for the mean). */
  bindSeconds: number;
}

const BIND_TIMEOUT_MS = 180_000;

interface ClaimStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

export class Load {
  readonly counts: LoadCounts = { reads: 0, writes: 0, churnCycles: 0, bindSeconds: 0 };
  #running = true;
  readonly #loops: Promise<void>[] = [];

  constructor(
    private readonly client: SoakClient,
    private readonly config: SoakConfig,
    private readonly errors: ErrorLog,
  ) {}

  start(): void {
    const { readers, writers, churners } = this.config;
    for (let i = 0; i < readers; i++) this.#loops.push(this.#loop(() => this.#read()));
    for (let i = 0; i < writers; i++) this.#loops.push(this.#loop(() => this.#write()));
    for (let i = 0; i < churners; i++) this.#loops.push(this.#loop(() => this.#churn(i)));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  async #loop(operation: () => Promise<void>): Promise<void> {
    while (this.#running) {
      await operation();
      await sleep(this.config.pauseMs);
    }
  }

  /** One request, its failures recorded; the answer when it had the expected status. */
  async #call(operation: string, method: string, path: string, expected: readonly number[], body?: unknown, contentType?: string): Promise<string | undefined> {
    try {
      const answer = await this.client.request(method, path, body, contentType);
      if (expected.includes(answer.status)) return answer.body;
      this.errors.record(this.client.name, operation, `${answer.status} ${reasonOf(answer.body)}`);
    } catch (error) {
      this.errors.record(this.client.name, operation, errorKind(error));
    }
    return undefined;
  }

  #namespace(): string {
    return tenantNamespace(randomBelow(this.config.namespaces));
  }

  async #read(): Promise<void> {
    const namespace = this.#namespace();
    const kind = randomBelow(3);
    const path =
      kind === 0
        ? `${CLAIMS}/namespaces/${namespace}/hostclaims/c-${randomBelow(this.config.claimsPerNamespace)}`
        : kind === 1
          ? `${CLAIMS}/namespaces/${namespace}/hostclaims`
          : `${CLAIMS}/namespaces/${namespace}/hardwaredata?limit=50`;
    if ((await this.#call(['get', 'list', 'list-hardwaredata'][kind] ?? 'read', 'GET', path, [200])) !== undefined) this.counts.reads += 1;
  }

  async #write(): Promise<void> {
    // c-0 is bound in setup; the others select a pool with no host and are never bound: only this loop writes them besides the binder's status.
    const claim = `c-${1 + randomBelow(Math.max(1, this.config.claimsPerNamespace - 1))}`;
    const patch = { metadata: { labels: { 'soak.metal3.io/tick': String(this.counts.writes % 1000) } } };
    const answered = await this.#call('patch', 'PATCH', `${CLAIMS}/namespaces/${this.#namespace()}/hostclaims/${claim}`, [200], patch, 'application/merge-patch+json');
    if (answered !== undefined) this.counts.writes += 1;
  }

  async #churn(loop: number): Promise<void> {
    const namespace = this.#namespace();
    const name = `churn-${this.client.name}-${loop}-${this.counts.churnCycles % 100_000}-${Date.now() % 100_000}`;
    const path = `${CLAIMS}/namespaces/${namespace}/hostclaims`;
    const created = performance.now();
    if ((await this.#call('churn-create', 'POST', path, [201], newClaim(name, { 'soak.metal3.io/churn': 'true' }, 'b'))) === undefined) return;
    const associated = await this.#waitFor(`${path}/${name}`, (body) => body !== undefined && isAssociated(JSON.parse(body) as ClaimStatus));
    if (!associated) this.errors.record(this.client.name, 'churn-bind', `not Associated within ${BIND_TIMEOUT_MS / 1000} s`);
    else this.counts.bindSeconds += (performance.now() - created) / 1000;
    // Deleted whatever happened, so the pool's hosts come back.
    for (let attempt = 0; attempt < 10; attempt++) {
      if ((await this.#call('churn-delete', 'DELETE', `${path}/${name}`, [200, 202, 404])) !== undefined) break;
      await sleep(1000);
    }
    const gone = await this.#waitFor(`${path}/${name}`, (_body, status) => status === 404);
    if (!gone) this.errors.record(this.client.name, 'churn-delete', `still there ${BIND_TIMEOUT_MS / 1000} s after its delete`);
    if (associated && gone) this.counts.churnCycles += 1;
  }

  /** Polls a claim every second until `done` says so (transport failures while polling are recorded). */
  async #waitFor(path: string, done: (body: string | undefined, status: number) => boolean): Promise<boolean> {
    const deadline = performance.now() + BIND_TIMEOUT_MS;
    while (performance.now() < deadline) {
      try {
        const answer = await this.client.request('GET', path);
        if (done(answer.status === 200 ? answer.body : undefined, answer.status)) return true;
        if (answer.status !== 200 && answer.status !== 404) this.errors.record(this.client.name, 'churn-poll', `${answer.status} ${reasonOf(answer.body)}`);
      } catch (error) {
        this.errors.record(this.client.name, 'churn-poll', errorKind(error));
      }
      await sleep(1000);
    }
    return false;
  }
}

function isAssociated(claim: ClaimStatus): boolean {
  return (claim.status?.conditions ?? []).some((condition) => condition.type === 'Associated' && condition.status === 'True');
}

function randomBelow(n: number): number {
  return Math.floor(Math.random() * n);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
