// The full development/test environment: a control plane, hostclaim-apiserver
// running as a child process on 127.0.0.1 (as its own ServiceAccount),
// registered with the aggregator, and two tenants with their kubeconfigs.
//
// Layout of workDir:
//   admin.kubeconfig tenant-a.kubeconfig tenant-b.kubeconfig   for people and tests
//   hostclaim-apiserver.kubeconfig                              the server's own identity (SA token)
//   serving/{tls.crt,tls.key,ca.crt}                             the server's certificate and its CA
//   controlplane/                                                etcd data, control-plane PKI
//   logs/<component>.log
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';
import { installBareMetalOperatorCrds, resolveBareMetalOperator, startBareMetalOperator, type BareMetalOperator } from './baremetal-operator.js';
import { startControlPlane, type ControlPlane } from './controlplane.js';
import { isHealthy, servedCertificateFingerprint } from './http.js';
import { freeLoopbackPort } from './network.js';
import { removeOwnedEntries, writeFileAtomically } from './files.js';
import { repoPath } from './paths.js';
import { startProcess, type ManagedProcess } from './processes.js';
import {
  DEFAULT_SERVICE_NAME,
  DEFAULT_SERVICE_NAMESPACE,
  installDevOverlay,
  registerAggregatedServer,
  waitForAPIServiceAvailable,
} from './register.js';
import { pollUntil } from './wait.js';

export interface DevEnvironmentOptions {
  workDir: string;
  /** The server's JavaScript entry point, e.g. dist/src/main.js (relative paths: from the repo root). */
  serverEntry: string;
  log?: (line: string) => void;
  /** Keep <workDir>/logs after stop() (everything else is removed). */
  keepLogs?: boolean;
  /** See ControlPlaneOptions.binDir. */
  binDir?: string;
  /** Also run metal3's baremetal-operator with its fixture provisioner (see baremetal-operator.ts). */
  bareMetalOperator?: boolean;
  /**
   * Install baremetal-operator's CRDs before the server starts, without
   * running it (implied by `bareMetalOperator`): BareMetalHosts are then
   * created directly, with a status written through the status subresource.
   */
  bareMetalOperatorCrds?: boolean;
  /**
   * The server's `--controllers` (default `*`). API conformance tests run
   * `*,-binder`: they compare exact resourceVersions with kube-apiserver's,
   * and the binder writes claim status concurrently.
   */
  controllers?: string;
  /** See ControlPlaneOptions.audit. */
  audit?: boolean;
  /** See ControlPlaneOptions.garbageCollector. */
  garbageCollector?: boolean;
}

export interface StopServerOptions {
  /**
   * SIGKILL the server's process group instead of SIGTERM (a crash or an
   * OOM kill: no graceful shutdown, connections are cut mid-stream).
   */
  kill?: boolean;
}

export interface ReplicaOptions {
  /** The kubeconfig the replica talks to kube-apiserver with (default the server's). */
  readonly kubeconfigPath?: string;
}

export const TENANTS = ['tenant-a', 'tenant-b'] as const;
export type Tenant = (typeof TENANTS)[number];

export interface DevEnvironment {
  readonly controlPlane: ControlPlane;
  /** Running when started with `bareMetalOperator: true`. */
  readonly bareMetalOperator: BareMetalOperator | undefined;
  readonly workDir: string;
  readonly logDir: string;
  readonly serverPort: number;
  /** https://127.0.0.1:<serverPort>, for direct (non-aggregated) requests. */
  readonly serverUrl: string;
  readonly serverLogPath: string;
  /** The running server process, or undefined while stopped. */
  readonly serverProcess: ManagedProcess | undefined;
  readonly serverKubeconfigPath: string;
  readonly adminKubeconfigPath: string;
  readonly tenantKubeconfigPaths: Readonly<Record<Tenant, string>>;
  readonly servingCertPath: string;
  readonly servingKeyPath: string;
  readonly aggregatedServerCaPath: string;
  /** PEM of the CA that signed the current serving certificate (changes on rotation). */
  readonly aggregatedServerCaPem: string;
  /** Stops the server (if running) and starts it again on the same port and files. */
  restartServer(options?: StopServerOptions): Promise<void>;
  stopServer(options?: StopServerOptions): Promise<void>;
  /**
   * Replaces the serving certificate with one from a new CA without an
   * availability gap: trusts old+new CA, swaps the files, waits until the
   * server presents the new certificate, then trusts only the new CA.
   */
  rotateServingCertificate(): Promise<void>;
  /**
   * Starts one more server process (same identity and files, its own port,
   * not behind the aggregator): a replica that serves and competes for the
   * binder's leader Lease. Stopped with the environment.
   */
  startReplica(options?: ReplicaOptions): Promise<ManagedProcess>;
  /** https://127.0.0.1:<port> of each replica startReplica() started, in order. */
  readonly replicaUrls: readonly string[];
  stop(): Promise<void>;
}

