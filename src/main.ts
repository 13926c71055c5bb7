/**
 * Entry point: wires configuration, the kube-apiserver client, the
 * delegated authentication/authorization, the request pipeline, the HTTPS
 * listener and the leader-elected binder, and owns the process lifecycle.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { tenancyV1alpha1 } from './resources/group.js';
import { discoveryRouter } from './api/discovery-handler.js';
import { openAPIRouter } from './api/openapi/handler.js';
import { loadSchemaSource } from './api/openapi/schema-source.js';
import type { SchemaSource } from './api/openapi/schema.js';
import { AuthenticationConfigSource } from './auth/authentication-config.js';
import { Authenticator } from './auth/authenticator.js';
import { Authorizer } from './auth/authorizer.js';
import { NamespaceAccessCache } from './auth/namespace-access.js';
import { ScopedReadAuthorizer } from './auth/scoped-read-authorizer.js';
import { TokenReviewAuthenticator } from './auth/token-review.js';
import { BackendProbe } from './backing/backend-probe.js';
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
import { restRouter } from './api/rest/handler.js';
import { WatchHub } from './api/rest/watch-hub.js';
import type { GroupResource } from './api/status.js';
import { ensureCustomResourceDefinition } from './backing/crd.js';
import { RecordStore } from './backing/record-store.js';
import { SharedInformerFactory } from './backing/shared-informers.js';
import { ContinueTokens } from './backing/continue-token.js';
import { loadContinueTokenKey } from './backing/token-key.js';
import { hostClaimResource } from './resources/hostclaim/descriptor.js';
import { hostClaimRecordCRD, hostClaimStorageMapping } from './resources/hostclaim/storage.js';
import { hostClaimRecord } from './tenancy/claim-record.js';
import { metal3Resources } from './metal3/types.js';
import { hostClaimStrategy } from './resources/hostclaim/strategy.js';
import { hardwareDataResource } from './resources/hardwaredata/descriptor.js';
import { HardwareDataFeed } from './resources/hardwaredata/feed.js';
import { HardwareDataModel } from './resources/hardwaredata/model.js';
import { HardwareDataTokens } from './resources/hardwaredata/continue-token.js';
import { HardwareDataStore } from './resources/hardwaredata/store.js';
import { hardwareDataStrategy } from './resources/hardwaredata/strategy.js';
import { LeaderElector } from './backing/leader-election.js';
import { Binder } from './controllers/binder/binder.js';
import { useSmallBufferPool } from './observability/buffer-pool.js';
import { ReplicaMembership } from './backing/replica-membership.js';
import { PeerClient } from './backing/peer-client.js';
import { ReplicaWatermarks, type ReplicaConsistency, type WriteAcknowledgement } from './backing/replica-watermarks.js';
import { replicaPeersRouter } from './server/replica-peers.js';

async function main(): Promise<void> {
  useSmallBufferPool();
  const logger = createLogger();
  const config = parseConfig(process.argv.slice(2));
  const metrics = new ApiServerMetrics();
  const health = new HealthChecks();
  const client = await KubeClient.load(config.kubeconfig);

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
  let servingCertificatePem = certificate.pair.certPem;
  certificate.reloader?.setListener((pair) => {
    servingCertificatePem = pair.certPem;
    tls.updateServingCertificate(pair);
    logger.info('serving certificate reloaded');
  });
  authConfig.onChange((auth) => {
    tls.updateAuthentication(auth);
    logger.info('client CAs reloaded from extension-apiserver-authentication');
  });

  const schemaSource = loadSchemaSource();
  // One cache per backing resource for the whole process: the REST layer, HardwareData and the binder share them.
  const informers = sharedInformers(client, logger);
  const tokenKey = continueTokenKey(client, config, logger);
  health.addReadiness({ name: 'continue-token-key', check: () => (tokenKey.loaded() ? undefined : 'not loaded') });
  const { membership, peers, watermarks } = replicas(client, informers, config, logger, () => servingCertificatePem, () => hostClaims);
  health.addReadiness({ name: 'replica-membership', check: () => (watermarks.isRegistered() ? undefined : 'not yet known to every peer') });
  const hostClaims = hostClaimStore(client, informers, new ContinueTokens(tokenKey.key), config, logger, metrics, watermarks);
  health.addReadiness({ name: 'hostclaim-storage', check: () => (hostClaims.hasSynced() ? undefined : 'not synced') });
  const backend = backendProbe(client, hostClaims, informers, logger);
  health.addReadiness({ name: 'kube-apiserver', check: () => backend.failure() });
  void startStorage(client, schemaSource, hostClaims, logger);
  const hardwareData = hardwareDataStore(client, informers, hostClaims, new HardwareDataTokens(tokenKey.key), schemaSource, logger, metrics);
  hardwareData.feed.start();
  // Its first lists, not baremetal-operator's CRDs: without them HardwareData syncs empty. Until then its reads are 429s.
  health.addReadiness({ name: 'hardwaredata-storage', check: () => (hardwareData.feed.hub.hasSynced() ? undefined : 'not synced') });

  const binder = config.controllers.has('binder') ? startBinder(client, informers, config, logger, metrics, watermarks) : undefined;

  let shuttingDown = false;
  health.addReadiness({ name: 'shutdown', check: () => (shuttingDown ? 'shutting down' : undefined) });

  // One authorizer (and its cache) for the request pipeline and the resources' admission checks;
  // a denial counts only while kube-apiserver is ready (its RBAC may not be loaded yet after a restart).
  const authorizer = Authorizer.delegating(client, () => backend.failure() === undefined);
  // Who may read which namespaces (RBAC from informers): namespaced lists and watches, and those of all namespaces.
  const readAccess = new NamespaceAccessCache(informers, (user, attributes) => authorizer.authorize(user, attributes));
  health.addReadiness({ name: 'rbac-cache', check: () => (readAccess.hasSynced() ? undefined : 'not synced') });
  const servedResources = [hostClaimResource, hardwareDataResource].map((r) => ({ group: tenancyV1alpha1.group, resource: r.plural }));
  const app = buildHandlerChain({
    logger,
    metrics,
    authenticator: new Authenticator(() => authConfig.current(), new TokenReviewAuthenticator(client)),
    authorizer: new ScopedReadAuthorizer(authorizer, readAccess, servedResources),
    inFlightLimits: { readOnly: config.maxRequestsInflight, mutating: config.maxMutatingRequestsInflight },
    requestTimeoutMs: config.requestTimeoutMs,
    handlers: [
      health.router(),
      versionRouter(),
      metricsRouter(metrics),
      replicaPeersRouter(watermarks),
      discoveryRouter(tenancyV1alpha1),
      openAPIRouter(tenancyV1alpha1, schemaSource),
      restRouter(tenancyV1alpha1, [
        { access: 'read-write', strategy: hostClaimStrategy(authorizer), store: hostClaims },
        { access: 'read-only', strategy: hardwareDataStrategy(authorizer), store: hardwareData.store },
      ], readAccess),
    ],
  });
  const server = new HttpsServer(app, tls);
  const address = await server.listen(config.securePort, config.bindAddress);
  logger.info({ address: address.address, port: address.port }, 'serving securely');
  // Once this process holds the port: a Lease naming its URL is a predecessor's.
  membership.start();
  watermarks.start();

  const stop = async (signal: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    // Watches end first so clients reconnect elsewhere; then in-flight requests drain.
    hostClaims.hub.stop();
    hardwareData.feed.hub.stop();
    await binder?.stop();
    await server.shutdown(config.shutdownTimeoutSeconds * 1000);
    // After the last write was answered: peers stop asking and fence once.
    watermarks.stop();
    await membership.stop();
    peers.close();
    hardwareData.feed.stop();
    hostClaims.stop();
    readAccess.stop();
    backend.stop();
    informers.stop();
    authConfig.stop();
    certificate.reloader?.stop();
    client.close();
    logger.info('stopped');
    logger.flush();
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** The shared informers; each resource's failures are logged at most once a minute, its absence once. */
function sharedInformers(client: KubeClient, logger: Logger): SharedInformerFactory {
  const warn = warningsOnceAMinute(logger);
  return new SharedInformerFactory(client, {
    onError: (resource, error) => {
      warn(`informer: list or watch of ${resource.path} failed; retrying`, error);
    },
    onNotServed: (resource) => {
      logger.info(
        `informer: ${resource.path} is not served (baremetal-operator's CRDs are not installed); it reads as empty, claims stay unbound and HardwareData empty until it is`,
      );
    },
  });
}

