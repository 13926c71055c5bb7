/** Response encoding shared by every handler: JSON and YAML bodies, metav1.Status errors. */
import type { ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import type { ApiError } from '../api/status.js';

export const jsonContentType = 'application/json';

export function writeJson(res: ServerResponse, code: number, body: unknown, contentType = jsonContentType): void {
  writeSerialized(res, code, JSON.stringify(body), contentType);
}

export const yamlContentType = 'application/yaml';

/**
 * YAML as kube's serializer writes it (sigs.k8s.io/yaml JSONToYAML over
 * go-yaml): the JSON document with map keys sorted, sequences not indented
 * under their key, no line folding.
 */
export function writeYaml(res: ServerResponse, code: number, body: unknown): void {
  writeSerialized(res, code, stringify(body, { sortMapEntries: true, indentSeq: false, lineWidth: 0, aliasDuplicateObjects: false }), yamlContentType);
}

/** Writes an already serialized body with exactly the given Content-Type (express would rewrite it). */
export function writeSerialized(res: ServerResponse, code: number, payload: string | Buffer, contentType: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', contentType);
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  res.setHeader('Content-Length', bytes.length);
  // As bytes: Node then sends the headers on their own as Latin-1, so a header's UTF-8 bytes (warnings/headerBytes) go out as they are.
  res.end(bytes);
}

export function writeStatus(res: ServerResponse, error: ApiError): void {
  const retryAfter = error.details?.retryAfterSeconds;
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  writeJson(res, error.code, error.toStatus());
}
