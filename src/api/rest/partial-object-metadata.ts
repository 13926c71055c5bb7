/**
 * The metadata-only representations kube-apiserver serves a custom resource
 * in for `as=PartialObjectMetadata(List);g=meta.k8s.io` (garbage collector,
 * quota, metadata clients), and the list metadata every meta.k8s.io
 * representation carries. Follows meta.AsPartialObjectMetadata over
 * unstructured getters (k8s.io/apimachinery `apis/meta/v1`, `api/meta`) and
 * k8s.io/apiserver@v0.36.3 `pkg/endpoints/handlers/response.go`, quirks
 * included: `items: null` for an empty PartialObjectMetadataList.
 */
import { parseRfc3339 } from '../go-time.js';
import type { ApiObject, ManagedFieldsEntry, ObjectMeta, OwnerReference } from './types.js';
import { isJsonObject } from '../json-value.js';

export type MetaVersion = 'v1' | 'v1beta1';

export const META_GROUP = 'meta.k8s.io';

export interface ListMeta {
  readonly resourceVersion?: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

/** ObjectMeta as kube re-encodes it from an unstructured object. */
export type PartialMeta = ObjectMeta & { selfLink?: string };

export interface PartialObjectMetadata {
  readonly kind: 'PartialObjectMetadata';
  readonly apiVersion: `meta.k8s.io/${MetaVersion}`;
  readonly metadata: PartialMeta;
}

export interface PartialObjectMetadataList {
  readonly kind: 'PartialObjectMetadataList';
  readonly apiVersion: `meta.k8s.io/${MetaVersion}`;
  readonly metadata: ListMeta;
  /** null, not [], when empty: kube encodes its nil slice. */
  readonly items: PartialObjectMetadata[] | null;
}

export function toPartialObjectMetadata(object: ApiObject, version: MetaVersion): PartialObjectMetadata {
  return { kind: 'PartialObjectMetadata', apiVersion: `${META_GROUP}/${version}`, metadata: partialMeta(object.metadata) };
}

export function toPartialObjectMetadataList(
  objects: readonly ApiObject[],
  listMeta: ListMeta,
  version: MetaVersion,
): PartialObjectMetadataList {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `${META_GROUP}/${version}`,
    metadata: listMetaOf(listMeta),
    items: objects.length === 0 ? null : objects.map((o) => toPartialObjectMetadata(o, version)),
  };
}

export function listMetaOf(listMeta: ListMeta | undefined): ListMeta {
  if (listMeta === undefined) return {};
  return {
    ...(listMeta.resourceVersion !== undefined && listMeta.resourceVersion !== ''
      ? { resourceVersion: listMeta.resourceVersion }
      : {}),
    ...(listMeta.continue !== undefined && listMeta.continue !== '' ? { continue: listMeta.continue } : {}),
    ...(listMeta.remainingItemCount !== undefined ? { remainingItemCount: listMeta.remainingItemCount } : {}),
  };
}

// ---------------------------------------------------------------------------
// Time (metav1.Time)

/** metav1.Time's encoding: UTC, whole seconds. */
function formatTime(ms: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}Z`;
}

/** A timestamp re-encoded as metav1.Time does; unset when empty or unparsable. */
function normalizedTime(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = parseRfc3339(value);
  return ms === undefined ? undefined : formatTime(ms);
}

// ---------------------------------------------------------------------------
// Metadata projection (meta.AsPartialObjectMetadata over unstructured getters)


function stringField(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function int64Field(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isJsonObject(value)) return undefined;
  const entries = Object.entries(value);
  if (entries.length === 0 || !entries.every(([, v]) => typeof v === 'string')) return undefined;
  return Object.fromEntries(entries) as Record<string, string>;
}

function stringList(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const items: unknown[] = value;
  return items.every((v): v is string => typeof v === 'string') ? items : undefined;
}

function ownerReferences(value: unknown): OwnerReference[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const refs: unknown[] = value;
  if (!refs.every(isJsonObject)) return undefined;
  return refs.map((ref) => ({
    apiVersion: stringField(ref['apiVersion']),
    kind: stringField(ref['kind']),
    name: stringField(ref['name']),
    uid: stringField(ref['uid']),
    ...(typeof ref['controller'] === 'boolean' ? { controller: ref['controller'] } : {}),
    ...(typeof ref['blockOwnerDeletion'] === 'boolean' ? { blockOwnerDeletion: ref['blockOwnerDeletion'] } : {}),
  }));
}

const MANAGED_FIELDS_STRINGS = ['manager', 'operation', 'apiVersion', 'fieldsType', 'subresource'] as const;

/** All entries re-encoded, or none if any entry fails to convert (as kube drops them). */
function managedFields(value: unknown): ManagedFieldsEntry[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const entries: unknown[] = value;
  const out: ManagedFieldsEntry[] = [];
  for (const entry of entries) {
    if (!isJsonObject(entry)) return undefined;
    for (const key of MANAGED_FIELDS_STRINGS) {
      const v = entry[key];
      if (v !== undefined && v !== null && typeof v !== 'string') return undefined;
    }
    const rawTime = entry['time'];
    const time = rawTime === undefined || rawTime === null ? undefined : normalizedTime(rawTime);
    if (rawTime !== undefined && rawTime !== null && time === undefined) return undefined;
    const fieldsV1 = entry['fieldsV1'];
    if (fieldsV1 !== undefined && fieldsV1 !== null && !isJsonObject(fieldsV1)) return undefined;
    const text = (key: (typeof MANAGED_FIELDS_STRINGS)[number]): Record<string, string> => {
      const v = stringField(entry[key]);
      return v === '' ? {} : { [key]: v };
    };
    out.push({
      ...text('manager'),
      ...text('operation'),
      ...text('apiVersion'),
      ...(time === undefined ? {} : { time }),
      ...text('fieldsType'),
      ...(isJsonObject(fieldsV1) ? { fieldsV1 } : {}),
      ...text('subresource'),
    });
  }
  return out;
}

/**
 * ObjectMeta as kube re-encodes it: known fields only, in Go's field order,
 * empty values omitted, timestamps normalized to UTC whole seconds, and
 * maps or lists with a wrongly typed member dropped whole.
 */
function partialMeta(metadata: ObjectMeta): PartialMeta {
  const raw: Record<string, unknown> = isJsonObject(metadata) ? metadata : {};
  const out: Record<string, unknown> = {};
  for (const key of ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion'] as const) {
    const v = stringField(raw[key]);
    if (v !== '') out[key] = v;
  }
  const generation = int64Field(raw['generation']);
  if (generation !== undefined && generation !== 0) out['generation'] = generation;
  const creationTimestamp = normalizedTime(raw['creationTimestamp']);
  if (creationTimestamp !== undefined) out['creationTimestamp'] = creationTimestamp;
  const deletionTimestamp = normalizedTime(raw['deletionTimestamp']);
  if (deletionTimestamp !== undefined) out['deletionTimestamp'] = deletionTimestamp;
  const grace = int64Field(raw['deletionGracePeriodSeconds']);
  if (grace !== undefined) out['deletionGracePeriodSeconds'] = grace;
  const optional: [string, unknown][] = [
    ['labels', stringMap(raw['labels'])],
    ['annotations', stringMap(raw['annotations'])],
    ['ownerReferences', ownerReferences(raw['ownerReferences'])],
    ['finalizers', stringList(raw['finalizers'])],
    ['managedFields', managedFields(raw['managedFields'])],
  ];
  for (const [key, value] of optional) if (value !== undefined) out[key] = value;
  return out;
}
