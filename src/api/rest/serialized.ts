/**
 * JSON bytes of objects, encoded once per object version and reused by every
 * response that sends it (GETs, lists, both from memory), like kube's
 * cachingObject (k8s.io/apiserver pkg/storage/cacher/caching_object.go).
 * Objects are immutable once handed to the REST layer (the watch hub
 * shares them between its state, its history and every watcher), so the
 * object itself keys its bytes, and the bytes go when the object does.
 * The output is byte for byte JSON.stringify's.
 */
import type { ApiObject, ObjectList } from './types.js';

const encoded = new WeakMap<ApiObject, Buffer>();
const comma = Buffer.from(',');

export function objectJson(object: ApiObject): Buffer {
  let bytes = encoded.get(object);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(object), 'utf8');
    encoded.set(object, bytes);
  }
  return bytes;
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
  const parts: Buffer[] = [Buffer.from(`${head}${head === '{' ? '' : ','}"items":[`)];
  list.items.forEach((item, index) => {
    if (index > 0) parts.push(comma);
    parts.push(objectJson(item));
  });
  parts.push(Buffer.from(`]${tail === '}' ? '' : ','}${tail}`));
  return Buffer.concat(parts);
}
