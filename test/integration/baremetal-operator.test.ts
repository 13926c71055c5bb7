/**
 * The real metal3 baremetal-operator (v0.13.2, fixture provisioner) in the
 * development environment: its CRDs are served, hosts register and inspect
 * until available, and a host provisions an image, powers on, and returns to
 * available when the image is removed. Durations are printed, to keep the
 * numbers in docs/control-plane.md honest.
 *
 * The fixture keeps one state for all hosts (hostclaim-upstream.md §4), so
 * only one host is ever provisioned here, and power is checked on that host.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createBareMetalHost,
  getBareMetalHost,
  patchBareMetalHost,
  waitForProvisioningState,
  type BareMetalHost,
} from '../controlplane/baremetal-operator.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';

const binDir = inject('controlPlaneBinDir');
const NAMESPACE = 'infra';
const HOSTS = ['host-0', 'host-1', 'host-2'];
/** A cold BMO build compiles controller-runtime, cluster-api and gophercloud (minutes on 2 cores). */
const SETUP_TIMEOUT_MS = 20 * 60_000;
/** Fixture timers: registration 5 s, inspection 2 s, provisioning and deprovisioning 10 s each. */
const STATE_TIMEOUT_MS = 60_000;

let env: DevEnvironment;

beforeAll(async () => {
  env = await startDevEnvironment({
    workDir: path.join(os.tmpdir(), `bmo-${process.pid}`),
    serverEntry: 'dist/src/main.js',
    binDir,
    bareMetalOperator: true,
  });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await env.stop();
});

/** Runs `step` and prints how long it took. */
async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const startedAt = Date.now();
  const result = await step();
  console.info(`[bmo] ${label}: ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  return result;
}

function waitForState(name: string, state: string): Promise<BareMetalHost> {
  return waitForProvisioningState(env.controlPlane, NAMESPACE, name, state, STATE_TIMEOUT_MS);
}

/** status.poweredOn lags the provisioning state by a reconcile. */
function waitForPower(name: string, poweredOn: boolean): Promise<BareMetalHost> {
  return pollUntil(
    `BareMetalHost ${NAMESPACE}/${name} status.poweredOn=${poweredOn}`,
    async () => {
      const host = await getBareMetalHost(env.controlPlane, NAMESPACE, name);
      return host.status?.poweredOn === poweredOn ? host : undefined;
    },
    { timeoutMs: STATE_TIMEOUT_MS, intervalMs: 250 },
  );
}

describe('metal3 baremetal-operator with the fixture provisioner', () => {
  it('serves the metal3.io CRDs it installs', async () => {
    const discovery = await env.controlPlane.requestJson<{ resources: { name: string }[] }>('GET', '/apis/metal3.io/v1alpha1');
    expect(discovery.resources.map((resource) => resource.name)).toEqual(
      expect.arrayContaining(['baremetalhosts', 'hardwaredata', 'hostclaims', 'hostdeploypolicies', 'dataimages']),
    );
    const listed = await env.controlPlane.kubectl(['-n', NAMESPACE, 'get', 'hostdeploypolicies.metal3.io,hardwaredata.metal3.io,hostclaims.metal3.io']);
    expect(listed.stderr).toContain('No resources found');
    expect(listed.code).toBe(0);
  });

  it('registers and inspects new hosts until they are available', async () => {
    await Promise.all(
      HOSTS.map((name, index) =>
        createBareMetalHost(env.controlPlane, { namespace: NAMESPACE, name, labels: { tier: index === 0 ? 'gold' : 'silver' } }),
      ),
    );
    const hosts = await timed('3 new hosts -> available', () => Promise.all(HOSTS.map((name) => waitForState(name, 'available'))));
    for (const host of hosts) {
      expect(host.status).toMatchObject({ operationalStatus: 'OK', poweredOn: false });
    }
    // Inspection leaves a HardwareData per host (the fixture's fixed inventory).
    for (const name of HOSTS) {
      const hardware = await env.controlPlane.requestJson<{ spec?: { hardware?: { ramMebibytes?: number } } }>(
        'GET',
        `/apis/metal3.io/v1alpha1/namespaces/${NAMESPACE}/hardwaredata/${name}`,
      );
      expect(hardware.spec?.hardware?.ramMebibytes).toBeGreaterThan(0);
    }
  });

  it('provisions an image on a host and powers it on', async () => {
    await patchBareMetalHost(env.controlPlane, NAMESPACE, 'host-0', {
      spec: {
        online: true,
        image: {
          url: 'http://images.example/ubuntu.raw',
          checksum: 'http://images.example/ubuntu.raw.sha256sum',
          checksumType: 'sha256',
          format: 'raw',
        },
      },
    });
    await timed('host-0 available -> provisioned', () => waitForState('host-0', 'provisioned'));
    const host = await timed('host-0 provisioned -> status.poweredOn', () => waitForPower('host-0', true));
    expect(host.status?.operationalStatus).toBe('OK');
  });

  it('deprovisions a host whose image is removed and powers it off', async () => {
    await patchBareMetalHost(env.controlPlane, NAMESPACE, 'host-0', { spec: { online: false, image: null } });
    await timed('host-0 provisioned -> available', () => waitForState('host-0', 'available'));
    const host = await timed('host-0 available -> powered off', () => waitForPower('host-0', false));
    expect(host.status?.operationalStatus).toBe('OK');
  });
});