export const SERVICE_DNS_NAME = `${DEFAULT_SERVICE_NAME}.${DEFAULT_SERVICE_NAMESPACE}.svc`;
const SERVER_TOKEN_SECONDS = 24 * 60 * 60;
const SERVER_READY_TIMEOUT_MS = 60_000;
const API_SERVICE_AVAILABLE_TIMEOUT_MS = 60_000;
const CERTIFICATE_RELOAD_TIMEOUT_MS = 30_000;

/** What the environment writes into workDir besides logs/ (and removes again); workDir may be user-chosen. */
const WORK_DIR_ENTRIES = [
  'admin.kubeconfig',
  ...TENANTS.map((tenant) => `${tenant}.kubeconfig`),
  'hostclaim-apiserver.kubeconfig',
  'serving',
  'controlplane',
];

export async function startDevEnvironment(options: DevEnvironmentOptions): Promise<DevEnvironment> {
  const log = options.log ?? (() => undefined);
  const logDir = path.join(options.workDir, 'logs');
  await removeOwnedEntries(options.workDir, WORK_DIR_ENTRIES);
  await fs.mkdir(logDir, { recursive: true });
  const controlPlane = await startControlPlane({
    workDir: path.join(options.workDir, 'controlplane'),
    logDir,
    binDir: options.binDir,
    log,
    ...(options.audit === undefined ? {} : { audit: options.audit }),
    ...(options.garbageCollector === undefined ? {} : { garbageCollector: options.garbageCollector }),
  });
  let environment: LocalDevEnvironment | undefined;
  try {
    environment = new LocalDevEnvironment(controlPlane, options, await freeLoopbackPort());
    await environment.start();
    return environment;
  } catch (error) {
    await (environment?.stop() ?? controlPlane.stop());
    throw error;
  }
}

class LocalDevEnvironment implements DevEnvironment {
  readonly workDir: string;
  readonly logDir: string;
  readonly serverUrl: string;
  readonly serverLogPath: string;
  readonly serverKubeconfigPath: string;
  readonly adminKubeconfigPath: string;
  readonly tenantKubeconfigPaths: Readonly<Record<Tenant, string>>;
  readonly servingCertPath: string;
  readonly servingKeyPath: string;
  readonly aggregatedServerCaPath: string;
  readonly #serverEntry: string;
  readonly #keepLogs: boolean;
  readonly #withBareMetalOperator: boolean;
  readonly #withBareMetalOperatorCrds: boolean;
  readonly #controllers: string;
  #bareMetalOperator: BareMetalOperator | undefined;
  readonly #log: (line: string) => void;
  #aggregatedServerCaPem = '';
  #server: ManagedProcess | undefined;
  #serverStarts = 0;
  #stopping: Promise<void> | undefined;
  readonly #replicas: ManagedProcess[] = [];
  readonly #replicaUrls: string[] = [];

  constructor(
    readonly controlPlane: ControlPlane,
    options: DevEnvironmentOptions,
    readonly serverPort: number,
  ) {
    const file = (...segments: string[]): string => path.join(options.workDir, ...segments);
    this.workDir = options.workDir;
    this.logDir = file('logs');
    this.serverUrl = `https://127.0.0.1:${serverPort}`;
    this.serverLogPath = file('logs', 'hostclaim-apiserver.log');
    this.serverKubeconfigPath = file('hostclaim-apiserver.kubeconfig');
    this.adminKubeconfigPath = file('admin.kubeconfig');
    this.tenantKubeconfigPaths = { 'tenant-a': file('tenant-a.kubeconfig'), 'tenant-b': file('tenant-b.kubeconfig') };
    this.servingCertPath = file('serving', 'tls.crt');
    this.servingKeyPath = file('serving', 'tls.key');
    this.aggregatedServerCaPath = file('serving', 'ca.crt');
    this.#serverEntry = path.resolve(repoPath(), options.serverEntry);
    this.#keepLogs = options.keepLogs ?? false;
    this.#withBareMetalOperator = options.bareMetalOperator ?? false;
    this.#withBareMetalOperatorCrds = options.bareMetalOperatorCrds ?? false;
    this.#controllers = options.controllers ?? '*';
    this.#log = options.log ?? (() => undefined);
  }

