// A real, throwaway Kubernetes control plane on 127.0.0.1: etcd,
// kube-apiserver (with the aggregation layer configured) and
// kube-controller-manager (namespace deletion, garbage collection, default
// ServiceAccounts, root CA publishing, ClusterRole aggregation), all built from
// Go modules by build/build.sh. No nodes, no kube-proxy, no container runtime.
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { issueCertificate } from '../../src/pki/certificates.js';
import { auditDir, auditFlags, auditLogFile, collectAuditedRequests } from './audit.js';
import { resolveControlPlaneBinaries, type ControlPlaneBinaries } from './binaries.js';
import { removeOwnedEntries, removeOwnedEntriesSync } from './files.js';
import { httpsRequest, isHealthy, type HttpResponse } from './http.js';
import { writeKubeconfig } from './kubeconfig.js';
import { freeLoopbackPorts } from './network.js';
import { FRONT_PROXY_CLIENT_NAME, createControlPlanePki, type CaFile, type ControlPlanePki } from './pki.js';
import { onProcessExit, startProcess, type ManagedProcess, type ProcessSpec } from './processes.js';
import { pollUntil } from './wait.js';

export interface ControlPlaneOptions {
  /** Directory for etcd data, PKI and kubeconfigs; a fresh temp dir by default. Its previous content is wiped at start. */
  workDir?: string;
  /** Keep workDir after stop() (for post-mortems). */
  keepData?: boolean;
  /** Where <name>.log files go; defaults to <workDir>/logs (then removed with workDir). */
  logDir?: string;
  /** Directory with the binaries; defaults to $HOSTCLAIM_CONTROLPLANE_BIN, else build.sh. */
  binDir?: string;
  log?: (line: string) => void;
  /**
   * Audit hostclaim-apiserver's ServiceAccount for rbac-usage.test.ts (default:
   * when the run has an audit directory). Off for tests that restart
   * kube-apiserver: until its RBAC has loaded it refuses everyone, which is
   * no missing permission.
   */
  audit?: boolean;
  /**
   * Run kube-controller-manager's garbage collector (default true). The fuzz
   * environment turns it off: it removes foregroundDeletion/orphan finalizers
   * on each side at its own time, a writer the fuzzer cannot order with its
   * cases; the fuzz workers finish such deletions themselves.
   */
  garbageCollector?: boolean;
}

