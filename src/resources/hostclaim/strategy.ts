/**
 * What is specific to HostClaim in the generic REST layer: the rules a
 * tenant's object must follow beyond its schema, and the table columns.
 */
import { forbiddenField, invalidValue, type FieldError } from '../../api/field-errors.js';
import type { WritableResourceStrategy } from '../../api/rest/contracts.js';
import type { TableColumn } from '../../api/rest/representation.js';
import type { ApiObject } from '../../api/rest/types.js';
import { labelSelectorFromHostSelector, type HostSelector } from '../../api/label-selector.js';
import { ApiError } from '../../api/status.js';
import { isReservedKey } from '../../api/reserved-keys.js';
import { isReservedFinalizer } from '../../backing/storage-mapping.js';
import { hostClaimResource } from './descriptor.js';
import { secretAccessAdmission } from './secret-access.js';
import { secretFieldPaths, secretNameErrors, secretReferences, type SecretField } from '../../tenancy/secret-references.js';
import type { Authorizer } from '../../auth/authorizer.js';
import { infrastructureAdminAccess } from '../../tenancy/infrastructure-admin.js';
import { hostClaimProjection, hostErrorMessage } from './projection.js';

const secretReferenceFields = ['userData', 'networkData', 'metaData'] as const;

export function hostClaimStrategy(authorizer: Authorizer): WritableResourceStrategy {
  return {
    descriptor: hostClaimResource,
    columns: hostClaimColumns(),
    validate: (object, namespace) => [...validateMetadata(object), ...validateSecretReferences(object, namespace), ...validateSecretNames(object), ...validateSelection(object)],
    admit: secretAccessAdmission(authorizer),
    projection: hostClaimProjection(infrastructureAdminAccess(authorizer)),
  };
}

function validateMetadata(object: ApiObject): FieldError[] {
  // Name, labels, annotations, owners and finalizers follow kube's ObjectMeta rules in the generic layer (api/object-meta.ts).
  const errors: FieldError[] = [];
  for (const section of ['labels', 'annotations'] as const) {
    for (const key of Object.keys(object.metadata[section] ?? {})) {
      if (isReservedKey(key)) errors.push(forbiddenField(`metadata.${section}[${key}]`, 'this prefix is reserved for the infrastructure'));
    }
  }
  (object.metadata.finalizers ?? []).forEach((finalizer, index) => {
    if (isReservedFinalizer(finalizer)) errors.push(forbiddenField(`metadata.finalizers[${index}]`, 'this prefix is reserved for the infrastructure'));
  });
  return errors;
}

/** Secrets are the claim's own: a reference may not point into another namespace. */
function validateSecretReferences(object: ApiObject, namespace: string): FieldError[] {
  const spec = (object['spec'] ?? {}) as Record<string, { namespace?: unknown } | undefined>;
  return secretReferenceFields.flatMap((field) => {
    const reference = spec[field];
    const referenced = reference?.namespace;
    if (referenced === undefined || referenced === '' || referenced === namespace) return [];
    return [invalidValue(`spec.${field}.namespace`, referenced, "must be empty or the claim's own namespace")];
  });
}

/** Every referenced Secret must be nameable: the binder reads it by that name with its own identity. */
function validateSecretNames(object: ApiObject): FieldError[] {
  const spec = object['spec'];
  const references = typeof spec === 'object' && spec !== null ? secretReferences(spec) : {};
  return Object.entries(references).flatMap(([field, name]) =>
    secretNameErrors(name).map((message) => invalidValue(secretFieldPaths[field as SecretField], name, message)),
  );
}

/** The host selector must be one labels.NewRequirement accepts (the schema checks only its shape). */
function validateSelection(object: ApiObject): FieldError[] {
  const spec = (object['spec'] ?? {}) as { hostSelector?: HostSelector };
  try {
    labelSelectorFromHostSelector(spec.hostSelector);
    return [];
  } catch (error) {
    return [invalidValue('spec.hostSelector', JSON.stringify(spec.hostSelector ?? null), error instanceof ApiError ? error.message : 'invalid selector')];
  }
}

function hostClaimColumns(): TableColumn[] {
  const status = (o: ApiObject): Record<string, unknown> => (o['status'] ?? {}) as Record<string, unknown>;
  const spec = (o: ApiObject): Record<string, unknown> => (o['spec'] ?? {}) as Record<string, unknown>;
  const condition = (o: ApiObject, type: string): string | undefined =>
    ((status(o)['conditions'] ?? []) as { type?: string; status?: string }[]).find((c) => c.type === type)?.status;
  return [
    {
      name: 'Host',
      type: 'string',
      description: 'The BareMetalHost bound to the claim.',
      priority: 0,
      value: (o) => (status(o)['bareMetalHost'] as { name?: string } | undefined)?.name,
    },
    { name: 'Ready', type: 'string', description: 'Whether the workload is deployed and the host ready.', priority: 0, value: (o) => condition(o, 'Ready') },
    { name: 'Powered', type: 'boolean', description: 'Whether the host is powered on.', priority: 0, value: (o) => status(o)['poweredOn'] },
    {
      name: 'Image',
      type: 'string',
      description: 'The image deployed on the host.',
      priority: 1,
      value: (o) => (spec(o)['image'] as { url?: string } | undefined)?.url,
    },
    { name: 'Failure Domain', type: 'string', description: 'The failure domain requested.', priority: 1, value: (o) => spec(o)['failureDomain'] },
    {
      name: 'Host Error',
      type: 'string',
      description: "The host's error: for tenants a sanitized message, for infrastructure admins the host's own text.",
      priority: 1,
      value: hostErrorMessage,
    },
  ];
}
