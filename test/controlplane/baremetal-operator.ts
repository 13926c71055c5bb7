// The real metal3 baremetal-operator (BMO), built from Go modules by
// test/bmo/build.sh and run against the control plane with its fixture
// provisioner (-test-mode): hosts register, inspect, provision and
// deprovision on short timers, and no BMC or Ironic is ever contacted.
//
// The fixture keeps one state for all hosts (v0.13.2 main.go passes a single
// fixture.Fixture as the provisioner factory), the deployed image included:
// a host's first Deprovision call clears it and waits 10 s, a host's
// Provision call sets it when it is clear and waits 10 s. So while one host
// is deprovisioned and another provisioned, each call undoes the other's step
// and both can stay in deprovisioning/provisioning for good, in lockstep
// every 10 s. Tests bring hosts with images back one at a time.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runBuildScript } from './binaries.js';
import type { ControlPlane } from './controlplane.js';
import { sampleInventory, type HardwareDetails } from './inventory.js';
import { repoPath } from './paths.js';
import { startProcess, type ManagedProcess } from './processes.js';
import { pollUntil } from './wait.js';

/** Set by `make`/`cli.ts up` (or by hand) to skip calling test/bmo/build.sh. */
export const BMO_DIR_ENV = 'HOSTCLAIM_BMO_DIR';

export interface BareMetalOperatorBuild {
  dir: string;
  binary: string;
  /** config/base/crds/bases of the BMO module: every CRD it watches. */
  crdDir: string;
}

export interface BareMetalOperatorOptions {
  controlPlane: ControlPlane;
  /** Where baremetal-operator.log goes. */
  logDir: string;
  /** A test/bmo/build.sh output directory; defaults to $HOSTCLAIM_BMO_DIR, else build.sh. */
  dir?: string;
  log?: (line: string) => void;
}

export interface BareMetalOperator {
  /** The current process (a new one after start()). */
  readonly process: ManagedProcess;
  readonly logFile: string;
  /** SIGTERM (SIGKILL after 15 s). Idempotent. */
  stop(): Promise<void>;
  /** Starts it again after stop() (a dependency fault in tests), the log appended; resolves once its controllers run. */
  start(): Promise<void>;
}

export interface NewBareMetalHost {
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Defaults to a MAC derived from namespace/name. */
  bootMACAddress?: string;
  /** Hardware details given to BMO instead of the fixture's inspection data (inspection is then disabled). */
  hardware?: HardwareDetails;
}

/** The BareMetalHost fields the harness and tests read. */
export interface BareMetalHost {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: { online: boolean; image?: { url: string } };
  status?: {
    operationalStatus?: string;
    errorMessage?: string;
    poweredOn?: boolean;
    provisioning?: { state?: string };
  };
}

const buildScript = repoPath('test', 'bmo', 'build.sh');
const CRDS_ESTABLISHED_TIMEOUT = '60s';
const STARTED_TIMEOUT_MS = 60_000;
/** Logged by controller-runtime once the BareMetalHost informers have synced. */
const STARTED_LINE = /"msg":"Starting workers".*"controller":"baremetalhost"/;

/** Uses $HOSTCLAIM_BMO_DIR if set, otherwise builds (or finds cached) BMO. */
export async function resolveBareMetalOperator(dir = process.env[BMO_DIR_ENV]): Promise<BareMetalOperatorBuild> {
  const resolved = dir ?? (await runBuildScript(buildScript));
  const build = { dir: resolved, binary: path.join(resolved, 'baremetal-operator'), crdDir: path.join(resolved, 'crds') };
  await fs.promises.access(build.binary, fs.constants.X_OK);
  return build;
}

