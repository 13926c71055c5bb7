/**
 * The object versions the binder itself wrote for each claim, so that the
 * informer's echo of its own write does not queue the claim again.
 *
 * A reconcile that writes either requeues its claim or ends with the state
 * it wrote as its final decision; the echo (the watch event carrying that
 * very resourceVersion) brings nothing the writer did not know, so a
 * reconcile for it would read, find nothing to do and write nothing. Any
 * other change to the record or the host arrives with a resourceVersion not
 * written here and queues the claim as before. An event that arrives while
 * the claim is being reconciled (the echo can overtake the answer to the
 * write) is held until the reconcile ends and its writes are known. This
 * only filters events: no decision is taken from it, and a new leadership
 * term starts empty (every claim is reconciled then anyway). client-go
 * controllers get the same effect from "expectations"
 * (pkg/controller/controller_utils.go).
 */

/** Writes remembered per claim: a reconcile makes at most four (intent, host, workload, status) before the echoes arrive. */
const remembered = 8;

export class OwnWrites {
  private readonly versions = new Map<string, string[]>();
  /** Claims being reconciled → the versions of the events that arrived meanwhile. */
  private readonly held = new Map<string, string[]>();

  /** The binder wrote `object` (`record`, or a host's `<namespace>/<name>`) for this claim, with this resourceVersion. */
  wrote(claimKey: string, object: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined || resourceVersion === '') return;
    const written = this.versions.get(claimKey) ?? [];
    written.push(version(object, resourceVersion));
    if (written.length > remembered) written.shift();
    this.versions.set(claimKey, written);
  }

  /** Whether a change of `object` should queue the claim: false for an echo, or while the claim is being reconciled (see end()). */
  shouldQueue(claimKey: string, object: string, resourceVersion: string | undefined): boolean {
    const seen = version(object, resourceVersion ?? '');
    const held = this.held.get(claimKey);
    if (held !== undefined) {
      held.push(seen);
      return false;
    }
    return !this.isEcho(claimKey, seen);
  }

  /** A reconcile of the claim starts. */
  begin(claimKey: string): void {
    this.held.set(claimKey, []);
  }

  /** The reconcile ended: whether a change that arrived meanwhile was not one of its writes, so the claim must be looked at again. */
  end(claimKey: string): boolean {
    const held = this.held.get(claimKey) ?? [];
    this.held.delete(claimKey);
    return held.some((seen) => !this.isEcho(claimKey, seen));
  }

  /** The claim's record is gone. */
  forget(claimKey: string): void {
    this.versions.delete(claimKey);
  }

  clear(): void {
    this.versions.clear();
    this.held.clear();
  }

  private isEcho(claimKey: string, seen: string): boolean {
    return this.versions.get(claimKey)?.includes(seen) ?? false;
  }
}

/** `object@resourceVersion`; a version without resourceVersion ends in `@` and is never an echo (wrote() skips those). */
function version(object: string, resourceVersion: string): string {
  return `${object}@${resourceVersion}`;
}