export interface KubectlOptions {
  /** Defaults to the admin kubeconfig. */
  kubeconfig?: string;
  stdin?: string;
  env?: Record<string, string>;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ControlPlane {
  /** https URL of kube-apiserver. */
  readonly server: string;
  /** http URL of etcd's client API (for tests that must compact, as kube-apiserver does every 5 minutes). */
  readonly etcdUrl: string;
  readonly workDir: string;
  readonly logDir: string;
  readonly pkiDir: string;
  /** Client certificate of CN=admin, O=system:masters. */
  readonly adminKubeconfigPath: string;
  readonly binaries: ControlPlaneBinaries;
  readonly clientCa: CaFile;
  readonly frontProxyCa: CaFile;
  readonly servingCa: CaFile;
  /** etcd, kube-apiserver, kube-controller-manager. */
  readonly processes: readonly ManagedProcess[];
  /** A raw request to kube-apiserver as admin; `apiPath` starts with '/'. */
  request(method: string, apiPath: string, body?: unknown): Promise<HttpResponse>;
  /** Like request(), but throws unless the status is 2xx, and parses the JSON body. */
  requestJson<T>(method: string, apiPath: string, body?: unknown): Promise<T>;
  /** Writes a kubeconfig with a client certificate CN=user, O=groups; returns `file`. */
  userKubeconfig(user: string, groups: readonly string[], file: string, options?: { namespace?: string }): Promise<string>;
  /** Creates the ServiceAccount if missing and writes a kubeconfig with a TokenRequest token; returns `file`. */
  serviceAccountKubeconfig(namespace: string, name: string, file: string, durationSeconds: number): Promise<string>;
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<KubectlResult>;
  /** Server-side apply of (multi-document) YAML as admin; throws with kubectl's stderr on failure. */
  apply(yamlText: string): Promise<void>;
  applyFile(file: string): Promise<void>;
  /**
   * Dependency faults for tests: stops one component (SIGTERM, SIGKILL
   * after 15 s), keeping its data, flags and port.
   */
  stopComponent(name: ComponentName): Promise<void>;
  /** Starts a stopped component again (same data, flags and port, log appended); resolves once it is ready. */
  startComponent(name: ComponentName): Promise<void>;
  /** SIGSTOP: the component keeps its connections open and answers nothing until resumeComponent(). */
  pauseComponent(name: ComponentName): void;
  resumeComponent(name: ComponentName): void;
  /** Stops KCM and kube-apiserver, then etcd; removes workDir unless keepData. Idempotent. */
  stop(): Promise<void>;
}

const ETCD_READY_TIMEOUT_MS = 30_000;
const APISERVER_READY_TIMEOUT_MS = 120_000;
const CONTROLLER_MANAGER_READY_TIMEOUT_MS = 60_000;
const KUBECTL_TIMEOUT_MS = 120_000;
const FIELD_MANAGER = 'hostclaim-harness';
const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
/** What the control plane writes into workDir (and removes again); workDir may be user-chosen. */
const WORK_DIR_ENTRIES = ['etcd', 'pki', 'admin.kubeconfig', 'kube-controller-manager.kubeconfig', 'kubectl-cache'];
/** Controllers a test cluster without nodes needs; names as accepted by v1.36 `--controllers`. */
const GARBAGE_COLLECTOR = 'garbage-collector-controller';
const CONTROLLERS = [
  'namespace-controller',
  GARBAGE_COLLECTOR,
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
] as const;

export type ComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';

interface ComponentSpec extends ProcessSpec {
  name: ComponentName;
}

interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const startedAt = Date.now();
  const binaries = await resolveControlPlaneBinaries(options.binDir);
  const workDir = options.workDir ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'hostclaim-controlplane-')));
  const logDir = options.logDir ?? path.join(workDir, 'logs');
  const ownedEntries = [...WORK_DIR_ENTRIES, ...(options.logDir === undefined ? ['logs'] : [])];
  // Every start is a fresh cluster: stale etcd data would not match the new PKI.
  await removeOwnedEntries(workDir, ownedEntries);
  await fsp.mkdir(workDir, { recursive: true, mode: 0o700 });
  await fsp.mkdir(logDir, { recursive: true });
  const pki = await createControlPlanePki(path.join(workDir, 'pki'));

  const controlPlane = new LocalControlPlane({ binaries, workDir, logDir, ownedEntries, ports: await allocatePorts(), pki, options });
  try {
    await controlPlane.start();
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
  controlPlane.log(`control plane ready at ${controlPlane.server} in ${((Date.now() - startedAt) / 1000).toFixed(1)}s`);
  return controlPlane;
}

async function allocatePorts(): Promise<Ports> {
  const [etcdClient, etcdPeer, apiserver, controllerManager] = await freeLoopbackPorts(4);
  return { etcdClient: etcdClient!, etcdPeer: etcdPeer!, apiserver: apiserver!, controllerManager: controllerManager! };
}

interface LocalControlPlaneInit {
  binaries: ControlPlaneBinaries;
  workDir: string;
  logDir: string;
  ownedEntries: readonly string[];
  ports: Ports;
  pki: ControlPlanePki;
  options: ControlPlaneOptions;
}

class LocalControlPlane implements ControlPlane {
  readonly server: string;
  readonly etcdUrl: string;
  readonly workDir: string;
  readonly logDir: string;
  readonly pkiDir: string;
  readonly adminKubeconfigPath: string;
  readonly binaries: ControlPlaneBinaries;
  readonly clientCa: CaFile;
  readonly frontProxyCa: CaFile;
  readonly servingCa: CaFile;
  readonly log: (line: string) => void;
  readonly #ports: Ports;
  readonly #pki: ControlPlanePki;
  readonly #keepData: boolean;
  readonly #audit: boolean;
  readonly #controllers: readonly string[];
  readonly #ownedEntries: readonly string[];
  readonly #disposeWorkDirCleanup: (() => void) | undefined;
  readonly #processes = new Map<ComponentName, ManagedProcess>();
  #stopping: Promise<void> | undefined;

