/**
 * kubectl by the plain names in a cluster with baremetal-operator's CRDs,
 * which include `metal3.io` HostClaim and HardwareData of the same names:
 * README.md's walkthrough and docs/tenants.md run exactly as written in the
 * `make dev` environment, and every verb by `hostclaims`, `hostclaim`, `hc`,
 * `hardwaredata` and the category `metal3` reaches `tenancy.metal3.io`, for a
 * tenant and for the cluster admin. What makes kubectl prefer this group is
 * the APIService's groupPriorityMinimum (deploy/, docs/operations.md);
 * kubectl's discovery RESTMapper ranks groups in discovery order.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSampleInventory } from '../controlplane/baremetal-operator.js';
import { startDevEnvironment, TENANTS, type DevEnvironment } from '../controlplane/environment.js';
import { repoPath } from '../controlplane/paths.js';
import { readDocCommands, type DocCommand } from '../support/doc-commands.js';
import { DocShell, type ShellResult } from '../support/doc-shell.js';

const binDir = inject('controlPlaneBinDir');
const SETUP_TIMEOUT_MS = 20 * 60_000;
const HOSTS_AVAILABLE_TIMEOUT_MS = 120_000;
const WATCH_TIMEOUT_MS = 150_000;

let env: DevEnvironment;
/** The reader's checkout: `.dev` is the environment's work dir, `test` the repository's. */
let checkout: string;
let kubeCacheDir: string;

beforeAll(async () => {
  env = await startDevEnvironment({
    workDir: path.join(os.tmpdir(), `kubectl-names-${process.pid}`),
    serverEntry: 'dist/src/main.js',
    binDir,
    bareMetalOperator: true,
  });
  // What `make dev` adds (test/controlplane/cli.ts).
  await createSampleInventory(env.controlPlane, 'infra', TENANTS, HOSTS_AVAILABLE_TIMEOUT_MS);
  checkout = await fs.mkdtemp(path.join(os.tmpdir(), 'kubectl-names-checkout-'));
  await fs.symlink(env.workDir, path.join(checkout, '.dev'));
  await fs.symlink(repoPath('test'), path.join(checkout, 'test'));
  await fs.writeFile(path.join(checkout, 'cloud-init.yaml'), '#cloud-config\nhostname: web\n');
  // A fresh discovery cache, as a reader of a just-started `make dev` has.
  kubeCacheDir = path.join(checkout, '.kube-cache');
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await env.stop();
  await fs.rm(checkout, { recursive: true, force: true });
});

// --- the documentation, as written ------------------------------------------------

interface Expectation {
  /** Why the test does not run the command (instead of `check`). */
  notRun?: string;
  /** For a command that never ends (`-w`): stop it once its output shows this, as Ctrl-C would. */
  until?: (stdout: string) => boolean;
  check?: (result: ShellResult, shell: DocShell) => Promise<void> | void;
}

const HOSTCLAIM_HEADER = ['NAME', 'HOST', 'READY', 'POWERED', 'AGE'];
const HARDWAREDATA_HEADER = ['NAME', 'MANUFACTURER', 'PRODUCT', 'ARCH', 'CPUS', 'MEMORY', 'AGE'];
const TENANT_B_FORBIDDEN =
  'Error from server (Forbidden): hostclaims.tenancy.metal3.io is forbidden: User "tenant-b" cannot list resource "hostclaims" in API group "tenancy.metal3.io" in the namespace "tenant-a"\n';

/** kubectl's table output as cells (columns are separated by at least two spaces or a tab). */
function table(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}|\t/));
}

/** A claim's row once it is bound, deployed and powered on: name, host, READY, POWERED. */
const readyRow = (name: string): RegExp => new RegExp(`^${name}\\s+host-[0-2]\\s+True\\s+true\\s+\\S+$`, 'm');

function succeeded(result: ShellResult): void {
  expect(result.stderr, result.stdout).toBe('');
  expect(result.code).toBe(0);
}

async function realpathIn(dir: string, file: string): Promise<string> {
  return fs.realpath(path.resolve(dir, file));
}

