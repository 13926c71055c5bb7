/**
 * The real request pipeline and generic REST router over in-memory stores,
 * on a local HTTPS port, for unit tests of what the REST layer answers:
 * front-proxy authentication with a test PKI, the given authorizer.
 */
import { tenancyV1alpha1 } from '../../src/resources/group.js';
import type { RestResource } from '../../src/api/rest/contracts.js';
import { restRouter } from '../../src/api/rest/handler.js';
import { parseAuthenticationConfig } from '../../src/auth/authentication-config.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import type { Authorizer } from '../../src/auth/authorizer.js';
import { createLogger } from '../../src/observability/logger.js';
import { ApiServerMetrics } from '../../src/observability/metrics.js';
import { createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';
import { HttpsServer } from '../../src/server/https-server.js';
import { buildHandlerChain } from '../../src/server/pipeline.js';
import { TlsContextSwitch } from '../../src/server/tls-context.js';
import { request, type TestResponse } from './https-client.js';
import { authenticationConfigMapData, createTestPki } from './pki.js';
import { everyNamespace } from './read-access.js';

export interface RouteServer {
  /** A request through the front proxy; `headers` carry the X-Remote-* identity. */
  readonly send: (method: string, path: string, headers: Record<string, string>) => Promise<TestResponse>;
  readonly shutdown: () => Promise<void>;
}

export async function startRouteServer(resources: readonly RestResource[], authorizer: Pick<Authorizer, 'authorize'>, readOnlyInFlight = 10): Promise<RouteServer> {
  const pki = await createTestPki();
  const servingCA = await createCertificateAuthority('serving-ca');
  const serving = await issueCertificate(servingCA, { commonName: 'localhost', dnsNames: ['localhost'], usage: 'server' });
  const auth = parseAuthenticationConfig(authenticationConfigMapData(pki));
  const app = buildHandlerChain({
    logger: createLogger('silent'),
    metrics: new ApiServerMetrics(),
    authenticator: new Authenticator(() => auth, { authenticate: () => Promise.resolve({ kind: 'none' as const }) }),
    authorizer,
    inFlightLimits: { readOnly: readOnlyInFlight, mutating: 10 },
    requestTimeoutMs: 60_000,
    handlers: [restRouter(tenancyV1alpha1, resources, everyNamespace)],
  });
  const server = new HttpsServer(app, new TlsContextSwitch({ certPem: serving.certPem, keyPem: serving.keyPem }, auth));
  const { port } = await server.listen(0, '127.0.0.1');
  return {
    send: (method, path, headers) => request({ port, path, method, headers, caPem: servingCA.certPem, client: pki.frontProxyClient }),
    shutdown: () => server.shutdown(1000),
  };
}
