// @peculiar/x509 resolves its algorithm providers through tsyringe, which
// refuses to load unless Reflect metadata functions exist. Its injectable
// classes take no constructor parameters, so a minimal in-memory store is all
// tsyringe ever consults; this avoids a reflect-metadata dependency.
type MetadataStore = WeakMap<object, Map<unknown, unknown>>;

const store: MetadataStore = new WeakMap();

function ownMetadata(target: object): Map<unknown, unknown> {
  let entries = store.get(target);
  if (entries === undefined) {
    entries = new Map();
    store.set(target, entries);
  }
  return entries;
}

function getOwnMetadata(key: unknown, target: object): unknown {
  return store.get(target)?.get(key);
}

function getMetadata(key: unknown, target: object): unknown {
  for (let current: object | null = target; current !== null; current = Reflect.getPrototypeOf(current)) {
    const value = getOwnMetadata(key, current);
    if (value !== undefined) return value;
  }
  return undefined;
}

function defineMetadata(key: unknown, value: unknown, target: object): void {
  ownMetadata(target).set(key, value);
}

if (!('getMetadata' in Reflect)) {
  Object.assign(Reflect, { getMetadata, getOwnMetadata, defineMetadata });
}
