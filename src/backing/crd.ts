/**
 * Installs (or upgrades) the backing CRDs this server owns and waits until
 * kube-apiserver serves them. The CRD schema is generated from the one
 * schema source, so kube-apiserver validates and prunes backing objects
 * exactly as our API documents them.
 *
 * Upgrades follow the rule of a rolling upgrade (docs/operations.md): each
 * CRD carries the schema generation of the server that wrote it, and a
 * replica never replaces a newer generation's schema. Specs are compared as
 * values (canonical JSON), not as text: kube-apiserver returns a CRD in its
 * own field order, so a textual comparison would make every start a write.
 */
import type { K8sSchema } from '../api/openapi/schema.js';
import { isConflict, KubeApiError, type KubeClient } from './kube-client.js';

export interface CustomResourceDefinitionSpec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly schema: K8sSchema;
  /**
   * The schema's generation, bumped with every change of the schema and
   * written on the CRD (SCHEMA_GENERATION_ANNOTATION); only for CRDs this
   * server installs and upgrades.
   */
  readonly schemaGeneration?: number;
}

/** A CustomResourceDefinition manifest as this server writes it. */
export interface CustomResourceDefinition {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'CustomResourceDefinition';
  readonly metadata: { readonly name: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec: Readonly<Record<string, unknown>>;
}

/** On a backing CRD: the schema generation of the server that last wrote it. */
export const SCHEMA_GENERATION_ANNOTATION = 'infra.tenancy.metal3.io/schema-generation';

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/**
 * A printer column of every CRD this server owns: the object's
 * resourceVersion, so the consistent-read fence can probe a scope as a Table
 * of names and resourceVersions (scope-probe.ts) instead of whole metadata.
 * Priority 1: `kubectl get` shows it only with `-o wide`.
 */
export const resourceVersionColumn = {
  name: 'Resource Version',
  type: 'string',
  jsonPath: '.metadata.resourceVersion',
  priority: 1,
  description: 'The object\'s resourceVersion (read by the server\'s consistent-read probe).',
} as const;

/** kube's default column, which a CRD with printer columns of its own must name to keep. */
const ageColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' } as const;
const establishTimeoutMs = 60_000;

// The schema keywords a structural CRD schema accepts; anything else (e.g. x-kubernetes-group-version-kind) is dropped.
const allowedSchemaKeys = new Set([
  'type', 'format', 'description', 'properties', 'items', 'required', 'enum', 'maximum', 'minimum',
  'exclusiveMaximum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems',
  'uniqueItems', 'maxProperties', 'minProperties', 'multipleOf', 'additionalProperties', 'nullable', 'default',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
]);

export function customResourceDefinition(spec: CustomResourceDefinitionSpec): CustomResourceDefinition {
  const schema = structural(spec.schema) as Record<string, unknown>;
  const properties = { ...(schema['properties'] as Record<string, unknown>), metadata: { type: 'object' } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${spec.plural}.${spec.group}`,
      ...(spec.schemaGeneration === undefined ? {} : { annotations: { [SCHEMA_GENERATION_ANNOTATION]: String(spec.schemaGeneration) } }),
    },
    spec: {
      group: spec.group,
      scope: 'Namespaced',
      names: { kind: spec.kind, listKind: `${spec.kind}List`, plural: spec.plural, singular: spec.singular },
      versions: [
        {
          name: spec.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { ...schema, properties } },
          subresources: { status: {} },
          additionalPrinterColumns: [ageColumn, resourceVersionColumn],
        },
      ],
    },
  };
}

function structural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(structural);
  if (node === null || typeof node !== 'object') return node;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!allowedSchemaKeys.has(key)) continue;
    // properties' keys are field names, not keywords: keep every one.
    result[key] = key === 'properties' ? mapValues(value as Record<string, unknown>, structural) : structural(value);
  }
  return result;
}

function mapValues(object: Record<string, unknown>, fn: (value: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, fn(v)]));
}

/** What a stored CRD carries that the upgrade decision reads. */
export interface StoredCustomResourceDefinition {
  readonly metadata: {
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: Readonly<Record<string, unknown>>;
  readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string }[] };
}

export type CrdUpgradeDecision =
  | { readonly action: 'create' }
  | { readonly action: 'keep' }
  | { readonly action: 'replace'; readonly storedGeneration: number; readonly schemaChanged: boolean }
  | { readonly action: 'leave-newer'; readonly storedGeneration: number };

/**
 * What a replica of schema generation `desired`'s annotation does with the
 * stored CRD. Never replaces a CRD written by a newer generation (an older
 * replica of a rolling upgrade would put back an older schema); otherwise
 * writes only when the spec differs semantically (kube-apiserver serializes
 * the spec in its own key order) or the stored generation is behind.
 */
export function decideCrdUpgrade(existing: StoredCustomResourceDefinition | undefined, desired: CustomResourceDefinition): CrdUpgradeDecision {
  if (existing === undefined) return { action: 'create' };
  const generation = schemaGenerationOf(desired.metadata.annotations);
  const storedGeneration = schemaGenerationOf(existing.metadata.annotations);
  if (storedGeneration > generation) return { action: 'leave-newer', storedGeneration };
  const schemaChanged = Object.entries(desired.spec).some(([key, value]) => canonicalJson(existing.spec[key]) !== canonicalJson(value));
  if (!schemaChanged && storedGeneration === generation) return { action: 'keep' };
  return { action: 'replace', storedGeneration, schemaChanged };
}

/** The generation an annotation names; 0 for a CRD written before generations were recorded (or unreadable). */
export function schemaGenerationOf(annotations: Readonly<Record<string, string>> | undefined): number {
  const value = annotations?.[SCHEMA_GENERATION_ANNOTATION];
  return value !== undefined && /^[0-9]{1,9}$/.test(value) ? Number(value) : 0;
}

/** JSON with every object's keys sorted, so equal values give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, nested: unknown) =>
    nested !== null && typeof nested === 'object' && !Array.isArray(nested)
      ? Object.fromEntries(Object.entries(nested).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : nested,
  );
}

type CrdClient = Pick<KubeClient, 'get' | 'create' | 'request'>;

/** The part of the server's (pino) logger this module uses. */
export interface CrdLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Two replicas starting at once race on create and update: the loser decides again from what the winner wrote. */
const maxConflictRetries = 5;

/** Creates the CRD or brings it up to this server's schema generation, then waits for Established. */
export async function ensureCustomResourceDefinition(client: CrdClient, crd: CustomResourceDefinition, logger: CrdLogger): Promise<void> {
  const name = crd.metadata.name;
  const generation = schemaGenerationOf(crd.metadata.annotations);
  for (let attempt = 0; ; attempt++) {
    const existing = await getIfExists(client, name);
    const decision = decideCrdUpgrade(existing, crd);
    try {
      await apply(client, crd, existing, decision);
      logDecision(logger, name, generation, decision);
      break;
    } catch (error) {
      if (!(isConflict(error) && attempt < maxConflictRetries)) throw error;
    }
  }
  await waitEstablished(client, name);
}

async function apply(client: CrdClient, crd: CustomResourceDefinition, existing: StoredCustomResourceDefinition | undefined, decision: CrdUpgradeDecision): Promise<void> {
  if (decision.action === 'create') await client.create(crdPath, crd);
  if (decision.action !== 'replace' || existing === undefined) return;
  const metadata = {
    name: crd.metadata.name,
    resourceVersion: existing.metadata.resourceVersion,
    labels: existing.metadata.labels,
    annotations: { ...existing.metadata.annotations, ...crd.metadata.annotations },
  };
  await client.request('PUT', `${crdPath}/${crd.metadata.name}`, { body: { ...crd, metadata } });
}

function logDecision(logger: CrdLogger, name: string, generation: number, decision: CrdUpgradeDecision): void {
  switch (decision.action) {
    case 'create':
      logger.info({ crd: name, schemaGeneration: generation }, 'backing CRD created');
      return;
    case 'replace':
      logger.info(
        { crd: name, schemaGeneration: generation, storedSchemaGeneration: decision.storedGeneration, schemaChanged: decision.schemaChanged },
        'backing CRD updated to this server\'s schema generation',
      );
      return;
    case 'leave-newer':
      logger.warn(
        { crd: name, schemaGeneration: generation, storedSchemaGeneration: decision.storedGeneration },
        'backing CRD left as it is: a newer server wrote a newer schema generation (this replica is older; finish the rollout)',
      );
      return;
    case 'keep':
      return;
  }
}

async function getIfExists(client: CrdClient, name: string): Promise<StoredCustomResourceDefinition | undefined> {
  try {
    return await client.get<StoredCustomResourceDefinition>(`${crdPath}/${name}`);
  } catch (error) {
    if (error instanceof KubeApiError && error.statusCode === 404) return undefined;
    throw error;
  }
}

async function waitEstablished(client: CrdClient, name: string): Promise<void> {
  const deadline = Date.now() + establishTimeoutMs;
  while (Date.now() < deadline) {
    const crd = await client.get<StoredCustomResourceDefinition>(`${crdPath}/${name}`);
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`CustomResourceDefinition ${name} not Established after ${establishTimeoutMs} ms`);
}
