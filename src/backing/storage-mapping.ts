/**
 * How a virtual, tenant-namespaced object is stored as one backing custom
 * resource in the infrastructure storage namespace, and back.
 *
 * - The backing name is `<namespace>.<name>` (namespaces have no dots, so the
 *   split is unique) or, when that would exceed 253 characters, a SHA-256
 *   digest (no dots, so the two forms never collide); the tenant namespace
 *   and name are recorded on the object and checked on every read.
 * - Tenant labels and annotations are stored as they are, beside bookkeeping
 *   keys under reserved prefixes that tenants may not use and never see.
 * - Tenant ownerReferences and finalizers are kept in annotations, not in
 *   the backing metadata: the garbage collector would resolve owners in the
 *   storage namespace (and delete the record), and would process
 *   foregroundDeletion/orphan for the record instead of the virtual object.
 *   While tenant finalizers exist, one internal finalizer holds the record.
 * - The virtual uid is derived from the record's uid, never equal to it: the
 *   garbage collector keys its graph by uid and watches both resources, so
 *   a shared uid would make it mistake one object for the other.
 * - Everything else (resourceVersion, generation, timestamps, spec, status,
 *   managedFields) is the backing object's, translated: kube's
 *   resourceVersions are one etcd revision space, so they stay comparable.
 */
import { createHash, hash } from 'node:crypto';
import { deepFreeze } from '../api/json-value.js';
import { isReservedKey } from '../api/reserved-keys.js';
import type { ApiObject, ManagedFieldsEntry, ObjectMeta, OwnerReference } from '../api/rest/types.js';
import { internalized } from './interned-strings.js';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

const bookkeepingPrefix = 'infra.tenancy.metal3.io/';
export const bookkeeping = {
  namespaceLabel: `${bookkeepingPrefix}namespace`,
  nameAnnotation: `${bookkeepingPrefix}name`,
  ownerReferencesAnnotation: `${bookkeepingPrefix}owner-references`,
  finalizersAnnotation: `${bookkeepingPrefix}finalizers`,
  tenantFinalizer: `${bookkeepingPrefix}tenant-finalizers`,
} as const;

/**
 * Annotations under this prefix belong to the controllers (the binder's
 * binding state). Like internal finalizers they survive every tenant write
 * and are never shown to tenants.
 */
export const controllerAnnotationPrefix = 'binding.infra.tenancy.metal3.io/';

/**
 * The record's controller annotations, by the virtual object made from it:
 * kept beside the object, never in it, so no response can carry them;
 * only the server's own projections read them (resources/hostclaim/projection.ts).
 * A copy of the virtual object has none (it shows the tenant form).
 */
const controllerAnnotations = new WeakMap<ApiObject, Readonly<Record<string, string>>>();

export function controllerAnnotationsOf(virtual: ApiObject): Readonly<Record<string, string>> {
  return controllerAnnotations.get(virtual) ?? {};
}

/** What of a record belongs to the infrastructure and must survive a tenant's write. */
export interface InternalState {
  readonly finalizers: readonly string[];
  readonly annotations: Readonly<Record<string, string>>;
}

const noInternalState: InternalState = { finalizers: [], annotations: {} };

const maxNameLength = 253;
const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

export function isReservedFinalizer(finalizer: string): boolean {
  return isReservedKey(finalizer);
}

/** A stable UUID (RFC 4122 version-5 layout) for the virtual object of a record. */
export function virtualUid(recordUid: string): string {
  return derivedUid('virtual-uid', recordUid);
}

/**
 * A stable UUID (RFC 4122 version-5 layout) for a virtual object derived from
 * backing objects, never equal to any of their uids: the garbage collector
 * keys its graph by uid. `kind` separates the derivations; the parts must not
 * contain '/' except in the last one (uids and namespace names have none).
 */