/** Server-side applies every BMO CRD and waits until all are Established. */
export async function installBareMetalOperatorCrds(controlPlane: ControlPlane, crdDir: string): Promise<void> {
  await controlPlane.applyFile(crdDir);
  const args = ['wait', '--for=condition=Established', `--timeout=${CRDS_ESTABLISHED_TIMEOUT}`, '-f', crdDir];
  const result = await controlPlane.kubectl(args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`);
}

/** Installs the CRDs, starts BMO as cluster admin on all namespaces, and waits until its controllers run. */
export async function startBareMetalOperator(options: BareMetalOperatorOptions): Promise<BareMetalOperator> {
  const startedAt = Date.now();
  const build = await resolveBareMetalOperator(options.dir);
  await installBareMetalOperatorCrds(options.controlPlane, build.crdDir);
  const logFile = path.join(options.logDir, 'baremetal-operator.log');
  let child = await runBareMetalOperator(build, options.controlPlane, logFile, false);
  options.log?.(`baremetal-operator running (pid ${child.pid}, ${Date.now() - startedAt} ms)`);
  return {
    get process() {
      return child;
    },
    logFile,
    stop: async () => {
      await child.stop();
    },
    start: async () => {
      if (child.running) throw new Error('baremetal-operator is running');
      child = await runBareMetalOperator(build, options.controlPlane, logFile, true);
      options.log?.(`baremetal-operator running again (pid ${child.pid})`);
    },
  };
}

/** Starts the process and waits for its "Starting workers" line (in what it logs from now on). */
async function runBareMetalOperator(build: BareMetalOperatorBuild, controlPlane: ControlPlane, logFile: string, appendToLog: boolean): Promise<ManagedProcess> {
  const logOffset = appendToLog && fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
  const child = await startProcess({
    name: 'baremetal-operator',
    command: build.binary,
    args: [
      '-test-mode', // the fixture provisioner instead of Ironic
      '-webhook-port=0', // no webhook server, so no certificates (and no admission validation)
      // Nothing scrapes or probes it; readiness comes from the log below.
      '-metrics-addr=0',
      '-health-addr=0',
    ],
    logFile,
    appendToLog,
    env: { ...process.env, KUBECONFIG: controlPlane.adminKubeconfigPath },
  });
  try {
    await pollUntil(
      'baremetal-operator to start its BareMetalHost controller',
      () => {
        child.assertRunning();
        return Promise.resolve(STARTED_LINE.test(fs.readFileSync(logFile).subarray(logOffset).toString('utf8')) ? true : undefined);
      },
      { timeoutMs: STARTED_TIMEOUT_MS, describeFailure: () => child.logTail() },
    );
  } catch (error) {
    await child.stop();
    throw error;
  }
  return child;
}

/**
 * Creates a BMC credentials Secret `<name>-bmc-secret` and a powered-off
 * BareMetalHost with a fake redfish address (the fixture provisioner only
 * checks its syntax), the given boot MAC (or one derived from
 * namespace/name) and, when given, its hardware details
 * (inventory.ts explains how BMO takes them).
 */
export async function createBareMetalHost(controlPlane: ControlPlane, host: NewBareMetalHost): Promise<void> {
  const { namespace, name } = host;
  const secretName = `${name}-bmc-secret`;
  if (host.hardware !== undefined) {
    await controlPlane.requestJson('POST', `/apis/metal3.io/v1alpha1/namespaces/${namespace}/hardwaredata`, {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HardwareData',
      metadata: { name, namespace },
      spec: { hardware: host.hardware },
    });
  }
  await controlPlane.requestJson('POST', `/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretName, namespace },
    stringData: { username: 'admin', password: 'password' },
  });
  await controlPlane.requestJson('POST', `/apis/metal3.io/v1alpha1/namespaces/${namespace}/baremetalhosts`, {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name,
      namespace,
      labels: host.labels,
      annotations: host.annotations,
    },
    spec: {
      online: false,
      bootMACAddress: host.bootMACAddress ?? fakeMacAddress(`${namespace}/${name}`),
      ...(host.hardware === undefined ? {} : { inspectionMode: 'disabled' }),
      bmc: { address: `redfish+http://192.168.222.1:8000/redfish/v1/Systems/${name}`, credentialsName: secretName },
    },
  });
}

export function getBareMetalHost(controlPlane: ControlPlane, namespace: string, name: string): Promise<BareMetalHost> {
  return controlPlane.requestJson<BareMetalHost>('GET', `/apis/metal3.io/v1alpha1/namespaces/${namespace}/baremetalhosts/${name}`);
}

/** JSON merge patch of a BareMetalHost (null removes a field). */
export async function patchBareMetalHost(
  controlPlane: ControlPlane,
  namespace: string,
  name: string,
  patch: Record<string, unknown>,
): Promise<void> {
  const args = ['-n', namespace, 'patch', 'baremetalhosts.metal3.io', name, '--type=merge', '-p', JSON.stringify(patch)];
  const result = await controlPlane.kubectl(args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`);
}

/** Polls until `status.provisioning.state` is `state`; the timeout error shows the last status seen. */
export async function waitForProvisioningState(
  controlPlane: ControlPlane,
  namespace: string,
  name: string,
  state: string,
  timeoutMs: number,
): Promise<BareMetalHost> {
  let last: BareMetalHost | undefined;
  return pollUntil(
    `BareMetalHost ${namespace}/${name} to reach provisioning state ${state}`,
    async () => {
      last = await getBareMetalHost(controlPlane, namespace, name);
      return last.status?.provisioning?.state === state ? last : undefined;
    },
    { timeoutMs, intervalMs: 250, describeFailure: () => `last status: ${JSON.stringify(last?.status ?? null)}` },
  );
}

/**
 * The `make dev` inventory in `namespace`: host-0..host-2 of inventory.ts
 * (distinct hardware, MACs, IPs and hostnames; labels `role: worker`,
 * `tier` gold/gold/silver, `disk` nvme/ssd/hdd), and the HostDeployPolicy
 * `tenants` that lets `tenants` claim them. Returns once every host is
 * available.
 */
export async function createSampleInventory(
  controlPlane: ControlPlane,
  namespace: string,
  tenants: readonly string[],
  timeoutMs: number,
): Promise<void> {
  await controlPlane.requestJson('POST', `/apis/metal3.io/v1alpha1/namespaces/${namespace}/hostdeploypolicies`, {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'HostDeployPolicy',
    metadata: { name: 'tenants', namespace },
    spec: { hostClaimNamespaces: { names: tenants } },
  });
  await Promise.all(sampleInventory.map((host) => createBareMetalHost(controlPlane, { namespace, ...host })));
  await Promise.all(sampleInventory.map(({ name }) => waitForProvisioningState(controlPlane, namespace, name, 'available', timeoutMs)));
}

/** A stable, locally administered unicast MAC (02:...), unique enough for a test inventory. */
function fakeMacAddress(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest().subarray(0, 5);
  return ['02', ...[...bytes].map((byte) => byte.toString(16).padStart(2, '0'))].join(':');
}
