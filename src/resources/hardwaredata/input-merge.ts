/**
 * The changes of several inputs (informers on different resources of one
 * etcd) applied in one order every replica agrees on: etcd revision order.
 * A change at revision T is applied only once every other input has shown
 * it has nothing older left to deliver (its watermark — last event,
 * bookmark, list or fence — is ≥ T). Informers deliver independently, so
 * without this a replica could apply a host change at 100 after a policy
 * change at 120, and a watch resumed there from 120 would miss the host
 * change another replica numbered 100 (the reference's "release events in
 * RV order once every input's watermark has passed them").
 *
 * An input that stays quiet would hold everything up until its next
 * bookmark (about a minute), so a change waiting on it asks for a fence of
 * that input (fence.ts) after a short delay.
 */

export type ApplyChange = (position: bigint) => void;

interface InputState {
  readonly pending: { readonly rv: bigint; readonly apply: ApplyChange }[];
  watermark: bigint;
  /** Not served (CRD absent): never holds anything up. */
  absent: boolean;
  /** A watermark known from elsewhere (the HostClaim hub's own progress). */
  readonly external: (() => bigint) | undefined;
  prodTimer: ReturnType<typeof setTimeout> | undefined;
}

export interface InputMergeOptions {
  /** Applies one change at its position (its revision, or later after a relist). */
  readonly position: (rv: bigint) => bigint;
  /** Everything up to rv has been applied. */
  readonly onProgress: (rv: bigint) => void;
  /** The input holds changes up; its watermark should be proven (fence). */
  readonly prod: (input: string) => void;
  /** How long a change waits on an input before the input is prodded. */
  readonly prodDelayMs: number;
}

export class InputMerge {
  private readonly inputs = new Map<string, InputState>();
  private draining = false;

  constructor(private readonly options: InputMergeOptions) {}

  addInput(name: string, external?: () => bigint): void {
    this.inputs.set(name, { pending: [], watermark: 0n, absent: false, external, prodTimer: undefined });
  }

  /** One change of the input, in its revision order. */
  enqueue(name: string, rv: bigint, apply: ApplyChange): void {
    const input = this.input(name);
    input.absent = false;
    input.pending.push({ rv, apply });
    if (rv > input.watermark) input.watermark = rv;
    this.drain();
  }

  /** The input has delivered everything up to rv (bookmark, fence). */
  advance(name: string, rv: bigint): void {
    const input = this.input(name);
    if (rv > input.watermark) input.watermark = rv;
    this.drain();
  }

  /** A (re)list at rv (or the input vanished): what was pending is folded into the new state. */
  relist(name: string, rv: bigint, absent: boolean): void {
    const input = this.input(name);
    input.pending.length = 0;
    input.absent = absent;
    if (rv > input.watermark) input.watermark = rv;
    this.drain();
  }

  watermarkOf(name: string): bigint {
    return this.markOf(this.input(name));
  }

  /** The oldest watermark of the inputs that are served: everything up to it is known. */
  watermark(): bigint {
    let oldest: bigint | undefined;
    for (const input of this.inputs.values()) {
      if (input.absent) continue;
      const mark = this.markOf(input);
      if (oldest === undefined || mark < oldest) oldest = mark;
    }
    return oldest ?? 0n;
  }

  stop(): void {
    for (const input of this.inputs.values()) clearTimeout(input.prodTimer);
  }

  /** Applies every change no input can still precede, oldest first. */
  drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        const next = this.oldestPending();
        if (next === undefined) break;
        const lagging = [...this.inputs.entries()].filter(([, input]) => input !== next.input && !input.absent && this.markOf(input) < next.rv);
        if (lagging.length > 0) {
          for (const [name, input] of lagging) this.scheduleProd(name, input);
          break;
        }
        const change = next.input.pending.shift();
        change?.apply(this.options.position(next.rv));
      }
      const oldest = this.oldestPending();
      const mark = this.watermark();
      if (oldest === undefined || oldest.rv > mark) this.options.onProgress(mark);
    } finally {
      this.draining = false;
    }
  }

  private oldestPending(): { readonly input: InputState; readonly rv: bigint } | undefined {
    let best: { readonly input: InputState; readonly rv: bigint } | undefined;
    for (const input of this.inputs.values()) {
      const head = input.pending[0];
      if (head !== undefined && (best === undefined || head.rv < best.rv)) best = { input, rv: head.rv };
    }
    return best;
  }

  private markOf(input: InputState): bigint {
    const external = input.external?.() ?? 0n;
    return external > input.watermark ? external : input.watermark;
  }

  private scheduleProd(name: string, input: InputState): void {
    if (input.prodTimer !== undefined) return;
    input.prodTimer = setTimeout(() => {
      input.prodTimer = undefined;
      this.drain();
      if (this.oldestPending() !== undefined && this.markOf(input) < (this.oldestPending()?.rv ?? 0n)) this.options.prod(name);
    }, this.options.prodDelayMs);
    input.prodTimer.unref();
  }

  private input(name: string): InputState {
    const input = this.inputs.get(name);
    if (input === undefined) throw new Error(`InputMerge: unknown input ${name}`);
    return input;
  }
}