  constructor(init: LocalControlPlaneInit) {
    this.server = `https://127.0.0.1:${init.ports.apiserver}`;
    this.etcdUrl = `http://127.0.0.1:${init.ports.etcdClient}`;
    this.workDir = init.workDir;
    this.logDir = init.logDir;
    this.pkiDir = init.pki.dir;
    this.adminKubeconfigPath = path.join(init.workDir, 'admin.kubeconfig');
    this.binaries = init.binaries;
    this.clientCa = pickCaFile(init.pki.clientCa);
    this.frontProxyCa = pickCaFile(init.pki.frontProxyCa);
    this.servingCa = pickCaFile(init.pki.servingCa);
    this.log = init.options.log ?? (() => undefined);
    this.#ports = init.ports;
    this.#pki = init.pki;
    this.#keepData = init.options.keepData ?? false;
    this.#audit = init.options.audit ?? true;
    this.#controllers = init.options.garbageCollector === false ? CONTROLLERS.filter((name) => name !== GARBAGE_COLLECTOR) : CONTROLLERS;
    this.#ownedEntries = init.ownedEntries;
    this.#disposeWorkDirCleanup = this.#keepData
      ? undefined
      : onProcessExit(() => {
          removeOwnedEntriesSync(init.workDir, init.ownedEntries);
        });
  }

  get processes(): readonly ManagedProcess[] {
    return [...this.#processes.values()];
  }

  async start(): Promise<void> {
    await this.#startComponent('etcd');
    await this.#startComponent('kube-apiserver');
    await writeKubeconfig(this.adminKubeconfigPath, {
      server: this.server,
      caPem: this.servingCa.certPem,
      userName: 'admin',
      credentials: this.#pki.admin,
    });
    await writeKubeconfig(this.#controllerManagerKubeconfig(), {
      server: this.server,
      caPem: this.servingCa.certPem,
      userName: 'system:kube-controller-manager',
      credentials: this.#pki.controllerManager,
    });
    await this.#startComponent('kube-controller-manager');
  }

  async stopComponent(name: ComponentName): Promise<void> {
    await this.#processes.get(name)?.stop();
    this.log(`${name} stopped`);
  }

  async startComponent(name: ComponentName): Promise<void> {
    if (this.#processes.get(name)?.running === true) throw new Error(`${name} is running`);
    await this.#startComponent(name, { appendToLog: true });
  }

  pauseComponent(name: ComponentName): void {
    this.#runningComponent(name).pause();
    this.log(`${name} paused (SIGSTOP)`);
  }

  resumeComponent(name: ComponentName): void {
    this.#runningComponent(name).resume();
    this.log(`${name} resumed (SIGCONT)`);
  }

  #runningComponent(name: ComponentName): ManagedProcess {
    const child = this.#processes.get(name);
    if (child?.running !== true) throw new Error(`${name} is not running`);
    return child;
  }