export function derivedUid(kind: string, ...parts: readonly string[]): string {
  // One-shot hash() to hex, the version and variant set on the digits: a HardwareData host event derives one uid per tenant.
  const hex = hash('sha1', `tenancy.metal3.io/${kind}/${parts.join('/')}`, 'hex');
  const variant = uuidVariantDigits[Number.parseInt(hex.charAt(16), 16) & 0x3] ?? '8';
  // Internalized: the template alone is a chain of cons strings (~400 bytes) that every cached view would keep.
  return internalized(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`);
}

/** The first hex digit of an RFC 4122 variant byte (0b10xx), by its two low bits. */
const uuidVariantDigits = '89ab';

export function backingName(namespace: string, name: string): string {
  const readable = `${namespace}.${name}`;
  if (readable.length <= maxNameLength) return readable;
  return `h-${createHash('sha256').update(`${namespace}/${name}`).digest('hex')}`;
}

export class StorageMapping {
  // One string each, shared by every object made: built per object, each was a string of its own.
  readonly virtualApiVersion: string;
  readonly backingApiVersion: string;

  constructor(
    readonly virtual: GroupVersionKind,
    readonly backing: GroupVersionKind,
    readonly storageNamespace: string,
  ) {
    this.virtualApiVersion = `${virtual.group}/${virtual.version}`;
    this.backingApiVersion = `${backing.group}/${backing.version}`;
  }

  /**
   * The backing object for a virtual one. `internal` is what the stored
   * record holds for the infrastructure (the binder's finalizer and binding
   * annotations), carried over so a tenant's write never drops it.
   */
  toBacking(object: ApiObject, namespace: string, internal: InternalState = noInternalState): ApiObject {
    const { apiVersion: _apiVersion, kind: _kind, metadata, ...content } = object;
    const name = metadata.name ?? '';
    const tenantFinalizers = metadata.finalizers ?? [];
    const annotations: Record<string, string> = { ...metadata.annotations, ...internal.annotations, [bookkeeping.nameAnnotation]: name };
    if ((metadata.ownerReferences ?? []).length > 0) {
      annotations[bookkeeping.ownerReferencesAnnotation] = JSON.stringify(metadata.ownerReferences);
    }
    if (tenantFinalizers.length > 0) annotations[bookkeeping.finalizersAnnotation] = JSON.stringify(tenantFinalizers);
    const finalizers = internal.finalizers.filter((f) => f !== bookkeeping.tenantFinalizer);
    if (tenantFinalizers.length > 0) finalizers.push(bookkeeping.tenantFinalizer);
    const backingMeta: ObjectMeta = {
      name: backingName(namespace, name),
      namespace: this.storageNamespace,
      labels: { ...metadata.labels, [bookkeeping.namespaceLabel]: namespace },
      annotations,
      ...(finalizers.length > 0 ? { finalizers } : {}),
      ...(metadata.generateName === undefined ? {} : { generateName: metadata.generateName }),
      ...(metadata.resourceVersion === undefined ? {} : { resourceVersion: metadata.resourceVersion }),
    };
    return { apiVersion: this.backingApiVersion, kind: this.backing.kind, metadata: backingMeta, ...content };
  }

  /** The virtual object, or undefined if the record is not one of ours (missing or inconsistent bookkeeping). */
  toVirtual(record: ApiObject): ApiObject | undefined {
    const { apiVersion: _apiVersion, kind: _kind, metadata, ...content } = record;
    const namespace = metadata.labels?.[bookkeeping.namespaceLabel];
    const name = metadata.annotations?.[bookkeeping.nameAnnotation];
    if (namespace === undefined || name === undefined || metadata.name !== backingName(namespace, name)) return undefined;
    const virtualMeta: ObjectMeta = {
      name,
      namespace,
      ...pick(metadata, ['generateName', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds']),
      ...(metadata.uid === undefined ? {} : { uid: virtualUid(metadata.uid) }),
      ...nonEmpty('labels', withoutReserved(metadata.labels)),
      ...nonEmpty('annotations', this.virtualAnnotations(metadata.annotations)),
      ...nonEmptyList('finalizers', parseJsonList<string>(metadata.annotations?.[bookkeeping.finalizersAnnotation])),
      ...nonEmptyList('ownerReferences', parseJsonList<OwnerReference>(metadata.annotations?.[bookkeeping.ownerReferencesAnnotation])),
      ...nonEmptyList('managedFields', (metadata.managedFields ?? []).map((e) => this.virtualManagedFields(e)).filter(isDefined)),
    };
    const virtual: ApiObject = { apiVersion: this.virtualApiVersion, kind: this.virtual.kind, metadata: virtualMeta, ...content };
    const internal = this.internalState(record).annotations;
    if (Object.keys(internal).length > 0) controllerAnnotations.set(virtual, internal);
    return virtual;
  }

  /**
   * Tenant annotations. kube-apiserver rewrites an existing
   * last-applied-configuration annotation on server-side apply with the
   * applied configuration, which for a record is the backing form: it is
   * turned back into what the tenant applied.
   */
  private virtualAnnotations(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
    const result = withoutReserved(annotations);
    const lastApplied = result[lastAppliedAnnotation];
    if (lastApplied !== undefined) result[lastAppliedAnnotation] = this.virtualLastApplied(lastApplied);
    return result;
  }

  private virtualLastApplied(text: string): string {
    let applied: ApiObject;
    try {
      applied = JSON.parse(text) as ApiObject;
    } catch {
      return text;
    }
    if (applied.apiVersion !== this.backingApiVersion) return text;
    const { metadata } = applied;
    const virtual: ObjectMeta = {
      ...metadata,
      ...(metadata.annotations?.[bookkeeping.nameAnnotation] === undefined ? {} : { name: metadata.annotations[bookkeeping.nameAnnotation] }),
      ...(metadata.labels?.[bookkeeping.namespaceLabel] === undefined ? {} : { namespace: metadata.labels[bookkeeping.namespaceLabel] }),
      ...nonEmpty('labels', withoutReserved(metadata.labels)),
      ...nonEmpty('annotations', withoutReserved(metadata.annotations)),
    };
    if (Object.keys(withoutReserved(metadata.labels)).length === 0) Reflect.deleteProperty(virtual, 'labels');
    if (Object.keys(withoutReserved(metadata.annotations)).length === 0) Reflect.deleteProperty(virtual, 'annotations');
    return `${JSON.stringify({ ...applied, apiVersion: this.virtualApiVersion, kind: this.virtual.kind, metadata: virtual })}\n`;
  }

  /** The record's finalizers and annotations that belong to the infrastructure, not the tenant. */
  internalState(record: ApiObject): InternalState {
    return {
      finalizers: (record.metadata.finalizers ?? []).filter((f) => f !== bookkeeping.tenantFinalizer),
      annotations: Object.fromEntries(Object.entries(record.metadata.annotations ?? {}).filter(([key]) => key.startsWith(controllerAnnotationPrefix))),
    };
  }

  private virtualManagedFields(entry: ManagedFieldsEntry): ManagedFieldsEntry | undefined {
    const fields = entry.fieldsV1 === undefined ? undefined : tenantFieldSet(entry.fieldsV1);
    if (entry.fieldsV1 !== undefined && fields === undefined) return undefined;
    return {
      ...entry,
      ...(entry.apiVersion === this.backingApiVersion ? { apiVersion: this.virtualApiVersion } : {}),
      ...(fields === undefined ? {} : { fieldsV1: fields }),
    };
  }
}

function pick<K extends keyof ObjectMeta>(meta: ObjectMeta, keys: readonly K[]): Pick<ObjectMeta, K> {
  const result: Partial<Pick<ObjectMeta, K>> = {};
  for (const key of keys) if (meta[key] !== undefined) result[key] = meta[key];
  return result as Pick<ObjectMeta, K>;
}

function withoutReserved(map: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(map ?? {}).filter(([key]) => !isReservedKey(key)));
}

function nonEmpty<K extends string>(key: K, map: Record<string, string>): Partial<Record<K, Record<string, string>>> {
  return Object.keys(map).length === 0 ? {} : ({ [key]: map } as Record<K, Record<string, string>>);
}

function nonEmptyList<K extends string, T>(key: K, list: readonly T[]): Partial<Record<K, T[]>> {
  return list.length === 0 ? {} : ({ [key]: [...list] } as Record<K, T[]>);
}

function parseJsonList<T>(text: string | undefined): T[] {
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch {
    return [];
  }
}

function isDefined<T>(value: T | undefined): value is T {
  return value !== undefined;
}

/**
 * The tenant's part of a record's field set, computed once per field set:
 * the caches share equal field sets (shared-field-sets.ts), so the views
 * made from them share theirs too (frozen, like their source).
 */
const tenantFieldSets = new WeakMap<Record<string, unknown>, Record<string, unknown> | null>();

function tenantFieldSet(fields: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!Object.isFrozen(fields)) return withoutBookkeepingFields(fields);
  let tenant = tenantFieldSets.get(fields);
  if (tenant === undefined) {
    tenant = deepFreeze(withoutBookkeepingFields(fields)) ?? null;
    tenantFieldSets.set(fields, tenant);
  }
  return tenant ?? undefined;
}

/**
 * fieldsV1 without the bookkeeping labels, annotations and finalizer;
 * undefined when nothing of the tenant's is left in it.
 */
function withoutBookkeepingFields(fields: Record<string, unknown>): Record<string, unknown> | undefined {
  const metadata = fields['f:metadata'] as Record<string, unknown> | undefined;
  if (metadata === undefined) return fields;
  const cleaned: Record<string, unknown> = { ...metadata };
  for (const section of ['f:labels', 'f:annotations']) {
    const entries = cleaned[section] as Record<string, unknown> | undefined;
    if (entries === undefined) continue;
    const kept = Object.fromEntries(Object.entries(entries).filter(([key]) => !(key.startsWith('f:') && isReservedKey(key.slice(2)))));
    if (Object.keys(kept).filter((k) => k !== '.').length === 0) Reflect.deleteProperty(cleaned, section);
    else cleaned[section] = kept;
  }
  const finalizers = cleaned['f:finalizers'] as Record<string, unknown> | undefined;
  if (finalizers !== undefined) {
    const kept = Object.fromEntries(Object.entries(finalizers).filter(([key]) => !key.includes(bookkeepingPrefix)));
    if (Object.keys(kept).filter((k) => k !== '.').length === 0) Reflect.deleteProperty(cleaned, 'f:finalizers');
    else cleaned['f:finalizers'] = kept;
  }
  const result: Record<string, unknown> = { ...fields };
  if (Object.keys(cleaned).length === 0) Reflect.deleteProperty(result, 'f:metadata');
  else result['f:metadata'] = cleaned;
  return Object.keys(result).length === 0 ? undefined : result;
}
