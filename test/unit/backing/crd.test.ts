import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  customResourceDefinition,
  decideCrdUpgrade,
  ensureCustomResourceDefinition,
  SCHEMA_GENERATION_ANNOTATION,
  schemaGenerationOf,
  type CustomResourceDefinition,
  type StoredCustomResourceDefinition,
} from '../../../src/backing/crd.js';
import { KubeApiError } from '../../../src/backing/kube-client.js';

const NAME = 'widgets.infra.example.test';
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${NAME}`;

function widgetCrd(schemaGeneration: number, description = 'a widget'): CustomResourceDefinition {
  return customResourceDefinition({
    group: 'infra.example.test',
    version: 'v1alpha1',
    kind: 'Widget',
    plural: 'widgets',
    singular: 'widget',
    schema: { type: 'object', description, properties: { spec: { type: 'object', properties: { size: { type: 'integer', minimum: 1 } } } } },
    schemaGeneration,
  });
}

/** Reverses every object's key order: what kube-apiserver's own field order does to a spec we wrote. */
function reorder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorder);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([key, nested]) => [key, reorder(nested)]));
}

/** The CRD as kube-apiserver returns it: its key order, its defaults (conversion), our annotations. */
function stored(crd: CustomResourceDefinition, annotations: Record<string, string> | undefined, resourceVersion = '7'): StoredCustomResourceDefinition {
  return {
    metadata: { resourceVersion, ...(annotations === undefined ? {} : { annotations }) },
    spec: { conversion: { strategy: 'None' }, ...(reorder(crd.spec) as Record<string, unknown>) },
    status: { conditions: [{ type: 'Established', status: 'True' }] },
  };
}

const generation = (n: number): Record<string, string> => ({ [SCHEMA_GENERATION_ANNOTATION]: String(n) });

describe('canonicalJson', () => {
  it('gives equal text for equal values whatever their key order, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"x":2,"y":1}]},"b":1}');
    expect(canonicalJson({ a: { c: null, d: [{ x: 2, y: 1 }] }, b: 1 })).toBe('{"a":{"c":null,"d":[{"x":2,"y":1}]},"b":1}');
  });

  it('keeps array order (a list is ordered)', () => {
    expect(canonicalJson(['b', 'a'])).not.toBe(canonicalJson(['a', 'b']));
  });
});

describe('schemaGenerationOf', () => {
  it('reads the annotation, and takes a missing or unreadable one as 0 (written before generations were recorded)', () => {
    expect(schemaGenerationOf(generation(12))).toBe(12);
    expect(schemaGenerationOf(undefined)).toBe(0);
    expect(schemaGenerationOf({})).toBe(0);
    expect(schemaGenerationOf({ [SCHEMA_GENERATION_ANNOTATION]: 'two' })).toBe(0);
    expect(schemaGenerationOf({ [SCHEMA_GENERATION_ANNOTATION]: '-3' })).toBe(0);
  });
});

describe('decideCrdUpgrade', () => {
  it('creates a missing CRD', () => {
    expect(decideCrdUpgrade(undefined, widgetCrd(2))).toEqual({ action: 'create' });
  });

  it('keeps a CRD of the same generation whose spec kube-apiserver returns in another key order and with its defaults', () => {
    expect(decideCrdUpgrade(stored(widgetCrd(2), generation(2)), widgetCrd(2))).toEqual({ action: 'keep' });
  });

  it('replaces a CRD of an older generation, or of none, even when only the annotation is behind', () => {
    expect(decideCrdUpgrade(stored(widgetCrd(1, 'old'), generation(1)), widgetCrd(2))).toEqual({ action: 'replace', storedGeneration: 1, schemaChanged: true });
    expect(decideCrdUpgrade(stored(widgetCrd(2), generation(1)), widgetCrd(2))).toEqual({ action: 'replace', storedGeneration: 1, schemaChanged: false });
    expect(decideCrdUpgrade(stored(widgetCrd(2), undefined), widgetCrd(2))).toEqual({ action: 'replace', storedGeneration: 0, schemaChanged: false });
  });

  it('puts back its schema over a hand-edited CRD of the same generation', () => {
    expect(decideCrdUpgrade(stored(widgetCrd(2, 'edited by hand'), generation(2)), widgetCrd(2))).toEqual({ action: 'replace', storedGeneration: 2, schemaChanged: true });
  });

  it('never replaces a CRD a newer generation wrote, whatever its spec', () => {
    expect(decideCrdUpgrade(stored(widgetCrd(3, 'newer'), generation(3)), widgetCrd(2))).toEqual({ action: 'leave-newer', storedGeneration: 3 });
    expect(decideCrdUpgrade(stored(widgetCrd(2), generation(3)), widgetCrd(2))).toEqual({ action: 'leave-newer', storedGeneration: 3 });
  });
});

interface Write {
  method: string;
  path: string;
  body: unknown;
}

/** kube-apiserver's customresourcedefinitions endpoint for one name, with optimistic concurrency. */
class FakeCrdApi {
  stored: StoredCustomResourceDefinition | undefined;
  readonly writes: Write[] = [];
  /** Runs before the next write is applied: another replica writing in between our read and our write. */
  beforeNextWrite: (() => void) | undefined;
  private resourceVersion = 10;

  constructor(stored?: StoredCustomResourceDefinition) {
    this.stored = stored;
  }

  get<T>(path: string): Promise<T> {
    expect(path).toBe(CRD_PATH);
    if (this.stored === undefined) return Promise.reject(new KubeApiError(404, { reason: 'NotFound' }));
    return Promise.resolve(structuredClone(this.stored) as T);
  }

  create<T>(path: string, body: unknown): Promise<T> {
    this.interleave();
    this.writes.push({ method: 'POST', path, body });
    if (this.stored !== undefined) return Promise.reject(new KubeApiError(409, { reason: 'AlreadyExists' }));
    return Promise.resolve(this.store(body) as T);
  }

  request<T>(method: string, path: string, options: { body?: unknown } = {}): Promise<T> {
    this.interleave();
    this.writes.push({ method, path, body: options.body });
    const sent = options.body as StoredCustomResourceDefinition;
    if (sent.metadata.resourceVersion !== this.stored?.metadata.resourceVersion) return Promise.reject(new KubeApiError(409, { reason: 'Conflict' }));
    return Promise.resolve(this.store(sent) as T);
  }

  /** Stores an object as kube-apiserver would: new resourceVersion, its key order and defaults, Established. */
  store(body: unknown): StoredCustomResourceDefinition {
    const object = body as CustomResourceDefinition & { metadata: { labels?: Record<string, string> } };
    this.resourceVersion += 1;
    this.stored = {
      metadata: { ...object.metadata, resourceVersion: String(this.resourceVersion) },
      spec: { conversion: { strategy: 'None' }, ...(reorder(object.spec) as Record<string, unknown>) },
      status: { conditions: [{ type: 'Established', status: 'True' }] },
    };
    return this.stored;
  }

  private interleave(): void {
    const other = this.beforeNextWrite;
    this.beforeNextWrite = undefined;
    other?.();
  }
}

function recordingLogger(): { lines: { level: string; fields: object; message: string }[]; info: (f: object, m: string) => void; warn: (f: object, m: string) => void } {
  const lines: { level: string; fields: object; message: string }[] = [];
  return {
    lines,
    info: (fields, message) => lines.push({ level: 'info', fields, message }),
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
  };
}

describe('ensureCustomResourceDefinition', () => {
  it('creates a missing CRD with its generation annotation', async () => {
    const api = new FakeCrdApi();
    const logger = recordingLogger();
    await ensureCustomResourceDefinition(api, widgetCrd(2), logger);
    expect(api.writes).toEqual([{ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: widgetCrd(2) }]);
    expect(api.stored?.metadata.annotations).toEqual(generation(2));
    expect(logger.lines).toEqual([{ level: 'info', fields: { crd: NAME, schemaGeneration: 2 }, message: 'backing CRD created' }]);
  });

  it('writes nothing at a restart: the stored CRD is the same schema in kube-apiserver\'s key order', async () => {
    const api = new FakeCrdApi();
    await ensureCustomResourceDefinition(api, widgetCrd(2), recordingLogger());
    const afterFirstStart = api.stored?.metadata.resourceVersion;
    const logger = recordingLogger();
    await ensureCustomResourceDefinition(api, widgetCrd(2), logger);
    expect(api.writes).toHaveLength(1);
    expect(api.stored?.metadata.resourceVersion).toBe(afterFirstStart);
    expect(logger.lines).toEqual([]);
  });

  it('upgrades an older generation\'s CRD, keeping its labels and other annotations', async () => {
    const old = stored(widgetCrd(1, 'old'), { ...generation(1), 'example.test/owner': 'platform' });
    const api = new FakeCrdApi({ ...old, metadata: { ...old.metadata, labels: { tier: 'infra' } } });
    const logger = recordingLogger();
    await ensureCustomResourceDefinition(api, widgetCrd(2), logger);
    expect(api.writes).toEqual([
      {
        method: 'PUT',
        path: CRD_PATH,
        body: {
          ...widgetCrd(2),
          metadata: { name: NAME, resourceVersion: '7', labels: { tier: 'infra' }, annotations: { ...generation(2), 'example.test/owner': 'platform' } },
        },
      },
    ]);
    expect(canonicalJson(api.stored?.spec)).toBe(canonicalJson({ conversion: { strategy: 'None' }, ...widgetCrd(2).spec }));
    expect(logger.lines).toEqual([
      {
        level: 'info',
        fields: { crd: NAME, schemaGeneration: 2, storedSchemaGeneration: 1, schemaChanged: true },
        message: "backing CRD updated to this server's schema generation",
      },
    ]);
  });

  it('leaves a newer generation\'s CRD as it is and says so (an older replica during a rolling upgrade)', async () => {
    const newer = stored(widgetCrd(3, 'newer'), generation(3));
    const api = new FakeCrdApi(newer);
    const logger = recordingLogger();
    await ensureCustomResourceDefinition(api, widgetCrd(2), logger);
    expect(api.writes).toEqual([]);
    expect(api.stored).toEqual(newer);
    expect(logger.lines).toEqual([
      {
        level: 'warn',
        fields: { crd: NAME, schemaGeneration: 2, storedSchemaGeneration: 3 },
        message: 'backing CRD left as it is: a newer server wrote a newer schema generation (this replica is older; finish the rollout)',
      },
    ]);
  });

  it('decides again after losing a race: a newer replica\'s write in between is then left as it is', async () => {
    const api = new FakeCrdApi(stored(widgetCrd(1, 'old'), generation(1)));
    api.beforeNextWrite = () => api.store(widgetCrd(3, 'newer'));
    const logger = recordingLogger();
    await ensureCustomResourceDefinition(api, widgetCrd(2), logger);
    expect(api.writes.map((write) => write.method)).toEqual(['PUT']);
    expect(api.stored?.metadata.annotations).toEqual(generation(3));
    expect(api.stored?.spec['versions']).toEqual(reorder(widgetCrd(3, 'newer').spec['versions']));
    expect(logger.lines.map((line) => line.level)).toEqual(['warn']);
  });

  it('decides again after losing a create race to a replica of its own generation, and writes nothing more', async () => {
    const api = new FakeCrdApi();
    api.beforeNextWrite = () => api.store(widgetCrd(2));
    const logger = recordingLogger();
    await ensureCustomResourceDefinition(api, widgetCrd(2), logger);
    expect(api.writes.map((write) => write.method)).toEqual(['POST']);
    expect(api.stored?.metadata.resourceVersion).toBe('11');
    expect(logger.lines).toEqual([]);
  });
});