function expectHardwareDataTable(stdout: string): void {
  const [header, ...rows] = stdout.trimEnd().split('\n');
  expect(header?.trim().split(/\s{2,}/)).toEqual(HARDWAREDATA_HEADER);
  // The sample inventory (host-0..2 in infra, admitted for tenant-a), each with its own hardware.
  expect(rows.map((row) => row.trim().split(/\s{2,}/).slice(0, -1))).toEqual([
    ['infra.host-0', 'Dell Inc.', 'PowerEdge R650', 'x86_64', '64', '256Gi'],
    ['infra.host-1', 'Dell Inc.', 'PowerEdge R750', 'x86_64', '128', '512Gi'],
    ['infra.host-2', 'HPE', 'ProLiant DL380 Gen10', 'x86_64', '24', '128Gi'],
  ]);
}

function expectDescribedClaim(stdout: string, name: string): void {
  expect(stdout).toMatch(new RegExp(`^Name:\\s+${name}\\nNamespace:\\s+tenant-a\\n`));
  expect(stdout).toMatch(/^API Version:\s+tenancy\.metal3\.io\/v1alpha1$/m);
  expect(stdout).toMatch(/^Kind:\s+HostClaim$/m);
  expect(stdout).toMatch(/^Events:/m);
}

const README_EXPECTATIONS: Record<string, Expectation> = {
  'make dev    # the whole product locally, until Ctrl-C': {
    notRun: 'the test starts the same environment as `cli.ts dev` (startDevEnvironment with baremetal-operator, createSampleInventory)',
  },
  'make test   # every check and test: lint, type check, unit, integration (CI runs this)': {
    notRun: 'this test runs inside `make test`',
  },
  'export PATH="$(test/controlplane/build/build.sh):$PATH"   # the kubectl built with the control plane (cached)': {
    check: async (result, shell) => {
      succeeded(result);
      const found = await shell.run('command -v kubectl');
      expect(found.stdout.trim()).toBe(path.join(binDir, 'kubectl'));
    },
  },
  'export KUBECONFIG=.dev/admin.kubeconfig': {
    check: async (result, shell) => {
      succeeded(result);
      expect(await realpathIn(shell.cwd, shell.variable('KUBECONFIG') ?? '')).toBe(await fs.realpath(env.adminKubeconfigPath));
    },
  },
  'kubectl get apiservice v1alpha1.tenancy.metal3.io          # Available=True': {
    check: (result) => {
      succeeded(result);
      const [header, row] = table(result.stdout);
      expect(header).toEqual(['NAME', 'SERVICE', 'AVAILABLE', 'AGE']);
      expect(row?.slice(0, 3)).toEqual(['v1alpha1.tenancy.metal3.io', 'hostclaim-system/hostclaim-apiserver', 'True']);
    },
  },
  'kubectl --kubeconfig .dev/tenant-a.kubeconfig get --raw /apis/tenancy.metal3.io/v1alpha1': {
    check: (result) => {
      succeeded(result);
      const list = JSON.parse(result.stdout) as { kind: string; groupVersion: string; resources: { name: string }[] };
      expect(list.kind).toBe('APIResourceList');
      expect(list.groupVersion).toBe('tenancy.metal3.io/v1alpha1');
      expect(list.resources.map((resource) => resource.name).sort()).toEqual(['hardwaredata', 'hostclaims', 'hostclaims/status']);
    },
  },
  'kubectl --kubeconfig .dev/tenant-b.kubeconfig -n tenant-a get hostclaims   # 403': {
    check: (result) => {
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(TENANT_B_FORBIDDEN);
      expect(result.code).toBe(1);
    },
  },
  'export KUBECONFIG=.dev/tenant-a.kubeconfig': {
    check: async (result, shell) => {
      succeeded(result);
      expect(await realpathIn(shell.cwd, shell.variable('KUBECONFIG') ?? '')).toBe(await fs.realpath(env.tenantKubeconfigPaths['tenant-a']));
    },
  },
  [[
    "cat <<'YAML' | kubectl -n tenant-a apply -f -",
    'apiVersion: tenancy.metal3.io/v1alpha1',
    'kind: HostClaim',
    'metadata: {name: worker-0}',
    'spec:',
    '  poweredOn: true',
    '  image: {url: "http://images.example/ubuntu.qcow2", checksum: "http://images.example/ubuntu.qcow2.sha256"}',
    '  hostSelector: {matchLabels: {role: worker}}',
    'YAML',
  ].join('\n')]: {
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('hostclaim.tenancy.metal3.io/worker-0 created\n');
    },
  },
  'kubectl -n tenant-a get hostclaims -w        # HOST, READY, POWERED; Ctrl-C once READY is True': {
    until: (stdout) => readyRow('worker-0').test(stdout),
    check: (result) => {
      succeeded(result);
      const [header, first] = table(result.stdout);
      expect(header).toEqual(HOSTCLAIM_HEADER);
      expect(first?.[0]).toBe('worker-0');
      expect(result.stdout).toMatch(readyRow('worker-0'));
    },
  },
  'kubectl -n tenant-a describe hostclaim worker-0   # conditions and Events': {
    check: (result) => {
      succeeded(result);
      expectDescribedClaim(result.stdout, 'worker-0');
      expect(result.stdout).toMatch(/^\s+Type:\s+Ready$/m);
    },
  },
  'kubectl -n tenant-a get hardwaredata         # the hosts tenant-a may claim, and the one it holds': {
    check: (result) => {
      succeeded(result);
      expectHardwareDataTable(result.stdout);
    },
  },
  'kubectl explain hostclaim.spec.hostSelector': {
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toMatch(/^GROUP:\s+tenancy\.metal3\.io\nKIND:\s+HostClaim\nVERSION:\s+v1alpha1\n\nFIELD: hostSelector <HostSelector>\n/);
    },
  },
};

