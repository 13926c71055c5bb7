/**
 * Installs (or upgrades) the backing CRDs this server owns and waits until
 * kube-apiserver serves them. The CRD schema is generated from the one
 * schema source, so kube-apiserver validates and prunes backing objects
 * exactly as our API documents them.
 */
import type { K8sSchema } from '../api/openapi/schema-source.js';
import { KubeApiError, type KubeClient } from './kube-client.js';

export interface CustomResourceDefinitionSpec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly schema: K8sSchema;
}

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const establishTimeoutMs = 60_000;

// The schema keywords a structural CRD schema accepts; anything else (e.g. x-kubernetes-group-version-kind) is dropped.
const allowedSchemaKeys = new Set([
  'type', 'format', 'description', 'properties', 'items', 'required', 'enum', 'maximum', 'minimum',
  'exclusiveMaximum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems',
  'uniqueItems', 'maxProperties', 'minProperties', 'multipleOf', 'additionalProperties', 'nullable', 'default',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
]);

export function customResourceDefinition(spec: CustomResourceDefinitionSpec): Record<string, unknown> {
  const schema = structural(spec.schema) as Record<string, unknown>;
  const properties = { ...(schema['properties'] as Record<string, unknown>), metadata: { type: 'object' } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${spec.plural}.${spec.group}` },
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

interface StoredCrd {
  metadata: { resourceVersion?: string };
  spec: unknown;
  status?: { conditions?: { type: string; status: string }[] };
}

/** Creates the CRD or brings its spec up to date, then waits for Established. */
export async function ensureCustomResourceDefinition(client: KubeClient, crd: Record<string, unknown>): Promise<void> {
  const name = (crd['metadata'] as { name: string }).name;
  let existing: StoredCrd | undefined;
  try {
    existing = await client.get<StoredCrd>(`${crdPath}/${name}`);
  } catch (error) {
    if (!(error instanceof KubeApiError && error.statusCode === 404)) throw error;
  }
  if (existing === undefined) {
    await client.create(crdPath, crd);
  } else if (JSON.stringify(existing.spec) !== JSON.stringify({ ...(existing.spec as object), ...(crd['spec'] as object) })) {
    await client.request('PUT', `${crdPath}/${name}`, {
      body: { ...crd, metadata: { name, resourceVersion: existing.metadata.resourceVersion } },
    });
  }
  await waitEstablished(client, name);
}

async function waitEstablished(client: KubeClient, name: string): Promise<void> {
  const deadline = Date.now() + establishTimeoutMs;
  while (Date.now() < deadline) {
    const crd = await client.get<StoredCrd>(`${crdPath}/${name}`);
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`CustomResourceDefinition ${name} not Established after ${establishTimeoutMs} ms`);
}