/** Readiness follows kube-apiserver's ability to serve consistent reads; when it answers again, informers stop backing off. */
function backendProbe(client: KubeClient, hostClaims: RecordStore, informers: SharedInformerFactory, logger: Logger): BackendProbe {
  const probe = new BackendProbe(client, hostClaims.resource.path, {
    onFailing: (error) => {
      logger.warn({ err: error }, 'kube-apiserver cannot serve consistent reads: not ready');
    },
    onRecovered: () => {
      logger.info('kube-apiserver answers again: ready; informers retry now');
      informers.retryNow();
    },
  });
  probe.start();
  return probe;
}

function hostClaimStore(client: KubeClient, informers: SharedInformerFactory, tokens: ContinueTokens, config: ServerConfig, logger: Logger, metrics: ApiServerMetrics, replicas: ReplicaConsistency): RecordStore {
  const gr = { group: tenancyV1alpha1.group, resource: hostClaimResource.plural };
  return new RecordStore(client, informers, hostClaimStorageMapping(config.storageNamespace), hostClaimRecord.plural, gr, watchHub(gr, logger), tokens, metal3Resources.namespaces, metrics.consistentReads.forResource, replicas);
}

/**
 * Which replicas serve (one Lease each), and the write watermarks that let
 * the records' consistent reads skip kube-apiserver (backing/replica-watermarks.ts).
 */
