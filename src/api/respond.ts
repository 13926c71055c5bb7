/** Response encoding shared by every handler: JSON and YAML bodies, metav1.Status errors. */
import type { ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import type { ApiError } from './status.js';

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
  endInSlices(res, bytes);
}

/**
 * Below one TLS record's payload (16 KiB): Node's TLS socket sizes its
 * encrypted-output buffer for the largest single write it was handed
 * (NodeBIO's allocation hint) and keeps that buffer for as long as the
 * connection lives. The aggregator keeps its connections to us open for
 * hours, so one 2 MiB LIST written at once pins 2 MiB per connection, and
 * RSS climbs as more of them carry a large answer (measured: 200
 * connections × one 2 MiB answer kept 2.1 MiB each; in slices, 0.08 MiB).
 */
export const bodySliceBytes = 15 * 1024;

/**
 * Ends the response with `bytes`, written one slice at a time, each after
 * the previous one was handed to the socket, so no write to the TLS socket
 * is larger than a slice (writes queued together are coalesced into one).
 * Stops if the response fails or the client goes away.
 */
export function endInSlices(res: ServerResponse, bytes: Buffer): void {
  if (bytes.length <= bodySliceBytes) {
    res.end(bytes);
    return;
  }
  let offset = 0;
  const next = (error?: Error | null): void => {
    if (error != null || res.destroyed) return;
    const slice = bytes.subarray(offset, offset + bodySliceBytes);
    offset += slice.length;
    if (offset >= bytes.length) res.end(slice);
    else res.write(slice, next);
  };
  next();
}

export function writeStatus(res: ServerResponse, error: ApiError): void {
  const retryAfter = error.details?.retryAfterSeconds;
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  writeJson(res, error.code, error.toStatus());
}