  get serverProcess(): ManagedProcess | undefined {
    return this.#server?.running ? this.#server : undefined;
  }

  get bareMetalOperator(): BareMetalOperator | undefined {
    return this.#bareMetalOperator;
  }

  get aggregatedServerCaPem(): string {
    return this.#aggregatedServerCaPem;
  }

  async start(): Promise<void> {
    const cp = this.controlPlane;
    // deploy/overlays/dev: what an admin's `kubectl apply -k` installs, minus the pods (see there).
    await installDevOverlay(cp);
    // Before the server, so the metal3.io CRDs it reads already exist.
    if (this.#withBareMetalOperator) {
      this.#bareMetalOperator = await startBareMetalOperator({ controlPlane: cp, logDir: this.logDir, log: this.#log });
    } else if (this.#withBareMetalOperatorCrds) {
      await installBareMetalOperatorCrds(cp, (await resolveBareMetalOperator()).crdDir);
    }
    await this.#writeKubeconfigs();
    await fs.mkdir(path.dirname(this.servingCertPath), { recursive: true, mode: 0o700 });
    const serving = await issueServingCertificate();
    await writeFileAtomically(this.servingKeyPath, serving.keyPem);
    await writeFileAtomically(this.servingCertPath, serving.certPem);
    await writeFileAtomically(this.aggregatedServerCaPath, serving.caPem);
    this.#aggregatedServerCaPem = serving.caPem;

    await this.#startServer();
    await registerAggregatedServer(cp, { port: this.serverPort, caBundlePem: serving.caPem });
    await waitForAPIServiceAvailable(cp, API_SERVICE_AVAILABLE_TIMEOUT_MS);
    this.#log(`hostclaim-apiserver registered: APIService v1alpha1.tenancy.metal3.io is Available`);
  }

  async restartServer(options: StopServerOptions = {}): Promise<void> {
    await this.stopServer(options);
    await this.#startServer();
    await waitForAPIServiceAvailable(this.controlPlane, API_SERVICE_AVAILABLE_TIMEOUT_MS);
  }