function replicas(client: KubeClient, informers: SharedInformerFactory, config: ServerConfig, logger: Logger, servingCertificatePem: () => string, records: () => RecordStore) {
  const warn = warningsOnceAMinute(logger);
  const membership = new ReplicaMembership(client, informers, {
    namespace: config.storageNamespace,
    url: peerUrl(config),
    onError: (error) => {
      warn('replica membership Lease: failed', error);
    },
  });
  const peers = new PeerClient(servingCertificatePem, () => client.credentials());
  const watermarks = new ReplicaWatermarks(membership, () => records().newestRecordRevision(), peers.ask, () => records().currentRevision(), {
    onPeerError: (peer, error) => {
      warn(`asking peer ${peer.identity} at ${peer.url ?? '(no address)'} for its watermark failed (consistent reads probe kube-apiserver meanwhile)`, error);
    },
    onError: (error) => {
      warn("reading kube-apiserver's current revision of the records failed", error);
    },
    storageReady: () => records().hasSynced(),
  });
  return { membership, peers, watermarks };
}

/** Where peers reach this replica: its advertised address on the secure port. */
function peerUrl(config: ServerConfig): string | undefined {
  const address = config.advertiseAddress;
  if (address === undefined) return undefined;
  return `https://${address.includes(':') ? `[${address}]` : address}:${config.securePort}`;
}

/** Warnings logged at most once a minute per message (a failure that repeats on every retry). */
function warningsOnceAMinute(logger: Logger): (message: string, error: unknown) => void {
  const lastLogged = new Map<string, number>();
  return (message, error) => {
    const now = Date.now();
    if (now - (lastLogged.get(message) ?? -Infinity) < 60_000) return;
    lastLogged.set(message, now);
    logger.warn({ err: error }, message);
  };
}

/** The continue-token key every replica shares, loaded (or created) in the background, retrying until it is. */
function continueTokenKey(client: KubeClient, config: ServerConfig, logger: Logger): { readonly key: Promise<Uint8Array>; loaded(): boolean } {
  let loaded = false;
  const key = (async () => {
    for (let delayMs = 1000; ; delayMs = Math.min(delayMs * 2, 30_000)) {
      try {
        const value = await loadContinueTokenKey(client, config.storageNamespace);
        loaded = true;
        return value;
      } catch (error) {
        logger.error({ err: error }, 'cannot load the continue-token key; retrying');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  })();
  return { key, loaded: () => loaded };
}

/**
 * Every replica serves the API; only the one holding the Lease binds. A
 * replica shutting down releases the Lease so another takes over at once.
 */
function startBinder(client: KubeClient, informers: SharedInformerFactory, config: ServerConfig, logger: Logger, metrics: ApiServerMetrics, acknowledgement: WriteAcknowledgement): LeaderElector {
  const identity = `${hostname()}_${randomUUID()}`;
  const lease = 'hostclaim-binder';
  const binder = new Binder(client, informers, { storageNamespace: config.storageNamespace, queueObserver: metrics.controllers.workQueue(lease), acknowledgement }, logger);
  const leadership = metrics.controllers.leaderElection(lease);
  binder.warmCaches();
  const elector = new LeaderElector(
    client,
    { namespace: config.storageNamespace, name: lease, identity },
    {
      onStartedLeading: (signal) => {
        logger.info({ identity }, 'binder: became leader');
        leadership.leading(true);
        signal.addEventListener(
          'abort',
          () => {
            leadership.leading(false);
          },
          { once: true },
        );
        binder.run(signal).catch((error: unknown) => {
          logger.error({ err: error }, 'binder: stopped with an error');
        });
      },
      onError: (error) => {
        logger.warn({ err: error }, 'leader election: cannot reach the Lease; retrying');
      },
    },
  );
  elector.start();
  return elector;
}

function watchHub(resource: GroupResource, logger: Logger): WatchHub {
  return new WatchHub({
    resource,
    onSinkError: (error) => {
      logger.warn({ err: error }, 'watch stream failed');
    },
  });
}

/** HardwareData, projected from BareMetalHosts. */
function hardwareDataStore(client: KubeClient, informers: SharedInformerFactory, hostClaims: RecordStore, tokens: HardwareDataTokens, source: SchemaSource, logger: Logger, metrics: ApiServerMetrics) {
  const gr = { group: tenancyV1alpha1.group, resource: hardwareDataResource.plural };
  const specSchema = source.resolvedObjectSchema('HardwareDataSpec');
  const model = new HardwareDataModel(specSchema);
  const hub = new WatchHub({
    resource: gr,
    derivedState: model,
    onSinkError: (error) => {
      logger.warn({ err: error }, 'watch stream failed');
    },
  });
  const feed = new HardwareDataFeed(client, informers, hub, model, hostClaims, metrics.consistentReads.forResource);
  return { feed, store: new HardwareDataStore(feed, gr, tokens) };
}

/** Installs the backing CRD (retrying until kube-apiserver lets us), then starts the shared watch. */
async function startStorage(client: KubeClient, source: SchemaSource, store: RecordStore, logger: Logger): Promise<void> {
  for (let delayMs = 1000; ; delayMs = Math.min(delayMs * 2, 30_000)) {
    try {
      await ensureCustomResourceDefinition(client, hostClaimRecordCRD(source), logger);
      break;
    } catch (error) {
      logger.error({ err: error }, 'cannot install the HostClaimRecord CRD; retrying');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  store.start();
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
