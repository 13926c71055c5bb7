/**
 * JSON bytes of objects, encoded once per object version and reused by every
 * response that sends it (GETs, lists, both from memory), like kube's
 * cachingObject (k8s.io/apiserver pkg/storage/cacher/caching_object.go).
 * Objects are immutable once handed to the REST layer (the watch hub
 * shares them between its state, its history and every watcher), so the
 * object itself keys its bytes, and the bytes go when the object does.
 * The output is byte for byte JSON.stringify's.
 *
 * Only objects a store keeps (`keepEncoding`: a watch hub's stored state)
 * get their bytes kept. An object computed for one answer (a HardwareData)
 * is encoded as part of that answer and nothing of it is kept: keeping
 * bytes for 5,000 objects that die with the answer cost a weak-map entry
 * and an allocation of its own each, and most of a HardwareData LIST's
 * time went to collecting them.
 *
 * Cached bytes get an allocation of their own, never a slice of Node's
 * shared Buffer pool: a slice kept for minutes keeps its whole pool slab
 * (64 KiB on Node 24) alive, and a cache of a thousand object versions
 * then holds tens of MB of other requests' garbage (a `make soak` heap
 * snapshot: 169 slabs, 11 MB, kept by this cache).
 */
import type { ApiObject, ObjectList } from './types.js';

const encoded = new WeakMap<ApiObject, Buffer>();
/** Objects whose bytes are kept once encoded. */
const kept = new WeakSet<ApiObject>();

/**
 * Values many objects hold by reference (one host's inventory in the
 * HardwareData of every tenant that sees it), with their JSON once encoded
 * (undefined until then). An object computed per request (a HardwareData)
 * is new every time and cannot be cached whole; its shared part can.
 */
const sharedValues = new WeakMap<object, string | undefined>();

/**
 * Marks a value that objects share and nobody changes, so that its JSON is
 * encoded once and reused wherever it is a top-level field of an object.
 */
export function encodeOnce(value: object): void {
  if (!sharedValues.has(value)) sharedValues.set(value, undefined);
}

/** Marks an object its store keeps for a while: its bytes are kept with it once encoded. */
export function keepEncoding(object: ApiObject): void {
  kept.add(object);
}

export function objectJson(object: ApiObject): Buffer {
  if (!kept.has(object)) return Buffer.from(stringify(object));
  return keptBytes(object);
}

function keptBytes(object: ApiObject): Buffer {
  let bytes = encoded.get(object);
  if (bytes === undefined) {
    bytes = unpooledUtf8(stringify(object));
    encoded.set(object, bytes);
  }
  return bytes;
}

/** The UTF-8 bytes of text in an allocation of their own (see the module comment). */
export function unpooledUtf8(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  bytes.write(text, 'utf8');
  return bytes;
}

/** JSON.stringify(object), byte for byte, with the JSON of shared top-level values reused. */
function stringify(object: ApiObject): string {
  const entries = Object.entries(object);
  if (!entries.some(([, value]) => isShared(value))) return JSON.stringify(object);
  const members: string[] = [];
  for (const [key, value] of entries) {
    const json = isShared(value) ? sharedJson(value) : (JSON.stringify(value) as string | undefined);
    // JSON.stringify leaves out members whose value has no JSON (undefined, functions).
    if (json !== undefined) members.push(`${JSON.stringify(key)}:${json}`);
  }
  return `{${members.join(',')}}`;
}

function isShared(value: unknown): value is object {
  return typeof value === 'object' && value !== null && sharedValues.has(value);
}

function sharedJson(value: object): string {
  let json = sharedValues.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    sharedValues.set(value, json);
  }
  return json;
}

/** The list with each item's cached bytes; `items` keeps its place among the list's keys. */
export function listJson(list: ObjectList): Buffer {
  const keys = Object.keys(list);
  const itemsAt = keys.indexOf('items');
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  keys.forEach((key, index) => {
    if (index < itemsAt) before[key] = list[key as keyof ObjectList];
    else if (index > itemsAt) after[key] = list[key as keyof ObjectList];
  });
  const head = JSON.stringify(before).slice(0, -1);
  const tail = JSON.stringify(after).slice(1);
  // Runs of items without kept bytes are encoded as one string, converted once.
  const parts: Buffer[] = [];
  let text = `${head}${head === '{' ? '' : ','}"items":[`;
  list.items.forEach((item, index) => {
    if (index > 0) text += ',';
    if (!kept.has(item)) {
      text += stringify(item);
      return;
    }
    parts.push(Buffer.from(text), keptBytes(item));
    text = '';
  });
  parts.push(Buffer.from(`${text}]${tail === '}' ? '' : ','}${tail}`));
  return Buffer.concat(parts);
}
