/** Serves the discovery documents; the documents are built and serialized once. */
import { Router, type Request, type Response } from 'express';
import { jsonContentType, writeSerialized } from '../server/respond.js';
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
import type { ApiGroupVersion } from './resource.js';
import { etagMatches, serializeDocument, type SerializedDocument } from './serialized-document.js';

const acceptedTypes = [jsonContentType];

export function discoveryRouter(gv: ApiGroupVersion): Router {
  const router = Router({ strict: true });
  const legacyRoot = serializeDocument(apiGroupList(gv));
  const v2Root = serializeDocument(aggregatedDiscovery(gv));
  const group = serializeDocument(apiGroup(gv));
  const resources = serializeDocument(apiResourceList(gv));

  router.get('/apis', (req, res) => {
    serveNegotiated(req, res, rootDiscoveryOffers, { legacy: legacyRoot, v2: v2Root });
  });
  router.get(`/apis/${gv.group}`, (req, res) => {
    serveNegotiated(req, res, legacyOnlyOffers, { legacy: group });
  });
  router.get(`/apis/${gv.group}/${gv.version}`, (req, res) => {
    serveNegotiated(req, res, legacyOnlyOffers, { legacy: resources });
  });
  return router;
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