const TENANTS_EXPECTATIONS: Record<string, Expectation> = {
  'kubectl get hardwaredata                      # hosts you may claim, and the ones you hold': {
    check: (result) => {
      succeeded(result);
      expectHardwareDataTable(result.stdout);
    },
  },
  'kubectl create secret generic web-userdata --from-file=userData=cloud-init.yaml': {
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('secret/web-userdata created\n');
    },
  },
  [[
    "kubectl apply -f - <<'YAML'",
    'apiVersion: tenancy.metal3.io/v1alpha1',
    'kind: HostClaim',
    'metadata: {name: web}',
    'spec:',
    '  poweredOn: true',
    '  image: {url: "http://images.example/ubuntu.qcow2", checksum: "http://images.example/ubuntu.qcow2.sha256", format: qcow2}',
    '  userData: {name: web-userdata}',
    '  hostSelector:',
    '    matchLabels: {role: worker}',
    '    matchExpressions: [{key: tier, operator: in, values: [gold, silver]}]',
    'YAML',
  ].join('\n')]: {
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('hostclaim.tenancy.metal3.io/web created\n');
    },
  },
  'kubectl get hostclaims -w                     # HOST, READY, POWERED; Ctrl-C to stop watching': {
    until: (stdout) => readyRow('web').test(stdout),
    check: (result) => {
      succeeded(result);
      const [header, ...rows] = table(result.stdout);
      expect(header).toEqual(HOSTCLAIM_HEADER);
      // The initial list (sorted by name), then the watch's updates.
      expect(rows.slice(0, 2).map((row) => row[0])).toEqual(['web', 'worker-0']);
      expect(result.stdout).toMatch(readyRow('web'));
    },
  },
  'kubectl describe hostclaim web                # conditions and Events': {
    check: (result) => {
      succeeded(result);
      expectDescribedClaim(result.stdout, 'web');
      expect(result.stdout).toMatch(/^\s+User Data:\n\s+Name:\s+web-userdata$/m);
    },
  },
  // The dev overlay applies the cluster-wide-reads grant: tenant-a sees its own namespace's objects, nothing else.
  'kubectl get hostclaims -A                     # your claims, in every namespace you may read them': {
    check: (result) => {
      succeeded(result);
      const [header, ...rows] = table(result.stdout);
      expect(header).toEqual(['NAMESPACE', ...HOSTCLAIM_HEADER]);
      expect(rows.map((row) => row.slice(0, 2))).toEqual([
        ['tenant-a', 'web'],
        ['tenant-a', 'worker-0'],
      ]);
    },
  },
  'kubectl get hardwaredata -A': {
    check: (result) => {
      succeeded(result);
      const [header, ...rows] = table(result.stdout);
      expect(header).toEqual(['NAMESPACE', ...HARDWAREDATA_HEADER]);
      expect(rows.map((row) => row.slice(0, 2))).toEqual([
        ['tenant-a', 'infra.host-0'],
        ['tenant-a', 'infra.host-1'],
        ['tenant-a', 'infra.host-2'],
      ]);
    },
  },
  'kubectl get hostclaims -A -w                  # follows your access too': {
    until: (stdout) => /^tenant-a\s+worker-0\s/m.test(stdout),
    check: (result) => {
      succeeded(result);
      const [header, ...rows] = table(result.stdout);
      expect(header).toEqual(['NAMESPACE', ...HOSTCLAIM_HEADER]);
      expect(rows.slice(0, 2).map((row) => row.slice(0, 2))).toEqual([
        ['tenant-a', 'web'],
        ['tenant-a', 'worker-0'],
      ]);
      expect(rows.every((row) => row[0] === 'tenant-a')).toBe(true);
    },
  },
  "kubectl get hardwaredata infra.host-2 -o jsonpath='{.metadata.annotations.tenancy\\.metal3\\.io/boot-mac-address}'": {
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('52:54:00:0a:02:10');
    },
  },
};

