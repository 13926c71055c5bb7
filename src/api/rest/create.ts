/** create (POST to a collection), with generateName retried on a name collision as kube's generic store does. */
import { randomBytes } from 'node:crypto';
import { required, invalid } from '../field-errors.js';
import { ApiError } from '../status.js';
import type { WriteCall } from './contracts.js';
import { admitOrThrow, decodeBody } from './decode.js';
import { parseWriteParameters } from './query.js';
import { respondObject, sendWarnings } from './representation.js';

const maxGenerateNameAttempts = 8;

export async function createObject(call: WriteCall): Promise<void> {
  const write = parseWriteParameters(call.url.searchParams);
  const { object, warnings } = await decodeBody(call, write);
  const prefix = object.metadata.generateName;
  if ((object.metadata.name ?? '') === '' && (prefix ?? '') === '') {
    throw invalid(call.gv.group, call.resource.strategy.descriptor.kind, '', [required('metadata.name', 'name or generateName is required')]);
  }
  // The status subresource owns status: a create never sets it (CRD PrepareForCreate).
  Reflect.deleteProperty(object, 'status');
  for (let attempt = 1; ; attempt++) {
    if ((object.metadata.name ?? '') === '' || (prefix !== undefined && attempt > 1)) object.metadata.name = generatedName(prefix ?? '');
    await admitOrThrow(call, object);
    try {
      const created = await call.resource.store.create(call.info.namespace, object, write);
      sendWarnings(call.res, [...warnings, ...created.warnings]);
      respondObject(call.req, call.res, 201, created.object, call.resource.strategy);
      return;
    } catch (error) {
      const retry = prefix !== undefined && error instanceof ApiError && error.reason === 'AlreadyExists' && attempt < maxGenerateNameAttempts;
      if (!retry) throw error;
    }
  }
}

/** storage/names: the prefix (cut to 58) plus five random [a-z0-9] characters. */
function generatedName(prefix: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const suffix = [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
  return `${prefix.slice(0, 58)}${suffix}`;
}
