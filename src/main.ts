/**
 * Entry point: wires configuration, the kube-apiserver client, the
 * delegated authentication/authorization, the request pipeline and the
 * HTTPS listener, and owns the process lifecycle.
 */
import { tenancyV1alpha1 } from './api/group.js';
import { discoveryRouter } from './api/discovery-handler.js';
import { openAPIRouter } from './api/openapi/handler.js';
import { loadSchemaSource } from './api/openapi/schema-source.js';
import { AuthenticationConfigSource } from './auth/authentication-config.js';
import { Authenticator } from './auth/authenticator.js';
import { Authorizer } from './auth/authorizer.js';
import { TokenReviewAuthenticator } from './auth/token-review.js';
import { KubeClient } from './backing/kube-client.js';
import { parseConfig, type ServerConfig } from './config.js';
import { createLogger, type Logger } from './observability/logger.js';
import { ApiServerMetrics } from './observability/metrics.js';
import { createSelfSigned } from './pki/certificates.js';
import { HealthChecks } from './server/health.js';
import { HttpsServer } from './server/https-server.js';
import { buildHandlerChain, metricsRouter } from './server/pipeline.js';
import { ServingCertificateReloader, type CertificatePair } from './server/serving-certificate.js';
import { TlsContextSwitch } from './server/tls-context.js';
import { versionRouter } from './server/version.js';

async function main(): Promise<void> {
  const logger = createLogger();
  const config = parseConfig(process.argv.slice(2));
  const metrics = new ApiServerMetrics();
  const health = new HealthChecks();
  const client = KubeClient.load(config.kubeconfig);

  const authConfig = new AuthenticationConfigSource(client, (error) => {
    logger.warn({ err: error }, 'extension-apiserver-authentication: keeping the last good configuration');
  });
  health.addReadiness({
    name: 'authentication-configuration',
    check: () => (authConfig.current() === undefined ? 'not loaded' : undefined),
  });
  authConfig.start();

  const certificate = await servingCertificate(config, logger);
  const tls = new TlsContextSwitch(certificate.pair, authConfig.current());
  certificate.reloader?.setListener((pair) => {
    tls.updateServingCertificate(pair);
    logger.info('serving certificate reloaded');
  });
  authConfig.onChange((auth) => {
    tls.updateAuthentication(auth);
    logger.info('client CAs reloaded from extension-apiserver-authentication');
  });

  let shuttingDown = false;
  health.addReadiness({ name: 'shutdown', check: () => (shuttingDown ? 'shutting down' : undefined) });

  const app = buildHandlerChain({
    logger,
    metrics,
    authenticator: new Authenticator(() => authConfig.current(), new TokenReviewAuthenticator(client)),
    authorizer: Authorizer.delegating(client),
    inFlightLimits: { readOnly: config.maxRequestsInflight, mutating: config.maxMutatingRequestsInflight },
    handlers: [
      health.router(),
      versionRouter(),
      metricsRouter(metrics),
      discoveryRouter(tenancyV1alpha1),
      openAPIRouter(tenancyV1alpha1, loadSchemaSource()),
    ],
  });
  const server = new HttpsServer(app, tls);
  const address = await server.listen(config.securePort, config.bindAddress);
  logger.info({ address: address.address, port: address.port }, 'serving securely');

  const stop = async (signal: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    await server.shutdown(config.shutdownTimeoutSeconds * 1000);
    authConfig.stop();
    certificate.reloader?.stop();
    client.close();
    logger.info('stopped');
    logger.flush();
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

interface ServingCertificate {
  readonly pair: CertificatePair;
  readonly reloader?: ReloaderHandle;
}

interface ReloaderHandle {
  setListener(listener: (pair: CertificatePair) => void): void;
  stop(): void;
}

/** From files (reloaded on change), or a self-signed certificate for local use only. */
async function servingCertificate(config: ServerConfig, logger: Logger): Promise<ServingCertificate> {
  if (config.tlsCertFile === undefined || config.tlsPrivateKeyFile === undefined) {
    logger.warn('no --tls-cert-file: using a self-signed certificate, for local use only');
    const pair = await createSelfSigned({
      commonName: `${config.serviceName}.${config.serviceNamespace}.svc`,
      dnsNames: [`${config.serviceName}.${config.serviceNamespace}.svc`, 'localhost'],
      ipAddresses: ['127.0.0.1'],
      usage: 'server',
    });
    return { pair };
  }
  let listener: (pair: CertificatePair) => void = () => undefined;
  const reloader = new ServingCertificateReloader(
    { certFile: config.tlsCertFile, keyFile: config.tlsPrivateKeyFile },
    (pair) => {
      listener(pair);
    },
    (error) => {
      logger.warn({ err: error }, 'serving certificate files invalid; keeping the current certificate');
    },
  );
  const pair = await reloader.start();
  return {
    pair,
    reloader: {
      setListener: (l) => {
        listener = l;
      },
      stop: () => {
        reloader.stop();
      },
    },
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