interface DocumentUnderTest {
  file: string;
  commands: DocCommand[];
  expectations: Record<string, Expectation>;
  /** The reader's environment before the first command. */
  env: () => NodeJS.ProcessEnv;
}

function readerEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, KUBECACHEDIR: kubeCacheDir, ...extra };
  if (!('KUBECONFIG' in extra)) delete base['KUBECONFIG'];
  return base;
}

const DOCUMENTS: DocumentUnderTest[] = [
  { file: 'README.md', commands: readDocCommands(repoPath('README.md')), expectations: README_EXPECTATIONS, env: () => readerEnv({}) },
  {
    // A tenant with the kubectl of the control plane and a kubeconfig for its namespace.
    file: 'docs/tenants.md',
    commands: readDocCommands(repoPath('docs', 'tenants.md')),
    expectations: TENANTS_EXPECTATIONS,
    env: () => readerEnv({ PATH: `${binDir}:${process.env['PATH'] ?? ''}`, KUBECONFIG: env.tenantKubeconfigPaths['tenant-a'] }),
  },
];

describe('the documentation', () => {
  it('has an expectation here for every command of README.md and docs/tenants.md, and none for a command they lost', () => {
    for (const document of DOCUMENTS) {
      expect(document.commands.map((command) => command.text), document.file).toEqual(Object.keys(document.expectations));
    }
  });

  for (const document of DOCUMENTS) {
    describe(`${document.file}, run as written`, () => {
      let shell: DocShell;
      beforeAll(() => {
        shell = new DocShell(checkout, document.env());
      });
      for (const command of document.commands) {
        const expectation = document.expectations[command.text];
        const title = `${path.relative(repoPath(), command.file)}:${command.line} ${command.text.split('\n')[0] ?? ''}`;
        // Listed above with the reason; the completeness test covers them.
        if (expectation?.notRun !== undefined) continue;
        it(title, async () => {
          if (expectation?.check === undefined) throw new Error(`no expectation for ${command.file}:${command.line}`);
          const result = await shell.run(command.text, expectation.until === undefined ? {} : { until: expectation.until, timeoutMs: WATCH_TIMEOUT_MS });
          await expectation.check(result, shell);
        }, WATCH_TIMEOUT_MS + 30_000);
      }
    });
  }
});

// --- every verb by the plain names -----------------------------------------------------

type Who = 'tenant-a' | 'admin';

