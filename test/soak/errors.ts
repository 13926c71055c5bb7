// Errors of a soak run, counted by kind (`<replica> <operation> <status or
// transport error>`). An error on a replica between its kill and a short
// while after it serves again is expected (its clients lose their
// connections and the aggregator answers 503 until it is back); any other
// error is unexpected and fails the run.

/** After a replica serves again, its clients may still meet the old connection's failure for this long. */
const SETTLE_MS = 15_000;

export interface ErrorCounts {
  readonly expected: Record<string, number>;
  readonly unexpected: Record<string, number>;
  /** The first few unexpected errors, with when they happened (seconds into the run). */
  readonly firstUnexpected: { readonly atSeconds: number; readonly kind: string; readonly detail: string }[];
}

export class ErrorLog {
  readonly #expected = new Map<string, number>();
  readonly #unexpected = new Map<string, number>();
  readonly #first: ErrorCounts['firstUnexpected'] = [];
  /** Per replica: down since (ms), or the time it served again (ms) while settling. */
  readonly #down = new Map<string, { since: number; until: number | undefined }>();
  readonly #started = performance.now();

  /** `replica` is being killed: its errors are expected until it serves again (plus SETTLE_MS). */
  down(replica: string): void {
    this.#down.set(replica, { since: performance.now(), until: undefined });
  }

  up(replica: string): void {
    const window = this.#down.get(replica);
    if (window !== undefined) window.until = performance.now() + SETTLE_MS;
  }

  isDown(replica: string): boolean {
    const window = this.#down.get(replica);
    return window !== undefined && (window.until === undefined || performance.now() < window.until);
  }

  record(replica: string, operation: string, rawDetail: string): void {
    const detail = rawDetail.replace(/\s+/g, ' ').trim();
    const kind = `${replica} ${operation} ${detail.slice(0, 80)}`;
    const counts = this.isDown(replica) ? this.#expected : this.#unexpected;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    if (counts === this.#unexpected && this.#first.length < 20) {
      this.#first.push({ atSeconds: Math.round((performance.now() - this.#started) / 1000), kind, detail: detail.slice(0, 300) });
    }
  }

  unexpectedTotal(): number {
    return [...this.#unexpected.values()].reduce((sum, count) => sum + count, 0);
  }

  counts(): ErrorCounts {
    return { expected: Object.fromEntries(this.#expected), unexpected: Object.fromEntries(this.#unexpected), firstUnexpected: [...this.#first] };
  }
}
