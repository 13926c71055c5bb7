export interface PollOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Appended to the timeout error, e.g. the last observed state or a log tail. */
  describeFailure?: () => string;
}

/**
 * Calls `probe` until it returns a value other than undefined, or throws when
 * the deadline passes. A probe that throws aborts the wait immediately, so
 * probes signal fatal conditions (a process that exited) by throwing.
 */
export async function pollUntil<T>(
  description: string,
  probe: () => Promise<T | undefined>,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 200;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      const detail = options.describeFailure?.() ?? '';
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${description}${detail ? `\n${detail}` : ''}`);
    }
    await delay(intervalMs);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