interface KubectlRun {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(who: Who, args: string[], options: { stdin?: string; editor?: string } = {}): Promise<KubectlRun> {
  const kubeconfig = who === 'admin' ? env.adminKubeconfigPath : env.tenantKubeconfigPaths['tenant-a'];
  return env.controlPlane.kubectl(['-n', 'tenant-a', ...args], {
    kubeconfig,
    env: { KUBECACHEDIR: kubeCacheDir, ...(options.editor === undefined ? {} : { EDITOR: options.editor }) },
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  });
}

async function ok(who: Who, args: string[], options: { stdin?: string; editor?: string } = {}): Promise<string> {
  const result = await kubectl(who, args, options);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} as ${who} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

const RESPONSE_LOG = /"Response" verb="([A-Z]+)" url="([^"]+)" status="([^"]*)"/g;

/**
 * Runs kubectl with -v=6 and returns its output and the requests it made for
 * HostClaims or HardwareData (any group) as "VERB path?query STATUS".
 */
async function traced(who: Who, args: string[], options: { editor?: string } = {}): Promise<KubectlRun & { requests: string[] }> {
  const result = await kubectl(who, [...args, '-v=6'], options);
  const requests = [...result.stderr.matchAll(RESPONSE_LOG)]
    .map(([, verb = '', url = '', status = '']) => {
      const { pathname, search } = new URL(url);
      return `${verb} ${pathname}${search} ${status}`;
    })
    .filter((request) => /\/(hostclaims|hardwaredata)\b/.test(request));
  return { ...result, requests };
}

const NAMESPACE_PATH = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a';

function claimManifest(name: string): string {
  // Selects no host, so the claim stays unbound and deletes at once.
  return JSON.stringify({
    apiVersion: 'tenancy.metal3.io/v1alpha1',
    kind: 'HostClaim',
    metadata: { name },
    spec: { poweredOn: false, hostSelector: { matchLabels: { role: 'no-such-role' } } },
  });
}

describe.each(['tenant-a', 'admin'] as const)('plain names as %s reach tenancy.metal3.io', (who) => {
  const name = `names-${who}`;

  it('get, describe, explain, wait, edit and delete by hostclaims, hostclaim, hc, HostClaim, hardwaredata and metal3', async () => {
    expect(await ok(who, ['create', '-f', '-'], { stdin: claimManifest(name) })).toBe(`hostclaim.tenancy.metal3.io/${name} created\n`);

    const list = await traced(who, ['get', 'hostclaims', '-o', 'name']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')).toContain(`hostclaim.tenancy.metal3.io/${name}`);
    expect(list.requests).toEqual([`GET ${NAMESPACE_PATH}/hostclaims?limit=500 200 OK`]);

    for (const resource of ['hostclaim', 'hc', 'HostClaim']) {
      const got = await traced(who, ['get', resource, name, '-o', 'name']);
      expect(got.stdout, `get ${resource}: ${got.stderr}`).toBe(`hostclaim.tenancy.metal3.io/${name}\n`);
      expect(got.requests).toEqual([`GET ${NAMESPACE_PATH}/hostclaims/${name} 200 OK`]);
    }

    const hardware = await traced(who, ['get', 'hardwaredata', '-o', 'name']);
    expect(hardware.stdout, hardware.stderr).toBe(['host-0', 'host-1', 'host-2'].map((host) => `hardwaredata.tenancy.metal3.io/infra.${host}\n`).join(''));
    expect(hardware.requests).toEqual([`GET ${NAMESPACE_PATH}/hardwaredata?limit=500 200 OK`]);

    const category = await traced(who, ['get', 'metal3', '-o', 'name']);
    expect(category.code, category.stderr).toBe(0);
    expect(category.requests.sort()).toEqual([`GET ${NAMESPACE_PATH}/hardwaredata?limit=500 200 OK`, `GET ${NAMESPACE_PATH}/hostclaims?limit=500 200 OK`]);
    expect(category.stdout.split('\n')).toEqual(expect.arrayContaining([`hostclaim.tenancy.metal3.io/${name}`, 'hardwaredata.tenancy.metal3.io/infra.host-0']));

    const described = await traced(who, ['describe', 'hostclaim', name]);
    expect(described.stdout, described.stderr).toMatch(new RegExp(`^Name:\\s+${name}\\nNamespace:\\s+tenant-a\\n`));
    expect(described.stdout).toMatch(/^API Version:\s+tenancy\.metal3\.io\/v1alpha1$/m);
    // Once to find the object, once by the describer.
    expect(described.requests).toEqual([`GET ${NAMESPACE_PATH}/hostclaims/${name} 200 OK`, `GET ${NAMESPACE_PATH}/hostclaims/${name} 200 OK`]);

    for (const [resource, kind] of [['hostclaim', 'HostClaim'], ['hostclaims', 'HostClaim'], ['hardwaredata', 'HardwareData']] as const) {
      const explained = await ok(who, ['explain', resource]);
      expect(explained, `explain ${resource}`).toMatch(new RegExp(`^GROUP:\\s+tenancy\\.metal3\\.io\\nKIND:\\s+${kind}\\nVERSION:\\s+v1alpha1\\n`));
    }

    // The binder marks a claim no host matches: Associated=False.
    const waited = await traced(who, ['wait', `hostclaim/${name}`, '--for=condition=Associated=False', '--timeout=90s']);
    expect(waited.stdout, waited.stderr).toBe(`hostclaim.tenancy.metal3.io/${name} condition met\n`);
    expect(waited.requests.length).toBeGreaterThan(0);
    expect(waited.requests.every((request) => request.includes(`${NAMESPACE_PATH}/hostclaims`)), waited.requests.join('\n')).toBe(true);

    const editor = path.join(checkout, 'power-on-editor.sh');
    await fs.writeFile(editor, "#!/bin/sh\nsed -i 's/poweredOn: false/poweredOn: true/' \"$1\"\n", { mode: 0o755 });
    const edited = await traced(who, ['edit', 'hostclaim', name], { editor });
    expect(edited.stdout, edited.stderr).toBe(`hostclaim.tenancy.metal3.io/${name} edited\n`);
    expect(edited.requests).toEqual([`GET ${NAMESPACE_PATH}/hostclaims/${name} 200 OK`, `PATCH ${NAMESPACE_PATH}/hostclaims/${name}?fieldManager=kubectl-edit&fieldValidation=Strict 200 OK`]);
    expect(await ok(who, ['get', 'hostclaims.tenancy.metal3.io', name, '-o', 'jsonpath={.spec.poweredOn}'])).toBe('true');

    const deleted = await traced(who, ['delete', 'hostclaim', name]);
    expect(deleted.stdout, deleted.stderr).toBe(`hostclaim.tenancy.metal3.io "${name}" deleted from tenant-a namespace\n`);
    // The delete, then --wait's check that it is gone.
    expect(deleted.requests).toEqual([`DELETE ${NAMESPACE_PATH}/hostclaims/${name} 200 OK`, `GET ${NAMESPACE_PATH}/hostclaims/${name} 404 Not Found`]);
    const gone = await kubectl(who, ['get', 'hostclaim', name]);
    expect(gone.stderr).toBe(`Error from server (NotFound): hostclaims.tenancy.metal3.io "${name}" not found\n`);
    expect(gone.code).toBe(1);
  });
});

describe('baremetal-operator\'s own HostClaim and HardwareData', () => {
  it('stay reachable by their fully qualified names and hd (for the admin), and are forbidden to tenants', async () => {
    expect((await kubectl('admin', ['get', 'hostclaims.metal3.io'])).stderr).toBe('No resources found in tenant-a namespace.\n');
    const hd = await traced('admin', ['get', 'hd', '-A', '-o', 'name']);
    expect(hd.requests).toEqual(['GET /apis/metal3.io/v1alpha1/hardwaredata?limit=500 200 OK']);
    expect(hd.stdout).toBe(['host-0', 'host-1', 'host-2'].map((host) => `hardwaredata.metal3.io/${host}\n`).join(''));
    const forbidden = await kubectl('tenant-a', ['get', 'hostclaims.metal3.io']);
    expect(forbidden.stderr).toBe(
      'Error from server (Forbidden): hostclaims.metal3.io is forbidden: User "tenant-a" cannot list resource "hostclaims" in API group "metal3.io" in the namespace "tenant-a"\n',
    );
  });

  it('rank below tenancy.metal3.io in discovery, which is what kubectl resolves names by', async () => {
    const groups = JSON.parse(await ok('admin', ['get', '--raw', '/apis'])) as { groups: { name: string }[] };
    const names = groups.groups.map((group) => group.name);
    expect(names.indexOf('tenancy.metal3.io')).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('tenancy.metal3.io')).toBeLessThan(names.indexOf('metal3.io'));
    const resources = await ok('admin', ['api-resources', '--no-headers', '-o', 'name']);
    const claimNames = resources.split('\n').filter((line) => /^(hostclaims|hardwaredata)\./.test(line));
    expect(claimNames.sort()).toEqual(['hardwaredata.metal3.io', 'hardwaredata.tenancy.metal3.io', 'hostclaims.metal3.io', 'hostclaims.tenancy.metal3.io']);
  });
});
