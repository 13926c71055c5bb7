/**
 * Request bodies: read raw (3 MiB, kube's MaxRequestBodyBytes), then decoded
 * by media type. Only what a CRD endpoint accepts is accepted.
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, unsupportedMediaType } from '../status.js';
import { parseMediaRange } from '../negotiation.js';

const maxBodyBytes = 3 * 1024 * 1024;

export const patchTypes = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  apply: 'application/apply-patch+yaml',
  strategic: 'application/strategic-merge-patch+json',
} as const;

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBodyBytes) throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function mediaType(req: IncomingMessage): string {
  const range = parseMediaRange(req.headers['content-type'] ?? '');
  return range === undefined ? '' : `${range.type}/${range.subtype}`;
}

/** A JSON (or YAML, which kube also accepts for objects) object body. */
export function decodeObject(text: string, type: string): unknown {
  // kube reads a body without Content-Type as JSON.
  if (type === 'application/json' || type === '') return parseJson(text);
  if (type === 'application/yaml' || type === patchTypes.apply) return parseYamlDocument(text);
  throw unsupportedMediaType(['application/json', 'application/yaml']);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw badRequest(`the body of the request could not be decoded: ${(error as Error).message}`);
  }
}

function parseYamlDocument(text: string): unknown {
  try {
    // YAML 1.1 like sigs.k8s.io/yaml; duplicate keys are errors, as in kube's strict decoding.
    return parseYaml(text, { version: '1.1', uniqueKeys: true, maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw badRequest(`error decoding YAML: ${(error as Error).message}`);
  }
}

/**
 * Paths of keys that repeat within one JSON object (`spec.poweredOn`,
 * `spec.list[0].x`), which JSON.parse would silently collapse: kube's strict
 * decoding reports them (error under Strict, warning under Warn).
 * Expects text that JSON.parse has already accepted.
 */
export function duplicateFields(text: string): string[] {
  const duplicates: string[] = [];
  let position = 0;
  const skipSpace = (): void => {
    while (position < text.length && ' \t\r\n'.includes(text[position] ?? '')) position++;
  };
  const readString = (): string => {
    const start = position;
    position++;
    while (text[position] !== '"') position += text[position] === '\\' ? 2 : 1;
    position++;
    return JSON.parse(text.slice(start, position)) as string;
  };
  const readValue = (path: string): void => {
    skipSpace();
    const char = text[position];
    if (char === '{') {
      readObject(path);
    } else if (char === '[') {
      readArray(path);
    } else if (char === '"') {
      readString();
    } else {
      while (position < text.length && !',]} \t\r\n'.includes(text[position] ?? '')) position++;
    }
  };
  const readObject = (path: string): void => {
    const seen = new Set<string>();
    position++;
    for (;;) {
      skipSpace();
      if (text[position] === '}') break;
      if (text[position] === ',') position++;
      skipSpace();
      const key = readString();
      const keyPath = path === '' ? key : `${path}.${key}`;
      if (seen.has(key)) duplicates.push(keyPath);
      seen.add(key);
      skipSpace();
      position++; // ':'
      readValue(keyPath);
    }
    position++;
  };
  const readArray = (path: string): void => {
    position++;
    for (let index = 0; ; index++) {
      skipSpace();
      if (text[position] === ']') break;
      if (text[position] === ',') position++;
      readValue(`${path}[${index}]`);
    }
    position++;
  };
  readValue('');
  return duplicates;
}
