/** Writes objects and lists in the representation the client negotiated (JSON, YAML, Table, PartialObjectMetadata). */
import type { Request, Response } from 'express';
import { requestContext } from '../request-context.js';
import { jsonContentType, writeJson, writeSerialized, writeYaml } from '../respond.js';
import type { ResourceStrategy } from './contracts.js';
import { negotiateConversion, negotiateOutput } from './output-format.js';
import { toPartialObjectMetadata, toPartialObjectMetadataList } from './partial-object-metadata.js';
import { parseIncludeObject, toTable } from './table.js';
import type { ApiObject, ObjectList } from './types.js';
import { listJson, objectJson } from './serialized.js';
import { boundedWarnings, headerBytes } from './warnings.js';

export type { TableColumn } from './table.js';

/**
 * Negotiates the response before anything is read or written: kube's
 * handlers (get, list, watch and every write) call NegotiateOutputMediaType
 * first, so a 406 comes before a 404 or a query's 400, and a request refused
 * for its Accept header changes nothing.
 */
export function negotiateOutputMediaType(req: Request): void {
  negotiateConversion(req.headers.accept);
}

/**
 * What kube only finds while encoding a write's response, after the write
 * (a PartialObjectMetadata kind that does not fit, bad Table options):
 * checked right before the write instead, so the refusal changes nothing.
 */
export function checkWriteOutput(req: Request, target: 'object' | 'list'): void {
  const format = negotiateOutput(req.headers.accept, target);
  if (format.kind === 'table') parseIncludeObject(requestContext(req).url.searchParams);
}

export function respondObject(req: Request, res: Response, code: number, object: ApiObject, strategy: ResourceStrategy): void {
  const format = negotiateOutput(req.headers.accept, 'object');
  switch (format.kind) {
    case 'json':
      writeSerialized(res, code, objectJson(object), jsonContentType);
      return;
    case 'yaml':
      writeYaml(res, code, object);
      return;
    case 'partialObjectMetadata':
      writeJson(res, code, toPartialObjectMetadata(object, format.version));
      return;
    case 'table':
      writeJson(
        res,
        code,
        toTable([object], strategy.columns, {
          includeObject: parseIncludeObject(requestContext(req).url.searchParams),
          version: format.version,
          listMeta: { resourceVersion: object.metadata.resourceVersion },
        }),
      );
  }
}

export function respondList(req: Request, res: Response, list: ObjectList, strategy: ResourceStrategy): void {
  const format = negotiateOutput(req.headers.accept, 'list');
  switch (format.kind) {
    case 'json':
      writeSerialized(res, 200, listJson(list), jsonContentType);
      return;
    case 'yaml':
      writeYaml(res, 200, list);
      return;
    case 'partialObjectMetadata':
      writeJson(res, 200, toPartialObjectMetadataList(list.items, list.metadata, format.version));
      return;
    case 'table':
      writeJson(
        res,
        200,
        toTable(list.items, strategy.columns, {
          includeObject: parseIncludeObject(requestContext(req).url.searchParams),
          version: format.version,
          listMeta: list.metadata,
        }),
      );
  }
}

export function sendWarnings(res: Response, warnings: readonly string[]): void {
  if (warnings.length > 0) res.setHeader('Warning', boundedWarnings(warnings).map(headerBytes));
}
