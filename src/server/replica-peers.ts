/**
 * The endpoint peer replicas ask before answering a consistent read from
 * memory (backing/replica-watermarks.ts): this replica's watermark, and
 * whether it knows the asker. A non-resource URL behind authentication and
 * authorization like /metrics: only identities RBAC grants `get` on it
 * (the server's ServiceAccount, deploy/base/rbac.yaml) are answered.
 */
import type { RequestHandler } from 'express';
import { exactRoutes } from '../api/exact-routes.js';
import { requestContext } from '../api/request-context.js';
import { writeSerialized } from '../api/respond.js';
import { watermarkPath } from '../backing/peer-client.js';
import type { PeerAnswer } from '../backing/replica-watermarks.js';

export function replicaPeersRouter(watermarks: { answer(asker: string): PeerAnswer }): RequestHandler {
  return exactRoutes([
    [
      watermarkPath,
      (req, res) => {
        const asker = requestContext(req).url.searchParams.get('asker') ?? '';
        writeSerialized(res, 200, JSON.stringify(watermarks.answer(asker)), 'application/json');
      },
    ],
  ]);
}
