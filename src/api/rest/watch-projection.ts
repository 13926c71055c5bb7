/**
 * The projection hook on a watch: a sink in front of the HTTP one that
 * hands each event's object to the watcher's RequesterProjection. The hub
 * calls send() synchronously while the requester's rights are decided
 * asynchronously (a SubjectAccessReview, once per infrastructure namespace
 * per watcher), so an event whose namespace is undecided is held, with every
 * event after it (order is kept), and the hub is told to pause (send()
 * returns false, as for a full socket) until the answer came and the held
 * events were written; nothing is dropped. An ERROR then close() while
 * events are held closes after them.
 */
import type { ProjectionClass, RequesterProjection } from './projection.js';
import type { ApiObject } from './types.js';
import type { WatchEventOut } from './types.js';
import type { WatchSink } from './watch-types.js';

/** Writes one event in the given projection class; false when the connection is full. */
export type ProjectedWrite = (event: WatchEventOut, projectionClass: ProjectionClass) => boolean;

export class ProjectingSink implements WatchSink {
  private held: WatchEventOut[] = [];
  private closeRequested = false;
  private drainListener: (() => void) | undefined;

  constructor(
    private readonly projection: RequesterProjection,
    private readonly write: ProjectedWrite,
    private readonly target: Pick<WatchSink, 'close' | 'onDrain'>,
  ) {}

  send(event: WatchEventOut): boolean {
    if (this.held.length === 0 && this.isDecided(event)) return this.write(event, this.classOf(event));
    this.held.push(event);
    if (this.held.length === 1) void this.release();
    return false;
  }

  close(): void {
    if (this.held.length > 0) this.closeRequested = true;
    else this.target.close();
  }

  onDrain(listener: () => void): void {
    this.drainListener = listener;
    this.target.onDrain(listener);
  }

  /** Decides what the held events need, writes them in order, then lets the hub go on. */
  private async release(): Promise<void> {
    let accepted = true;
    while (this.held.length > 0) {
      const event = this.held[0];
      if (event === undefined) break;
      const object = objectOf(event);
      if (object !== undefined && !this.projection.isDecided(object)) await this.projection.prepare([object]);
      this.held.shift();
      try {
        accepted = this.write(event, this.classOf(event));
      } catch {
        // The connection is gone; the HTTP layer's close handler unsubscribes.
        this.held = [];
        return;
      }
    }
    if (this.closeRequested) {
      this.target.close();
      return;
    }
    // A full socket calls the listener itself when it drains.
    if (accepted) this.drainListener?.();
  }

  private isDecided(event: WatchEventOut): boolean {
    const object = objectOf(event);
    return object === undefined || this.projection.isDecided(object);
  }

  private classOf(event: WatchEventOut): ProjectionClass {
    const object = objectOf(event);
    return object === undefined ? 'tenant' : this.projection.classOf(object);
  }
}

function objectOf(event: WatchEventOut): ApiObject | undefined {
  return event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED' ? event.object : undefined;
}
