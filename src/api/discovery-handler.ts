/** Serves the discovery documents; the documents are built and serialized once. */
import type { Request, RequestHandler, Response } from 'express';
import { requestContext } from './request-context.js';
import { jsonContentType, writeSerialized } from './respond.js';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  discoveryV2ContentType,
  legacyOnlyOffers,
  rootDiscoveryOffers,
  type DiscoveryFormat,
} from './discovery.js';
import { negotiate, type Offer } from './negotiation.js';
import { splitPath } from './request-info.js';
import type { ApiGroupVersion } from './resource.js';
import { etagMatches, serializeDocument, type SerializedDocument } from './serialized-document.js';

const acceptedTypes = [jsonContentType];

/**
 * `/apis` (and `/apis/`, as the aggregator registers both) is the root;
 * below the exact `/apis/` prefix, a non-resource path of two or three
 * segments (split as kube splits, so trailing slashes do not count) is the
 * group or version document, as kube's crdHandler and aggregator route them.
 */
export function discoveryRouter(gv: ApiGroupVersion): RequestHandler {
  const legacyRoot = serializeDocument(apiGroupList(gv));
  const v2Root = serializeDocument(aggregatedDiscovery(gv));
  const group = serializeDocument(apiGroup(gv));
  const resources = serializeDocument(apiResourceList(gv));
  return (req, res, next) => {
    const { info } = requestContext(req);
    if ((req.method !== 'GET' && req.method !== 'HEAD') || info.isResourceRequest) {
      next();
      return;
    }
    if (info.path === '/apis' || info.path === '/apis/') {
      serveNegotiated(req, res, rootDiscoveryOffers, { legacy: legacyRoot, v2: v2Root });
      return;
    }
    const parts = info.path.startsWith('/apis/') ? splitPath(info.path) : [];
    if (parts.length === 2 && parts[1] === gv.group) {
      serveNegotiated(req, res, legacyOnlyOffers, { legacy: group });
    } else if (parts.length === 3 && parts[1] === gv.group && parts[2] === gv.version) {
      serveNegotiated(req, res, legacyOnlyOffers, { legacy: resources });
    } else {
      next();
    }
  };
}

function serveNegotiated(
  req: Request,
  res: Response,
  offers: readonly Offer<DiscoveryFormat>[],
  documents: Partial<Record<DiscoveryFormat, SerializedDocument>>,
): void {
  const format = negotiate(req.headers.accept, offers, acceptedTypes);
  const document = documents[format];
  if (document === undefined) throw new Error(`no ${format} discovery document`);
  const contentType = format === 'v2' ? discoveryV2ContentType : jsonContentType;
  if (format === 'v2') {
    // Only the aggregated document is cached by the aggregator, by ETag.
    res.setHeader('ETag', document.etag);
    res.setHeader('Vary', 'Accept');
    if (etagMatches(req.headers['if-none-match'], document.etag)) {
      res.status(304).end();
      return;
    }
  }
  writeSerialized(res, 200, document.body, contentType);
}
