/**
 * Identity-scoped reads across namespaces, through the real aggregator with
 * the opt-in grant (deploy/components/cluster-wide-reads, which the dev
 * overlay applies): a user bound to 3 of 6 namespaces gets exactly their
 * objects from `kubectl get hc -A` and `kubectl get hardwaredata -A`, an
 * open `-A` watch follows RoleBindings granted and revoked, and no
 * namespaced request of any verb reaches another namespace although the
 * grant lets list and watch of every namespace through kube-apiserver.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';
import { rawClients } from '../support/raw-http.js';

const binDir = inject('controlPlaneBinDir');
const bmoModule = 'github.com/metal3-io/baremetal-operator@v0.13.2';
const group = '/apis/tenancy.metal3.io/v1alpha1';
const namespaces = ['cw-1', 'cw-2', 'cw-3', 'cw-4', 'cw-5', 'cw-6'];
const hosts = ['rack-a', 'rack-b'];
/** Carol administers cw-1..cw-3 (the built-in admin role, which aggregates tenancy.metal3.io). */
const carolsNamespaces = ['cw-1', 'cw-2', 'cw-3'];

let env: DevEnvironment;
let workDir: string;
let carol: string;
let dave: string;

interface Item {
  metadata: { name: string; namespace: string; resourceVersion: string };
}

interface List {
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: Item[];
}

beforeAll(async () => {
  workDir = path.join(os.tmpdir(), `cluster-wide-reads-${process.pid}`);
  env = await startDevEnvironment({ workDir, serverEntry: 'dist/src/main.js', binDir });
  await installMetal3Crds();
  carol = await env.controlPlane.userKubeconfig('carol', ['engineering'], path.join(workDir, 'carol.kubeconfig'));
  dave = await env.controlPlane.userKubeconfig('dave', [], path.join(workDir, 'dave.kubeconfig'));
  for (const namespace of namespaces) {
    await env.controlPlane.apply(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }));
  }
  for (const namespace of carolsNamespaces) await bindAdmin('carol', namespace);
  for (const host of hosts) await createHost(host);
  await env.controlPlane.apply(
    JSON.stringify({ apiVersion: 'metal3.io/v1alpha1', kind: 'HostDeployPolicy', metadata: { name: 'cw', namespace: 'infra' }, spec: { hostClaimNamespaces: { names: namespaces } } }),
  );
  for (const namespace of namespaces) await createClaim(namespace, `claim-${namespace}`);
  // The hosts' HardwareData reach every admitted namespace once the server has seen the policy.
  await pollUntil('HardwareData in every namespace', async () => ((await adminList('hardwaredata')).length === namespaces.length * hosts.length ? true : undefined), {
    timeoutMs: 60_000,
  });
}, 300_000);

afterAll(async () => {
  await env.stop();
});

async function installMetal3Crds(): Promise<void> {
  const modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const files = ['metal3.io_baremetalhosts.yaml', 'metal3.io_hostdeploypolicies.yaml'].map((crd) => path.join(modCache, bmoModule, 'config', 'base', 'crds', 'bases', crd));
  for (const file of files) await env.controlPlane.applyFile(file);
  await admin(['wait', '--for=condition=Established', '--timeout=60s', ...files.flatMap((f) => ['-f', f])]);
}

async function createHost(name: string): Promise<void> {
  await env.controlPlane.apply(
    JSON.stringify({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name, namespace: 'infra', labels: { role: 'cw' } },
      spec: { online: false, bmc: { address: 'redfish://192.0.2.1/redfish/v1/Systems/1', credentialsName: `${name}-bmc` } },
    }),
  );
  const status = {
    operationalStatus: 'OK',
    errorCount: 0,
    errorMessage: '',
    poweredOn: false,
    provisioning: { state: 'available', ID: '' },
    hardware: { ramMebibytes: 1024, hostname: name },
  };
  await admin(['-n', 'infra', 'patch', 'baremetalhost', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
}

async function createClaim(namespace: string, name: string): Promise<void> {
  // A selector no host matches: the claims stay unbound, only their visibility matters here.
  const body = { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name, namespace }, spec: { poweredOn: false, hostSelector: { matchLabels: { role: 'none' } } } };
  await admin(['create', '-f', '-'], JSON.stringify(body));
}

