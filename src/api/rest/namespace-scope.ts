/**
 * Identity-scoped reads across namespaces: a list or watch of all
 * namespaces by a requester who may read only some of them returns exactly
 * the objects of those namespaces, and an open watch follows changes of
 * that set (ADDED for what appears, DELETED for what disappears). There is
 * no kube counterpart (kube answers such a request 403); the shape follows
 * OpenShift's project list and watch (pkg/project/auth: the authorization
 * cache and its watcher), done in the one layer every kind goes through.
 *
 * Nothing of another namespace leaves this module or scoped-list.ts (the
 * list side): lists read only the
 * readable namespaces (never the whole cluster, so neither their cost nor
 * a count depends on other tenants), are never paged (no continue token,
 * no remainingItemCount), and a watch's selection rejects every object
 * outside the set on every path the hub has (initial state, history,
 * live events).
 */
import type { UserInfo } from '../user.js';
import type { GroupResource } from '../status.js';
import { SelectionPredicate } from './selection.js';
import type { ApiObject, WatchEventOut } from './types.js';

/** Where a requester may read: every namespace, or these. */
export type NamespaceAccess = 'all' | ReadonlySet<string>;

/** The per-namespace read rule, as the authorization layer evaluates it. */
export interface ReadAccess {
  /** Where `verb` of the resource reaches for a request of all namespaces that was authorized. */
  namespaces(user: UserInfo, verb: 'list' | 'watch', gr: GroupResource): Promise<NamespaceAccess>;
  /** Calls `listener` with the new access whenever it may have changed; returns the function that stops. */
  subscribe(user: UserInfo, verb: 'list' | 'watch', gr: GroupResource, listener: (access: NamespaceAccess) => void): () => void;
}

/** How a watch's readable namespaces changed. */
export interface ScopeChange {
  readonly previous: NamespaceAccess;
  readonly current: NamespaceAccess;
}

/** What the watch hub needs to follow a changing scope. */
export interface WatchScope {
  onChange(listener: (change: ScopeChange) => void): () => void;
  /** The request's own selection, regardless of namespace. */
  matchesIgnoringScope(object: ApiObject): boolean;
}

function allows(access: NamespaceAccess, namespace: string): boolean {
  return access === 'all' || access.has(namespace);
}

function sameAccess(a: NamespaceAccess, b: NamespaceAccess): boolean {
  if (a === 'all' || b === 'all') return a === b;
  return a.size === b.size && [...a].every((namespace) => b.has(namespace));
}

/**
 * The request's selection, further limited to the readable namespaces. It
 * is the selection the hub applies everywhere, so a watch never needs to
 * know it is scoped except to hear of changes.
 */
export class ScopedSelection extends SelectionPredicate implements WatchScope {
  private readonly listeners = new Set<(change: ScopeChange) => void>();

  constructor(
    private readonly base: SelectionPredicate,
    private access: NamespaceAccess,
  ) {
    super(base.label, base.field);
  }

  override empty(): boolean {
    return false;
  }

  override matches(object: ApiObject): boolean {
    return allows(this.access, object.metadata.namespace ?? '') && this.base.matches(object);
  }

  matchesIgnoringScope(object: ApiObject): boolean {
    return this.base.matches(object);
  }

  /** The access changed: from now on the selection follows it, and the watch is told. */
  update(next: NamespaceAccess): void {
    const previous = this.access;
    if (sameAccess(previous, next)) return;
    this.access = next;
    for (const listener of [...this.listeners]) listener({ previous, current: next });
  }

  onChange(listener: (change: ScopeChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}

/**
 * The events a watcher receives when its scope changes: ADDED for the
 * current state of each selected object that became readable, DELETED for
 * each that stopped being readable. `list(namespace)` reads the hub's
 * state (undefined: every namespace).
 */
export function scopeChangeEvents(change: ScopeChange, scope: WatchScope, list: (namespace?: string) => ApiObject[]): WatchEventOut[] {
  const { previous, current } = change;
  const touched =
    previous === 'all' || current === 'all'
      ? list()
      : [...new Set([...previous, ...current])].filter((ns) => previous.has(ns) !== current.has(ns)).sort().flatMap((ns) => list(ns));
  const events: WatchEventOut[] = [];
  for (const object of touched) {
    const namespace = object.metadata.namespace ?? '';
    const was = allows(previous, namespace);
    const is = allows(current, namespace);
    if (was === is || !scope.matchesIgnoringScope(object)) continue;
    events.push({ type: is ? 'ADDED' : 'DELETED', object });
  }
  return events;
}
