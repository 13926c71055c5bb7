/**
 * /healthz, /livez and /readyz with kube's text format, per-check paths
 * (/readyz/<check>), `verbose` and `exclude`. Readiness includes every
 * check; liveness only those that mean "restart me".
 */
import type { Request, RequestHandler, Response } from 'express';
import { requestContext } from '../api/request-context.js';
import { exactRoutes, type RouteHandler } from '../api/exact-routes.js';

export interface HealthCheck {
  readonly name: string;
  /** Undefined when healthy; otherwise the reason (logged, never shown to clients). */
  readonly check: () => string | undefined;
}

export class HealthChecks {
  private readonly liveness: HealthCheck[] = [{ name: 'ping', check: () => undefined }];
  private readonly readiness: HealthCheck[] = [{ name: 'ping', check: () => undefined }];

  addReadiness(check: HealthCheck): void {
    this.readiness.push(check);
  }

  addLiveness(check: HealthCheck): void {
    this.liveness.push(check);
    this.readiness.push(check);
  }

  router(): RequestHandler {
    const routes: [string, RouteHandler][] = [];
    for (const [path, checks] of [
      ['/healthz', this.liveness],
      ['/livez', this.liveness],
      ['/readyz', this.readiness],
    ] as const) {
      routes.push([path, (req, res) => { respond(req, res, path.slice(1), checks); }]);
      for (const check of checks) routes.push([`${path}/${check.name}`, (_req, res) => { respondSingle(res, check); }]);
    }
    return exactRoutes(routes);
  }

  isReady(): boolean {
    return this.readiness.every((c) => c.check() === undefined);
  }
}

function respond(req: Request, res: Response, endpoint: string, checks: readonly HealthCheck[]): void {
  const query = requestContext(req).url.searchParams;
  const excluded = new Set(query.getAll('exclude'));
  const results = checks.filter((c) => !excluded.has(c.name)).map((c) => ({ name: c.name, failure: c.check() }));
  const failed = results.some((r) => r.failure !== undefined);
  const verbose = query.has('verbose') || failed;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.status(failed ? 500 : 200);
  if (!verbose) {
    res.send('ok');
    return;
  }
  const lines = results.map((r) => (r.failure === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  res.send(`${lines.join('\n')}\n${endpoint} check ${failed ? 'failed' : 'passed'}\n`);
}

function respondSingle(res: Response, check: HealthCheck): void {
  const failure = check.check();
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.status(failure === undefined ? 200 : 500).send(failure === undefined ? 'ok' : `internal server error: ${check.name} failed`);
}
