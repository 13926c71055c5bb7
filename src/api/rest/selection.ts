/**
 * Which objects a list, watch or deletecollection selects: the label
 * selector, the field selector and the attributes they are evaluated on,
 * built once per request and used by every read path (list from
 * kube-apiserver, list from memory, watch). Follows k8s.io/apiserver's
 * storage.SelectionPredicate (Matches, MatchesSingle,
 * MatchesSingleNamespace, Empty) with DefaultNamespaceScopedAttr as GetAttrs.
 *
 * A store may push part of the selection down to where it reads from (a
 * label selector to kube-apiserver, a namespace, a name), but that only
 * narrows the read: the REST layer applies `matches` to everything a store
 * returns and the watch hub applies it to every event, so the predicate
 * always decides, whatever a store did with it.
 */
import { parseFieldSelector, type FieldSelector } from '../field-selector.js';
import { parseLabelSelector, type LabelSelector } from '../label-selector.js';
import type { ApiObject } from './types.js';

/** The fields every kind can be selected on (a CRD's metadata.name and metadata.namespace). */
export const selectableFields = ['metadata.name', 'metadata.namespace'] as const;

/** What the selectors are evaluated on (storage.AttrFunc). */
interface SelectionAttributes {
  readonly labels: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, string>>;
}

/** storage.DefaultNamespaceScopedAttr: the object's labels, its name and namespace as fields. */
function selectionAttributes(object: ApiObject): SelectionAttributes {
  return {
    labels: object.metadata.labels ?? {},
    fields: { 'metadata.name': object.metadata.name ?? '', 'metadata.namespace': object.metadata.namespace ?? '' },
  };
}

export class SelectionPredicate {
  private static readonly all = new SelectionPredicate(parseLabelSelector(''), parseFieldSelector('', selectableFields));

  constructor(
    readonly label: LabelSelector,
    readonly field: FieldSelector,
  ) {}

  /** Selects every object. */
  static everything(): SelectionPredicate {
    return SelectionPredicate.all;
  }

  /** True when the predicate does not filter anything. */
  empty(): boolean {
    return this.label.isEverything() && this.field.isEverything();
  }

  matches(object: ApiObject): boolean {
    if (this.empty()) return true;
    const { labels, fields } = selectionAttributes(object);
    return this.label.matches(labels) && this.field.matches(fields);
  }

  /** The only name that can match, when the field selector pins metadata.name. */
  matchesSingle(): string | undefined {
    return this.field.requiresExactMatch('metadata.name');
  }

  /** The only namespace that can match, when the field selector pins metadata.namespace. */
  matchesSingleNamespace(): string | undefined {
    return this.field.requiresExactMatch('metadata.namespace');
  }
}
