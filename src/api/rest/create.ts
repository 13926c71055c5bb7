/**
 * create (POST to a collection), in k8s.io/apiserver handlers/create.go
 * order: output negotiation, options, body, validation, admission, then
 * the one write; generateName is retried on a name collision as kube's
 * generic store does.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../status.js';
import { checkObjectMediaType } from './body.js';
import type { WriteCall } from './contracts.js';
import { admitCreate, decodeBody } from './decode.js';
import { parseWriteParameters } from './query.js';
import { respondObject, sendWarnings } from './representation.js';

const maxGenerateNameAttempts = 8;

export async function createObject(call: WriteCall): Promise<void> {
  checkObjectMediaType(call.req);
  const write = parseWriteParameters(call.url.searchParams, 'CreateOptions');
  const { object, warnings } = await decodeBody(call, write);
  const prefix = object.metadata.generateName;
  // The server sets these on create (FillObjectMetaSystemFields); the status subresource owns status (CRD PrepareForCreate).
  for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
    Reflect.deleteProperty(object.metadata, field);
  }
  Reflect.deleteProperty(object, 'status');
  for (let attempt = 1; ; attempt++) {
    if ((object.metadata.name ?? '') === '' || (prefix !== undefined && prefix !== '' && attempt > 1)) {
      if ((prefix ?? '') !== '') object.metadata.name = generatedName(prefix ?? '');
    }
    await admitCreate(call, object);
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