  /** Starts one component with its flags and waits until its health endpoint answers. */
  async #startComponent(name: ComponentName, options: { appendToLog?: boolean } = {}): Promise<void> {
    const appendToLog = options.appendToLog ?? false;
    switch (name) {
      case 'etcd':
        await this.#startAndWait({ ...this.#etcdSpec(), appendToLog }, ETCD_READY_TIMEOUT_MS, () =>
          isPlainHttpHealthy(`http://127.0.0.1:${this.#ports.etcdClient}/health`),
        );
        return;
      case 'kube-apiserver': {
        const audit = this.#audited() ? await auditFlags(this.#auditLogFile()) : [];
        await this.#startAndWait({ ...this.#apiserverSpec(audit), appendToLog }, APISERVER_READY_TIMEOUT_MS, () =>
          isHealthy(`${this.server}/readyz`, this.#adminIdentity()),
        );
        return;
      }
      case 'kube-controller-manager':
        // KCM serves a self-signed certificate; this probe checks liveness, not identity.
        await this.#startAndWait(
          { ...this.#controllerManagerSpec(this.#controllerManagerKubeconfig()), appendToLog },
          CONTROLLER_MANAGER_READY_TIMEOUT_MS,
          () => isHealthy(`https://127.0.0.1:${this.#ports.controllerManager}/healthz`),
        );
        return;
    }
  }

  #controllerManagerKubeconfig(): string {
    return path.join(this.workDir, 'kube-controller-manager.kubeconfig');
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stopAll();
    return this.#stopping;
  }

  async request(method: string, apiPath: string, body?: unknown): Promise<HttpResponse> {
    return httpsRequest(`${this.server}${apiPath}`, { ...this.#adminIdentity(), method, body });
  }

  async requestJson<T>(method: string, apiPath: string, body?: unknown): Promise<T> {
    const response = await this.request(method, apiPath, body);
    if (response.status < 200 || response.status > 299) {
      throw new Error(`${method} ${apiPath} failed with ${response.status}: ${response.body}`);
    }
    return JSON.parse(response.body) as T;
  }

  async userKubeconfig(user: string, groups: readonly string[], file: string, options: { namespace?: string } = {}): Promise<string> {
    const credentials = await issueCertificate(this.#pki.clientCa, { commonName: user, organizations: groups, usage: 'client' });
    return writeKubeconfig(file, {
      server: this.server,
      caPem: this.servingCa.certPem,
      userName: user,
      credentials,
      ...options,
    });
  }

  async serviceAccountKubeconfig(namespace: string, name: string, file: string, durationSeconds: number): Promise<string> {
    const serviceAccounts = `/api/v1/namespaces/${namespace}/serviceaccounts`;
    const created = await this.request('POST', serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
    if (created.status !== 201 && created.status !== 409) {
      throw new Error(`cannot create ServiceAccount ${namespace}/${name}: ${created.status} ${created.body}`);
    }
    const tokenRequest = await this.requestJson<{ status?: { token?: string } }>('POST', `${serviceAccounts}/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: durationSeconds },
    });
    const token = tokenRequest.status?.token;
    if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
    return writeKubeconfig(file, {
      server: this.server,
      caPem: this.servingCa.certPem,
      userName: `system:serviceaccount:${namespace}:${name}`,
      credentials: { token },
      namespace,
    });
  }

  kubectl(args: readonly string[], options: KubectlOptions = {}): Promise<KubectlResult> {
    const kubeconfig = options.kubeconfig ?? this.adminKubeconfigPath;
    return new Promise((resolve, reject) => {
      const child = spawn(this.binaries.kubectl, ['--kubeconfig', kubeconfig, ...args], {
        // A private discovery cache: ports (and so cache keys) are reused across clusters.
        env: { ...process.env, KUBECACHEDIR: path.join(this.workDir, 'kubectl-cache'), ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        timeout: KUBECTL_TIMEOUT_MS,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('error', reject);
      child.once('close', (code, signal) => {
        resolve({ code: code ?? 128, stdout, stderr: signal ? `${stderr}\nkubectl killed by ${signal}` : stderr });
      });
      // kubectl may exit before reading stdin (bad arguments); its exit code reports that.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.stdin ?? '');
    });
  }

  async apply(yamlText: string): Promise<void> {
    await this.#kubectlApply(['-f', '-'], yamlText);
  }

  async applyFile(file: string): Promise<void> {
    await this.#kubectlApply(['-f', file]);
  }

  async #kubectlApply(sourceArgs: string[], stdin?: string): Promise<void> {
    const args = ['apply', '--server-side', '--force-conflicts', `--field-manager=${FIELD_MANAGER}`, ...sourceArgs];
    const result = await this.kubectl(args, stdin === undefined ? {} : { stdin });
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`);
  }

  async #startAndWait(spec: ComponentSpec, timeoutMs: number, isReady: () => Promise<boolean>): Promise<void> {
    const startedAt = Date.now();
    const child = await startProcess(spec);
    // Tracked before waiting, so a failed start still stops it.
    this.#processes.set(spec.name, child);
    await pollUntil(
      `${spec.name} to become ready`,
      async () => {
        child.assertRunning();
        return (await isReady()) ? true : undefined;
      },
      { timeoutMs, describeFailure: () => child.logTail() },
    );
    this.log(`${spec.name} ready (pid ${child.pid}, ${Date.now() - startedAt} ms)`);
  }

  async #stopAll(): Promise<void> {
    // Clients of etcd first, so kube-apiserver shuts down cleanly.
    await Promise.all([this.#processes.get('kube-controller-manager')?.stop(), this.#processes.get('kube-apiserver')?.stop()]);
    await this.#processes.get('etcd')?.stop();
    const audited = auditDir();
    if (audited !== undefined && this.#audited()) await collectAuditedRequests(this.#auditLogFile(), audited, `${path.basename(this.workDir)}-${this.#ports.apiserver}-${Date.now()}`);
    if (!this.#keepData) {
      await removeOwnedEntries(this.workDir, this.#ownedEntries);
      this.#disposeWorkDirCleanup?.();
    }
  }

  #audited(): boolean {
    return this.#audit && auditDir() !== undefined;
  }

  #adminIdentity(): { caPem: string; certPem: string; keyPem: string } {
    return { caPem: this.servingCa.certPem, ...this.#pki.admin };
  }

  #logFile(name: ComponentName): string {
    return path.join(this.logDir, `${name}.log`);
  }

  #auditLogFile(): string {
    return auditLogFile(this.logDir);
  }

  #etcdSpec(): ComponentSpec {
    const clientUrl = `http://127.0.0.1:${this.#ports.etcdClient}`;
    const peerUrl = `http://127.0.0.1:${this.#ports.etcdPeer}`;
    return {
      name: 'etcd',
      command: this.binaries.etcd,
      logFile: this.#logFile('etcd'),
      args: [
        '--name=hostclaim-dev',
        `--data-dir=${path.join(this.workDir, 'etcd')}`,
        `--listen-client-urls=${clientUrl}`,
        `--advertise-client-urls=${clientUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=hostclaim-dev=${peerUrl}`,
        // Throwaway data: durability is not worth the fsync latency.
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
    };
  }

  /** `audit`: flags auditing hostclaim-apiserver's ServiceAccount (test/controlplane/audit.ts), or none. */
  #apiserverSpec(audit: readonly string[]): ComponentSpec {
    const { files } = this.#pki;
    return {
      name: 'kube-apiserver',
      command: this.binaries.kubeApiserver,
      logFile: this.#logFile('kube-apiserver'),
      args: [
        `--etcd-servers=http://127.0.0.1:${this.#ports.etcdClient}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${this.#ports.apiserver}`,
        // Loopback advertise addresses are rejected by the endpoint reconcilers
        // (validated at startup since 1.36); with none, nothing writes the
        // default/kubernetes Endpoints, which nothing here needs.
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--tls-cert-file=${files.apiserverCert}`,
        `--tls-private-key-file=${files.apiserverKey}`,
        `--client-ca-file=${this.clientCa.certPath}`,
        '--authorization-mode=RBAC',
        `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
        `--service-account-issuer=${this.server}`,
        `--service-account-key-file=${files.serviceAccountPublicKey}`,
        `--service-account-signing-key-file=${files.serviceAccountPrivateKey}`,
        // Aggregation layer: the front-proxy CA is separate from the client CA,
        // and only the proxy client's CN may assert X-Remote-* identities.
        `--requestheader-client-ca-file=${this.frontProxyCa.certPath}`,
        `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_NAME}`,
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-uid-headers=X-Remote-Uid',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        `--proxy-client-cert-file=${files.frontProxyClientCert}`,
        `--proxy-client-key-file=${files.frontProxyClientKey}`,
        // Resolve APIService backends through the Service (ExternalName ->
        // 127.0.0.1); endpoint routing cannot reach loopback addresses.
        '--enable-aggregator-routing=false',
        ...audit,
      ],
    };
  }

  #controllerManagerSpec(kubeconfig: string): ComponentSpec {
    return {
      name: 'kube-controller-manager',
      command: this.binaries.kubeControllerManager,
      logFile: this.#logFile('kube-controller-manager'),
      args: [
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        `--controllers=${this.#controllers.join(',')}`,
        // Each controller acts as its own kube-system ServiceAccount, as in a
        // real cluster: e.g. the garbage collector reaches aggregated APIs as
        // system:serviceaccount:kube-system:generic-garbage-collector.
        '--use-service-account-credentials=true',
        `--service-account-private-key-file=${this.#pki.files.serviceAccountPrivateKey}`,
        `--root-ca-file=${this.servingCa.certPath}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${this.#ports.controllerManager}`,
        '--leader-elect=false',
        // Level 2 logs the garbage collector's discovery syncs and monitor changes.
        '--v=2',
      ],
    };
  }
}

function pickCaFile(ca: CaFile): CaFile {
  return { certPem: ca.certPem, certPath: ca.certPath };
}

async function isPlainHttpHealthy(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}
