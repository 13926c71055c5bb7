/**
 * Raw host errors never reach a tenant. BMO's `errorMessage` carries Ironic
 * text with BMC addresses (and here, to make a leak unmissable, the BMC
 * password); the binder derives a claim's `Provisioned` message from
 * `errorType` only (src/controllers/binder/status.ts). Infrastructure admins
 * read the raw text on the BareMetalHost; tenants, through the claim, its
 * Events, HardwareData or a watch, get the sanitized message. Every answer
 * here is also scanned for the host's BMC address and password.
 *
 * Runs after the references group, which binds tenant-a's alpha-deputy to
 * hosts-a/host-a.
 */
import { pollUntil } from '../../controlplane/wait.js';
import { namesOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { hosts } from '../inventory.js';
import { GROUP_PATH, type World } from '../world.js';

const hostA = hosts[0];
const claimPath = `${GROUP_PATH}/namespaces/tenant-a/hostclaims/alpha-deputy`;
const suffix = 'The infrastructure administrator can see the details.';

/** `errorType` null: removed (a merge patch), so only the raw message is left. */
async function setHostError(world: World, errorType: string | null): Promise<void> {
  const status = { errorType, errorMessage: `ipmi: cannot reach ${hostA.bmc} with password ${hostA.password}`, errorCount: 1, operationalStatus: 'error' };
  const patched = await world.env.controlPlane.kubectl(['-n', hostA.namespace, 'patch', 'baremetalhost', hostA.name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })], {
    kubeconfig: world.env.adminKubeconfigPath,
  });
  if (patched.code !== 0) throw new Error(patched.stderr);
}

interface Claim {
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}

/** The Provisioned condition as tenant-a reads it, once it is `HostError` with `expected`'s message (or the last one seen). */
async function provisionedAsTenant(world: World, message: string): Promise<string> {
  let last = '';
  try {
    return await pollUntil(
      'the claim to report the host error',
      async () => {
        const claim = (await world.as('tenant-a', 'aggregator', { path: claimPath })).json as Claim;
        const condition = claim.status?.conditions?.find((c) => c.type === 'Provisioned');
        last = condition === undefined ? 'none' : `${condition.status} ${condition.reason}: ${condition.message}`;
        return condition?.reason === 'HostError' && condition.message === message ? last : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  } catch {
    return last;
  }
}

function errorCase(errorType: string | null, message: string): IsolationCase {
  return {
    name: `host error "${errorType ?? 'without a type'}" reaches tenant-a sanitized`,
    request: `admin: host-a status {errorType: ${errorType ?? 'null'}, errorMessage: <Ironic text with BMC address and password>}; tenant-a via aggregator: GET alpha-deputy`,
    expected: { provisioned: `False HostError: ${message}` },
    run: async (world) => {
      await setHostError(world, errorType);
      return { provisioned: await provisionedAsTenant(world, message) };
    },
  };
}

function readCase(name: string, path: string, read: (body: string, world: World) => Outcome): IsolationCase {
  return {
    name,
    request: `tenant-a via aggregator: GET ${path}`,
    expected: { code: 200, sawTheError: false },
    run: async (world) => {
      const response = await world.as('tenant-a', 'aggregator', { path });
      return { code: response.status, ...read(response.body, world) };
    },
  };
}

const rawTextIn = (body: string): Outcome => ({ sawTheError: body.includes(hostA.bmc) || body.includes(hostA.password) || body.includes('ipmi:') });

const cases: IsolationCase[] = [
  errorCase('power management error', `Changing the power state of the host failed. ${suffix}`),
  errorCase('provisioning error', `Deploying the image failed; check the image URL, checksum and format. ${suffix}`),
  errorCase('registration error', `The host could not be registered with its management controller. ${suffix}`),
  errorCase(null, `The host reported an error. ${suffix}`),
  readCase('the Events of the claim while the host is in error', '/api/v1/namespaces/tenant-a/events?fieldSelector=involvedObject.name%3Dalpha-deputy', rawTextIn),
  readCase('the HardwareData of the held host while it is in error', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata/hosts-a.host-a`, rawTextIn),
  readCase('a watch of the claims (initial events)', `${GROUP_PATH}/namespaces/tenant-a/hostclaims?watch=true&timeoutSeconds=1`, rawTextIn),
  readCase('a watch of the HardwareData', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata?watch=true&timeoutSeconds=1`, rawTextIn),
  {
    name: 'the admin reads the raw error on the BareMetalHost',
    request: 'admin: GET hosts-a/baremetalhosts/host-a',
    expected: { errorMessage: `ipmi: cannot reach ${hostA.bmc} with password ${hostA.password}` },
    run: async (world) => {
      const host = await world.env.controlPlane.requestJson<{ status: { errorMessage: string } }>('GET', `/apis/metal3.io/v1alpha1/namespaces/${hostA.namespace}/baremetalhosts/${hostA.name}`);
      return { errorMessage: host.status.errorMessage };
    },
  },
  {
    name: 'the held host stays listed for tenant-a while in error',
    request: `tenant-a via aggregator: GET ${GROUP_PATH}/namespaces/tenant-a/hardwaredata?fieldSelector=metadata.name%3Dhosts-a.host-a`,
    expected: { code: 200, names: ['tenant-a/hosts-a.host-a'] },
    run: async (world) => namesOf(await world.as('tenant-a', 'aggregator', { path: `${GROUP_PATH}/namespaces/tenant-a/hardwaredata?fieldSelector=metadata.name%3Dhosts-a.host-a` })),
  },
];

export const hostErrors: CaseGroup = { name: 'raw host errors never reach tenants', cases };
