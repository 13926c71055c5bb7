/**
 * Serves /openapi/v2, the /openapi/v3 root and /openapi/v3/apis/<g>/<v>,
 * following kube-openapi's handlers (pkg/handler, pkg/handler3): documents
 * built and serialized once, ETag = quoted uppercase hex SHA-512 of the body,
 * `If-None-Match` → 304, and the hashed v3 URL cacheable for a year.
 *
 * Unlike kube-openapi, a v3 request whose `hash` is not the current one gets
 * the current document (marked uncacheable) instead of a 301: the aggregator
 * refuses redirects from aggregated servers. No response of this router is a
 * redirect. Only JSON is produced; an Accept header that excludes JSON (e.g.
 * protobuf only) gets a 406 Status. Authorization of these non-resource paths
 * happens in an earlier stage.
 */
import type { Request, RequestHandler, Response } from 'express';
import { requestContext } from '../request-context.js';
import { endInSlices } from '../respond.js';
import { exactRoutes } from '../exact-routes.js';
import { negotiate, type MediaRange } from '../negotiation.js';
import type { ApiGroupVersion } from '../resource.js';
import { etagMatches, serializeDocument, type SerializedDocument } from '../serialized-document.js';
import type { SchemaSource } from './schema.js';
import { buildOpenAPIV2 } from './v2.js';
import { buildOpenAPIV3 } from './v3.js';

const JSON_TYPE = 'application/json';
const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/** The three OpenAPI documents of the group/version, as served. */
export interface OpenAPIDocuments {
  readonly v2: SerializedDocument;
  readonly v3Root: SerializedDocument;
  readonly v3GroupVersion: SerializedDocument;
  /** Server-relative path of the group/version document, "/openapi/v3/apis/<g>/<v>". */
  readonly v3GroupVersionPath: string;
}

export function buildOpenAPIDocuments(gv: ApiGroupVersion, source: SchemaSource): OpenAPIDocuments {
  const v2 = serializeDocument(buildOpenAPIV2(gv, source));
  const v3GroupVersion = serializeDocument(buildOpenAPIV3(gv, source));
  const key = `apis/${gv.group}/${gv.version}`;
  const v3GroupVersionPath = `/openapi/v3/${key}`;
  const v3Root = serializeDocument({
    paths: { [key]: { serverRelativeURL: `${v3GroupVersionPath}?hash=${v3GroupVersion.hash}` } },
  });
  return { v2, v3Root, v3GroupVersion, v3GroupVersionPath };
}

export function openAPIRouter(gv: ApiGroupVersion, source: SchemaSource): RequestHandler {
  const docs = buildOpenAPIDocuments(gv, source);
  return exactRoutes([
    ['/openapi/v2', (req, res) => { serve(req, res, docs.v2, undefined); }],
    ['/openapi/v3', (req, res) => { serve(req, res, docs.v3Root, undefined); }],
    [docs.v3GroupVersionPath, (req, res) => { serve(req, res, docs.v3GroupVersion, requestContext(req).url.searchParams.get('hash') ?? undefined); }],
  ]);
}

/** kube-openapi's handler matches type and subtype each against its own or `*`, and ignores parameters. */
export function openAPIJson(range: MediaRange): boolean {
  return (range.type === 'application' || range.type === '*') && (range.subtype === 'json' || range.subtype === '*');
}

function serve(req: Request, res: Response, doc: SerializedDocument, hash: string | undefined): void {
  negotiate(req.headers.accept, [{ value: JSON_TYPE, matches: openAPIJson }], [JSON_TYPE]);
  res.setHeader('Vary', 'Accept');
  res.setHeader('ETag', doc.etag);
  if (hash !== undefined) {
    if (hash === doc.hash) {
      res.setHeader('Cache-Control', 'public, immutable');
      res.setHeader('Expires', new Date(Date.now() + ONE_YEAR_MS).toUTCString());
    } else {
      // A stale or foreign hash: serve what we have now, never a redirect.
      res.setHeader('Cache-Control', 'no-cache, private');
    }
  }
  if (etagMatches(req.headers['if-none-match'], doc.etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', doc.body.length);
  endInSlices(res, doc.body);
}
