/**
 * Requests kept going while a dependency fails, each answer recorded with
 * when it was sent and how long it took, so a test can say afterwards what
 * every single request got. Each lane sends one request at a time (a hung
 * request holds its lane up, never the others) and pauses between requests.
 */
import type { RawResponse } from './raw-http.js';

export interface Answer {
  readonly lane: string;
  /** What was asked, e.g. `create w-3`. */
  readonly what: string;
  /** ms since the traffic started. */
  readonly at: number;
  readonly durationMs: number;
  /** 0 when no HTTP answer came (transport error). */
  readonly status: number;
  readonly reason: string | undefined;
  readonly retryAfter: string | undefined;
  readonly body: string;
  readonly error: string | undefined;
  /** The status is one the request gets when nothing fails. */
  readonly expected: boolean;
}

/** One request of a lane: what it is, and how to send it. */
export interface Step {
  readonly what: string;
  readonly send: () => Promise<RawResponse>;
  /** The statuses it gets when nothing fails. */
  readonly expected: readonly number[];
  /** Told the answer (e.g. to remember a created name). */
  readonly then?: (answer: Answer) => void;
}

export class Traffic {
  readonly answers: Answer[] = [];
  private readonly startedAt = Date.now();
  private running = true;
  private readonly lanes: Promise<void>[] = [];

  /** Starts a lane: `next()` gives its next request (undefined: nothing to do this round). */
  lane(name: string, pauseMs: number, next: () => Step | undefined): void {
    this.lanes.push(this.loop(name, pauseMs, next));
  }

  /** ms since the traffic started. */
  now(): number {
    return Date.now() - this.startedAt;
  }

  /** Stops sending and waits for the requests in flight. */
  async stop(): Promise<Answer[]> {
    this.running = false;
    await Promise.all(this.lanes);
    return this.answers;
  }

  private async loop(name: string, pauseMs: number, next: () => Step | undefined): Promise<void> {
    while (this.running) {
      const step = next();
      if (step !== undefined) {
        const answer = await this.send(name, step);
        this.answers.push(answer);
        step.then?.(answer);
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  private async send(lane: string, step: Step): Promise<Answer> {
    const at = this.now();
    try {
      const response = await step.send();
      const status = response.json as { reason?: string } | undefined;
      const retryAfter = response.headers['retry-after'];
      return {
        lane,
        what: step.what,
        at,
        durationMs: this.now() - at,
        status: response.status,
        reason: typeof status?.reason === 'string' ? status.reason : undefined,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
        body: response.body,
        error: undefined,
        expected: step.expected.includes(response.status),
      };
    } catch (error) {
      return { lane, what: step.what, at, durationMs: this.now() - at, status: 0, reason: undefined, retryAfter: undefined, body: '', error: (error as Error).message, expected: false };
    }
  }
}

/**
 * A retriable failure as kube-apiserver's clients know it: a Status 503
 * ServiceUnavailable with Retry-After, a Status 504 Timeout, or kube's own
 * 429 TooManyRequests with Retry-After (a CRD's storage reinitializing after
 * kube-apiserver restarts, passed through as kube answers it).
 */
export function isRetriable(answer: Answer): boolean {
  const isStatus = answer.body.includes('"kind":"Status"');
  if (!isStatus) return false;
  if (answer.status === 503) return answer.reason === 'ServiceUnavailable' && answer.retryAfter !== undefined;
  if (answer.status === 504) return answer.reason === 'Timeout';
  if (answer.status === 429) return answer.reason === 'TooManyRequests' && answer.retryAfter !== undefined;
  return false;
}

/** One line per answer, for failure messages. */
export function describeAnswers(answers: readonly Answer[]): string {
  return answers
    .map((a) => `${(a.at / 1000).toFixed(1)}s ${a.lane} ${a.what}: ${a.status}${a.reason === undefined ? '' : ` ${a.reason}`} in ${a.durationMs} ms${a.error === undefined ? '' : ` (${a.error})`} ${a.status >= 300 ? a.body.slice(0, 200) : ''}`)
    .join('\n');
}

/** Counts per lane and status, e.g. `direct reads: 200×31 503×4`. */
export function summarizeAnswers(answers: readonly Answer[]): string {
  const lanes = new Map<string, Map<number, number>>();
  for (const answer of answers) {
    const counts = lanes.get(answer.lane) ?? new Map<number, number>();
    counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
    lanes.set(answer.lane, counts);
  }
  return [...lanes]
    .map(([lane, counts]) => `${lane}: ${[...counts].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(' ')}`)
    .join('; ');
}