function bindingManifest(user: string, namespace: string): string {
  return JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${user}-admin`, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
}

async function bindAdmin(user: string, namespace: string): Promise<void> {
  await admin(['create', '-f', '-'], bindingManifest(user, namespace));
}

async function run(kubeconfig: string, args: string[], stdin?: string) {
  return env.controlPlane.kubectl(args, { kubeconfig, ...(stdin === undefined ? {} : { stdin }) });
}

async function ok(kubeconfig: string, args: string[], stdin?: string): Promise<string> {
  const result = await run(kubeconfig, args, stdin);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

function admin(args: string[], stdin?: string): Promise<string> {
  return ok(env.adminKubeconfigPath, args, stdin);
}

const keys = (list: List): string[] => list.items.map((item) => `${item.metadata.namespace}/${item.metadata.name}`);

async function adminList(resource: string): Promise<string[]> {
  const list = JSON.parse(await admin(['get', `${resource}.tenancy.metal3.io`, '-A', '-o', 'json'])) as List;
  return keys(list).filter((key) => namespaces.includes(key.split('/')[0] ?? ''));
}

async function listAs(kubeconfig: string, resource: string, extra: string[] = []): Promise<List> {
  return JSON.parse(await ok(kubeconfig, ['get', `${resource}.tenancy.metal3.io`, '-A', '-o', 'json', ...extra])) as List;
}

describe('kubectl get -A', () => {
  it('gives a user bound to 3 of 6 namespaces exactly the HostClaims of those 3, unpaged', async () => {
    const list = await listAs(carol, 'hostclaims');
    expect(keys(list)).toEqual(['cw-1/claim-cw-1', 'cw-2/claim-cw-2', 'cw-3/claim-cw-3']);
    expect(list.metadata.continue).toBeUndefined();
    expect(list.metadata.remainingItemCount).toBeUndefined();
    // kubectl pages by 500 by default; with pages of 1 the answer is the same single page.
    expect(keys(await listAs(carol, 'hostclaims', ['--chunk-size=1']))).toEqual(['cw-1/claim-cw-1', 'cw-2/claim-cw-2', 'cw-3/claim-cw-3']);
    const table = await ok(carol, ['get', 'hc', '-A', '--no-headers', '-o', 'custom-columns=NS:.metadata.namespace,NAME:.metadata.name']);
    expect(table.split('\n').filter((line) => line !== '').map((line) => line.split(/\s+/).join('/'))).toEqual(['cw-1/claim-cw-1', 'cw-2/claim-cw-2', 'cw-3/claim-cw-3']);
  });

  it('gives the same user exactly the HardwareData of those 3 namespaces', async () => {
    const expected = (await adminList('hardwaredata')).filter((key) => carolsNamespaces.includes(key.split('/')[0] ?? ''));
    expect(expected).toHaveLength(carolsNamespaces.length * hosts.length);
    expect(keys(await listAs(carol, 'hardwaredata'))).toEqual(expected);
  });

  it('gives a user without bindings an empty list, and an admin everything', async () => {
    expect(keys(await listAs(dave, 'hostclaims'))).toEqual([]);
    expect(keys(await listAs(dave, 'hardwaredata'))).toEqual([]);
    expect(await adminList('hostclaims')).toEqual(namespaces.map((ns) => `${ns}/claim-${ns}`));
  });

  it('narrows a namespace field selector to what the user may read', async () => {
    expect(keys(await listAs(carol, 'hostclaims', ['--field-selector=metadata.namespace=cw-2']))).toEqual(['cw-2/claim-cw-2']);
    expect(keys(await listAs(carol, 'hostclaims', ['--field-selector=metadata.namespace=cw-5']))).toEqual([]);
  });
});

/** `kubectl get hc -A -w --output-watch-events -o json`, its events as `TYPE namespace/name`. */
class KubectlWatch {
  readonly events: string[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  /** Everything kubectl wrote, for failure messages. */
  output = '';

  constructor(kubeconfig: string, resource: string) {
    this.child = spawn(path.join(binDir, 'kubectl'), ['--kubeconfig', kubeconfig, 'get', resource, '-A', '-w', '--output-watch-events', '-o', 'json'], {
      env: { ...process.env, KUBECACHEDIR: path.join(workDir, 'kubectl-watch-cache') },
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.output += chunk;
    });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.output += chunk;
      this.buffer += chunk;
      // kubectl prints each watch event as one line of JSON.
      let end: number;
      while ((end = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 1);
        if (line.trim() === '') continue;
        const event = JSON.parse(line) as { type: string; object: Item };
        this.events.push(`${event.type} ${event.object.metadata.namespace}/${event.object.metadata.name}`);
      }
    });
  }

  stop(): void {
    this.child.kill();
  }
}

describe('an open -A watch', () => {
  it('gets ADDED within 5 s of a RoleBinding granted and DELETED within 5 s of one revoked; lists follow', async () => {
    const claims = new KubectlWatch(carol, 'hostclaims.tenancy.metal3.io');
    const hardware = new KubectlWatch(carol, 'hardwaredata.tenancy.metal3.io');
    try {
      await pollUntil('the initial events', () => Promise.resolve(claims.events.length === 3 ? true : undefined), { timeoutMs: 30_000 }).catch((error: unknown) => {
        throw new Error(`${String(error)}; kubectl wrote: ${claims.output}`);
      });
      expect(claims.events).toEqual(['ADDED cw-1/claim-cw-1', 'ADDED cw-2/claim-cw-2', 'ADDED cw-3/claim-cw-3']);
      await pollUntil('the initial HardwareData events', () => Promise.resolve(hardware.events.length === 6 ? true : undefined), { timeoutMs: 30_000 });
      expect(hardware.events).toEqual(carolsNamespaces.flatMap((namespace) => hosts.map((host) => `ADDED ${namespace}/infra.${host}`)));

      let started = Date.now();
      await bindAdmin('carol', 'cw-4');
      await pollUntil('ADDED cw-4', () => Promise.resolve(claims.events.length === 4 ? true : undefined), { timeoutMs: 30_000, intervalMs: 50 });
      expect(Date.now() - started).toBeLessThanOrEqual(5_000);
      expect(claims.events.slice(3)).toEqual(['ADDED cw-4/claim-cw-4']);
      await pollUntil('HardwareData of cw-4', () => Promise.resolve(hardware.events.length === 8 ? true : undefined), { timeoutMs: 30_000, intervalMs: 50 });
      expect(hardware.events.slice(6).sort()).toEqual(hosts.map((host) => `ADDED cw-4/infra.${host}`).sort());
      expect(keys(await listAs(carol, 'hostclaims'))).toEqual(['cw-1/claim-cw-1', 'cw-2/claim-cw-2', 'cw-3/claim-cw-3', 'cw-4/claim-cw-4']);

      started = Date.now();
      await admin(['-n', 'cw-1', 'delete', 'rolebinding', 'carol-admin']);
      await pollUntil('DELETED cw-1', () => Promise.resolve(claims.events.length === 5 ? true : undefined), { timeoutMs: 30_000, intervalMs: 50 });
      expect(Date.now() - started).toBeLessThanOrEqual(5_000);
      expect(claims.events.slice(4)).toEqual(['DELETED cw-1/claim-cw-1']);
      await pollUntil('HardwareData of cw-1 gone', () => Promise.resolve(hardware.events.length === 10 ? true : undefined), { timeoutMs: 30_000, intervalMs: 50 });
      expect(hardware.events.slice(8).sort()).toEqual(hosts.map((host) => `DELETED cw-1/infra.${host}`).sort());
      expect(keys(await listAs(carol, 'hostclaims'))).toEqual(['cw-2/claim-cw-2', 'cw-3/claim-cw-3', 'cw-4/claim-cw-4']);

      // Changes in a namespace carol cannot read never reach her watch; those in hers do.
      await admin(['-n', 'cw-5', 'label', 'hostclaim.tenancy.metal3.io', 'claim-cw-5', 'touched=yes']);
      await admin(['-n', 'cw-2', 'label', 'hostclaim.tenancy.metal3.io', 'claim-cw-2', 'touched=yes']);
      await pollUntil('MODIFIED cw-2', () => Promise.resolve(claims.events.length === 6 ? true : undefined), { timeoutMs: 30_000 });
      expect(claims.events.slice(5)).toEqual(['MODIFIED cw-2/claim-cw-2']);
    } finally {
      claims.stop();
      hardware.stop();
      // Back to cw-1..cw-3 for the other tests.
      await run(env.adminKubeconfigPath, ['-n', 'cw-4', 'delete', 'rolebinding', 'carol-admin', '--ignore-not-found']);
      await run(env.adminKubeconfigPath, ['create', '-f', '-'], bindingManifest('carol', 'cw-1'));
    }
    await pollUntil('carol back to cw-1..cw-3', async () => (keys(await listAs(carol, 'hostclaims')).join() === 'cw-1/claim-cw-1,cw-2/claim-cw-2,cw-3/claim-cw-3' ? true : undefined), {
      timeoutMs: 30_000,
    });
  }, 180_000);
});

describe('with the grant applied, no namespaced request reaches another namespace', () => {
  const forbidden = (verb: string, resource: string): string =>
    `is forbidden: User "carol" cannot ${verb} resource "${resource}" in API group "tenancy.metal3.io" in the namespace "cw-5"`;

  it('refuses every verb (get, list, watch, create, update, patch, delete, deletecollection, status) on HostClaims and HardwareData of cw-5, and changes nothing', async () => {
    const before = await admin(['-n', 'cw-5', 'get', 'hostclaim.tenancy.metal3.io', 'claim-cw-5', '-o', 'json']);
    const claim = JSON.parse(before) as Item & Record<string, unknown>;
    const manifest = path.join(workDir, 'claim-cw-5.json');
    await writeFile(manifest, JSON.stringify({ ...claim, metadata: { ...claim.metadata, labels: { stolen: 'yes' } } }));
    const created = path.join(workDir, 'new-cw-5.json');
    await writeFile(created, JSON.stringify({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'intruder', namespace: 'cw-5' }, spec: { poweredOn: false } }));
    const claims = `${group}/namespaces/cw-5/hostclaims`;
    const cases: [string[], string][] = [
      [['get', '--raw', `${claims}/claim-cw-5`], forbidden('get', 'hostclaims')],
      [['get', '--raw', claims], forbidden('list', 'hostclaims')],
      [['get', '--raw', `${claims}?fieldSelector=metadata.name%3Dclaim-cw-5`], forbidden('list', 'hostclaims')],
      [['get', '--raw', `${claims}?watch=true&timeoutSeconds=5`], forbidden('watch', 'hostclaims')],
      [['get', '--raw', `${group}/watch/namespaces/cw-5/hostclaims/claim-cw-5?timeoutSeconds=5`], forbidden('watch', 'hostclaims')],
      [['create', '--raw', claims, '-f', created], forbidden('create', 'hostclaims')],
      [['replace', '--raw', `${claims}/claim-cw-5`, '-f', manifest], forbidden('update', 'hostclaims')],
      [['delete', '--raw', `${claims}/claim-cw-5`], forbidden('delete', 'hostclaims')],
      [['delete', '--raw', claims], forbidden('deletecollection', 'hostclaims')],
      [['get', '--raw', `${claims}/claim-cw-5/status`], forbidden('get', 'hostclaims/status')],
      [['replace', '--raw', `${claims}/claim-cw-5/status`, '-f', manifest], forbidden('update', 'hostclaims/status')],
      [['get', '--raw', `${group}/namespaces/cw-5/hardwaredata/infra.rack-a`], forbidden('get', 'hardwaredata')],
      [['get', '--raw', `${group}/namespaces/cw-5/hardwaredata`], forbidden('list', 'hardwaredata')],
      [['get', '--raw', `${group}/namespaces/cw-5/hardwaredata?watch=true&timeoutSeconds=5`], forbidden('watch', 'hardwaredata')],
    ];
    const answers = await Promise.all(cases.map(async ([args]) => run(carol, args)));
    expect(answers.map((answer) => ({ code: answer.code, forbidden: /Error from server \(Forbidden\)|\(Forbidden\)/.test(answer.stderr), said: /is forbidden: User "carol" cannot [^"]* resource "[^"]*" in API group "[^"]*" in the namespace "cw-5"/.exec(answer.stderr.replaceAll('\\"', '"'))?.[0] ?? answer.stderr })))
      .toEqual(cases.map(([, message]) => ({ code: 1, forbidden: true, said: message })));
    // Patches as raw requests: kubectl patch would GET the object first (and be refused for that).
    const patches = await Promise.all(
      ['', '/status'].map(async (subresource) =>
        (await rawClients(env)).viaAggregator(carol, {
          method: 'PATCH',
          path: `${claims}/claim-cw-5${subresource}`,
          headers: { 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ metadata: { labels: { stolen: 'yes' } } }),
        }),
      ),
    );
    expect(patches.map((answer) => ({ code: answer.status, body: answer.json }))).toEqual(
      ['hostclaims', 'hostclaims/status'].map((resource) => ({
        code: 403,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `hostclaims.tenancy.metal3.io "claim-cw-5" ${forbidden('patch', resource)}`,
          reason: 'Forbidden',
          details: { name: 'claim-cw-5', group: 'tenancy.metal3.io', kind: 'hostclaims' },
          code: 403,
        },
      })),
    );
    expect(await admin(['-n', 'cw-5', 'get', 'hostclaim.tenancy.metal3.io', 'claim-cw-5', '-o', 'json'])).toBe(before);
    expect(await adminList('hostclaims')).toEqual(namespaces.map((ns) => `${ns}/claim-${ns}`));
  });

  it('still serves every read verb in her own namespaces', async () => {
    expect(JSON.parse(await ok(carol, ['get', '--raw', `${group}/namespaces/cw-1/hostclaims/claim-cw-1`])) as Item).toMatchObject({ metadata: { name: 'claim-cw-1' } });
    expect(keys(JSON.parse(await ok(carol, ['get', '--raw', `${group}/namespaces/cw-1/hostclaims`])) as List)).toEqual(['cw-1/claim-cw-1']);
    expect(await ok(carol, ['get', '--raw', `${group}/namespaces/cw-1/hostclaims?watch=true&timeoutSeconds=1`])).toContain('"type":"ADDED"');
  });
});