  async stopServer(options: StopServerOptions = {}): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    if (options.kill !== true || !server.running) {
      await server.stop();
      return;
    }
    try {
      // The server runs in its own process group (see processes.ts).
      process.kill(-server.pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
    await server.exited;
  }

  async rotateServingCertificate(): Promise<void> {
    const next = await issueServingCertificate();
    const register = (caBundlePem: string): Promise<void> =>
      registerAggregatedServer(this.controlPlane, { port: this.serverPort, caBundlePem });

    await register(this.#aggregatedServerCaPem + next.caPem);
    // Key before certificate: a reloader that watches only the certificate
    // then always finds the matching key. One that reloads on either file
    // briefly sees new key + old certificate and must keep its current pair.
    await writeFileAtomically(this.servingKeyPath, next.keyPem);
    await writeFileAtomically(this.servingCertPath, next.certPem);
    await writeFileAtomically(this.aggregatedServerCaPath, next.caPem);
    const expected = new X509Certificate(next.certPem).fingerprint256;
    await pollUntil(
      'hostclaim-apiserver to serve the rotated certificate',
      async () => ((await this.#servedFingerprint()) === expected ? true : undefined),
      { timeoutMs: CERTIFICATE_RELOAD_TIMEOUT_MS, describeFailure: () => this.#server?.logTail() ?? '' },
    );
    await register(next.caPem);
    this.#aggregatedServerCaPem = next.caPem;
    this.#log('serving certificate rotated to a new CA');
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stopAll();
    return this.#stopping;
  }

  get replicaUrls(): readonly string[] {
    return this.#replicaUrls;
  }

  async startReplica(options: ReplicaOptions = {}): Promise<ManagedProcess> {
    const port = await freeLoopbackPort();
    const index = this.#replicas.length + 1;
    const replica = await startProcess({
      name: `hostclaim-apiserver-replica-${index}`,
      command: process.execPath,
      args: this.#serverArgs(port, options.kubeconfigPath),
      logFile: path.join(this.logDir, `hostclaim-apiserver-replica-${index}.log`),
    });
    this.#replicas.push(replica);
    const url = `https://127.0.0.1:${port}`;
    this.#replicaUrls.push(url);
    await pollUntil(
      `replica ${index} /readyz`,
      async () => {
        replica.assertRunning();
        return (await isHealthy(`${url}/readyz`, { caPem: this.#aggregatedServerCaPem, serverName: SERVICE_DNS_NAME })) ? true : undefined;
      },
      { timeoutMs: SERVER_READY_TIMEOUT_MS, describeFailure: () => replica.logTail() },
    );
    return replica;
  }

  async #stopAll(): Promise<void> {
    await Promise.all(this.#replicas.map((replica) => replica.stop()));
    await this.stopServer();
    await this.#bareMetalOperator?.stop();
    await this.controlPlane.stop();
    await removeOwnedEntries(this.workDir, this.#keepLogs ? WORK_DIR_ENTRIES : [...WORK_DIR_ENTRIES, 'logs']);
  }

  async #writeKubeconfigs(): Promise<void> {
    const cp = this.controlPlane;
    await fs.copyFile(cp.adminKubeconfigPath, this.adminKubeconfigPath);
    for (const tenant of TENANTS) {
      await cp.userKubeconfig(tenant, [], this.tenantKubeconfigPaths[tenant], { namespace: tenant });
    }
    await cp.serviceAccountKubeconfig(
      DEFAULT_SERVICE_NAMESPACE,
      DEFAULT_SERVICE_NAME,
      this.serverKubeconfigPath,
      SERVER_TOKEN_SECONDS,
    );
  }

  async #startServer(): Promise<void> {
    const startedAt = Date.now();
    const server = await startProcess({
      name: 'hostclaim-apiserver',
      // The harness runs on the project's Node 24; so does the server.
      command: process.execPath,
      args: this.#serverArgs(this.serverPort),
      logFile: this.serverLogPath,
      // Keep the output of earlier runs across restarts.
      appendToLog: this.#serverStarts > 0,
    });
    this.#serverStarts += 1;
    this.#server = server;
    await pollUntil(
      'hostclaim-apiserver /readyz',
      async () => {
        server.assertRunning();
        const ready = await isHealthy(`${this.serverUrl}/readyz`, {
          caPem: this.#aggregatedServerCaPem,
          serverName: SERVICE_DNS_NAME,
        });
        return ready ? true : undefined;
      },
      { timeoutMs: SERVER_READY_TIMEOUT_MS, describeFailure: () => server.logTail() },
    );
    this.#log(`hostclaim-apiserver ready on ${this.serverUrl} (pid ${server.pid}, ${Date.now() - startedAt} ms)`);
  }

  #serverArgs(port: number, kubeconfigPath = this.serverKubeconfigPath): string[] {
    return [
      // As the image's entry point (Dockerfile): a young generation of 2 × 16 MB, not V8's 2 × 64 MB, and an old
      // generation sized as in a 1 GiB container whatever this machine has (docs/operations.md, "Memory").
      '--max-semi-space-size=16',
      '--max-old-space-size=512',
      this.#serverEntry,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      `--tls-cert-file=${this.servingCertPath}`,
      `--tls-private-key-file=${this.servingKeyPath}`,
      `--kubeconfig=${kubeconfigPath}`,
      `--controllers=${this.#controllers}`,
    ];
  }

  #servedFingerprint(): Promise<string | undefined> {
    return servedCertificateFingerprint('127.0.0.1', this.serverPort, SERVICE_DNS_NAME).catch(() => undefined);
  }
}

interface ServingCertificate {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A fresh CA per certificate, so rotation also exercises caBundle changes. */
async function issueServingCertificate(): Promise<ServingCertificate> {
  const ca = await createCertificateAuthority(`hostclaim-apiserver-ca@${new Date().toISOString()}`);
  const { certPem, keyPem } = await issueCertificate(ca, {
    commonName: DEFAULT_SERVICE_NAME,
    // The aggregator verifies <service>.<namespace>.svc; people and tests dial 127.0.0.1/localhost.
    dnsNames: [SERVICE_DNS_NAME, 'localhost'],
    ipAddresses: ['127.0.0.1'],
    usage: 'server',
  });
  return { caPem: ca.certPem, certPem, keyPem };
}
