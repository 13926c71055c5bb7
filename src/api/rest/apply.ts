/**
 * Server-side apply (a PATCH of application/apply-patch+yaml), in
 * k8s.io/apiserver handlers/patch.go applyPatcher order: the stored object
 * is read (apply creates a missing one, except on a subresource), the
 * configuration decoded as YAML (sigs.k8s.io/yaml), refused where kube's
 * field manager cannot type it (fieldmanager's typed patch), validated as
 * the create or update it becomes (rest.BeforeCreate/BeforeUpdate), and
 * delegated to the backing store's field manager.
 */
import { ApiError, badRequest, conflict, notFound } from '../status.js';
import { decodeObject, strictDecodingWarnings } from './body.js';
import type { StrictErrors } from './body-worker.js';
import { yamlReaderError } from './body-type-meta.js';
import type { WriteCall } from './contracts.js';
import { admitCreate, admitUpdate, checkObjectName, checkTypeMeta, pruneSchemaOf, subresourceOf, withTypedMetadata } from './decode.js';
import type { WriteParameters } from './query.js';
import { respondObject, sendWarnings } from './representation.js';
import type { ApiObject } from './types.js';
import { isJsonObject } from '../json-value.js';

export async function applyObject(call: WriteCall, body: Buffer, write: WriteParameters): Promise<void> {
  const current = await currentOrUndefined(call);
  // Apply creates a missing object, but a subresource never does (the status store's Update forbids create).
  if (current === undefined && subresourceOf(call) !== '') throw notFound(call.gr, call.info.name);
  // kube decodes an apply configuration as YAML (sigs.k8s.io/yaml), JSON included: goyaml's reader refuses what is not UTF-8 text.
  const problem = yamlReaderError(body);
  if (problem !== undefined) throw badRequest(`error decoding YAML: error converting YAML to JSON: ${problem}`);
  const { value: decoded, duplicates, firstUnknownField } = await decodeObject(body.toString('utf8'), 'application/yaml', { schema: pruneSchemaOf(call) });
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) throw badRequest('the apply configuration must be an object');
  const rawMetadata = (decoded as Record<string, unknown>)['metadata'];
  // The field manager types creationTimestamp as a scalar of whatever kind, and BeforeCreate/BeforeUpdate overwrite it: a scalar there is dropped, never refused.
  if (isJsonObject(rawMetadata) && !isJsonObject(rawMetadata['creationTimestamp']) && !Array.isArray(rawMetadata['creationTimestamp'])) {
    Reflect.deleteProperty(rawMetadata, 'creationTimestamp');
  }
  const configuration = withTypedMetadata(call, decoded as Record<string, unknown>);
  if (configuration.metadata.managedFields !== undefined || (isJsonObject(rawMetadata) && rawMetadata['managedFields'] !== undefined)) {
    throw badRequest('metadata.managedFields must be nil');
  }
  checkTypeMeta(call, configuration);
  // A configuration without a name applies to the URL's object; a name set to null removes it from the result.
  if (isJsonObject(rawMetadata) && Object.hasOwn(rawMetadata, 'name')) checkObjectName(call, configuration.metadata.name ?? '');
  configuration.metadata.name = call.info.name;
  // The field manager builds the typed patch before anything is validated.
  refuseUndeclaredField(call, rawMetadata, firstUnknownField);
  // The field manager names the configuration by the namespace it carries (none unless the client set one).
  if (!isJsonObject(rawMetadata) || typeof rawMetadata['namespace'] !== 'string' || rawMetadata['namespace'] === '') {
    Reflect.deleteProperty(configuration.metadata, 'namespace');
  }
  if (current === undefined) {
    const uid = configuration.metadata.uid;
    if (uid !== undefined && uid !== '') {
      throw conflict(call.gr, call.info.name, `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`);
    }
  }
  // What the configuration sets of the object's metadata is validated as the update (or create) it becomes.
  const result: ApiObject = { ...configuration, metadata: { ...current?.metadata, ...configuration.metadata, namespace: call.info.namespace } };
  try {
    if (current === undefined) await admitCreate(call, result);
    else await admitUpdate(call, result, current);
  } catch (error) {
    throw await typedPatchFailureOr(error, call, configuration, write);
  }
  const decodingWarnings = applyStrictDecoding(duplicates, write);
  const applied = await call.resource.store.apply(call.info.namespace, call.info.name, configuration, subresourceOf(call), write);
  sendWarnings(call.res, [...decodingWarnings, ...applied.warnings]);
  // An apply that creates the object answers 201, as a create does.
  respondObject(call.req, call.res, current === undefined ? 201 : 200, applied.object, call.resource.strategy);
}

/**
 * kube's field manager cannot build a typed patch from a configuration
 * with a field the schema does not declare, whatever fieldValidation says,
 * and answers 500 naming one of them; this is the 400 it should be
 * (issue 15), naming the first. The configuration was pruned as it was
 * decoded, so its unknown fields never reach this thread whole.
 */
function refuseUndeclaredField(call: WriteCall, rawMetadata: unknown, path: string | undefined): void {
  if (path !== undefined) throw typedPatchFailure(call, rawMetadata, `.${path}: field not declared in schema`);
}

function typedPatchFailure(call: WriteCall, rawMetadata: unknown, problem: string): ApiError {
  const namespace = isJsonObject(rawMetadata) && typeof rawMetadata['namespace'] === 'string' ? rawMetadata['namespace'] : '';
  const kind = call.resource.strategy.descriptor.kind;
  return badRequest(`failed to create typed patch object (${namespace}/${call.info.name}; ${call.gv.group}/${call.gv.version}, Kind=${kind}): ${problem}`);
}

/**
 * kube's applyPatcher decodes the configuration leniently, then once the
 * apply has succeeded decodes it again strictly (sigs.k8s.io/yaml
 * UnmarshalStrict): repeated keys refuse it under Strict and are warnings
 * under Warn.
 */
function applyStrictDecoding(duplicates: StrictErrors, write: WriteParameters): string[] {
  if (duplicates.count === 0 || write.fieldValidation === 'Ignore') return [];
  if (write.fieldValidation === 'Strict') throw badRequest(`error strict decoding YAML: error converting YAML to JSON: ${duplicates.message}`);
  return strictDecodingWarnings(duplicates.first.map((error) => `error converting YAML to JSON: ${error}`)).map((w) => `299 - ${JSON.stringify(w)}`);
}

/**
 * kube's field manager builds the typed patch before anything is validated,
 * and refuses a configuration the schema cannot type (a 500 there, a 400
 * here: the backing store's translation). The schema lives with the backing
 * store, so a configuration this server found invalid is tried there as a
 * dry run: its typing error, if any, is the answer kube gives first.
 */
async function typedPatchFailureOr(error: unknown, call: WriteCall, configuration: ApiObject, write: WriteParameters): Promise<unknown> {
  if (!(error instanceof ApiError) || error.reason !== 'Invalid') return error;
  try {
    await call.resource.store.apply(call.info.namespace, call.info.name, configuration, subresourceOf(call), { ...write, dryRun: ['All'] });
  } catch (probe) {
    if (probe instanceof ApiError && probe.code === 400 && probe.message.startsWith('failed to create typed patch object')) return probe;
  }
  return error;
}

async function currentOrUndefined(call: WriteCall): Promise<ApiObject | undefined> {
  try {
    return await call.resource.store.get(call.info.namespace, call.info.name, undefined);
  } catch (error) {
    if (error instanceof ApiError && error.reason === 'NotFound') return undefined;
    throw error;
  }
}

