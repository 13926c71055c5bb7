import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubernetesVersion } from '../controlplane/binaries.js';
import { startControlPlane, type ControlPlane } from '../controlplane/controlplane.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { repoPath } from '../controlplane/paths.js';
import { isProcessGone } from '../controlplane/processes.js';
import { getAPIServiceAvailableCondition } from '../controlplane/register.js';
import { delay, pollUntil } from '../controlplane/wait.js';

const binDir = inject('controlPlaneBinDir');
const CONTROLLER_TIMEOUT_MS = 60_000;
/** The built server; override to run against another build. */
const serverEntry = path.resolve(repoPath(), process.env.HOSTCLAIM_SERVER_ENTRY ?? 'dist/src/main.js');

interface ObjectMeta {
  metadata: { name: string; uid: string };
}

describe('real control plane', () => {
  let cp: ControlPlane;
  let scratch: string;

  beforeAll(async () => {
    cp = await startControlPlane({ binDir });
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'controlplane-test-'));
  });

  afterAll(async () => {
    await cp.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  async function waitUntilNotFound(apiPath: string, description: string): Promise<void> {
    await pollUntil(
      description,
      async () => ((await cp.request('GET', apiPath)).status === 404 ? true : undefined),
      { timeoutMs: CONTROLLER_TIMEOUT_MS, describeFailure: () => `still present: ${apiPath}` },
    );
  }

  async function createNamespace(name: string): Promise<void> {
    await cp.requestJson('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }

  it('serves the Kubernetes release under test (build/kubernetes-versions, or HOSTCLAIM_KUBERNETES_VERSION)', async () => {
    const version = await cp.requestJson<{ gitVersion: string }>('GET', '/version');
    expect(version.gitVersion).toBe(await kubernetesVersion());
  });

  it('is ready', async () => {
    const readyz = await cp.request('GET', '/readyz');
    expect(readyz).toEqual({ status: 200, body: 'ok' });
  });

  it('publishes the front-proxy settings aggregated servers read', async () => {
    const configMap = await cp.requestJson<{ data: Record<string, string> }>(
      'GET',
      '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication',
    );
    const data = configMap.data;
    expect(data['requestheader-client-ca-file']?.trim()).toBe(cp.frontProxyCa.certPem.trim());
    expect(data['client-ca-file']?.trim()).toBe(cp.clientCa.certPem.trim());
    expect(JSON.parse(data['requestheader-allowed-names']!)).toEqual(['front-proxy-client']);
    expect(JSON.parse(data['requestheader-username-headers']!)).toEqual(['X-Remote-User']);
    expect(JSON.parse(data['requestheader-uid-headers']!)).toEqual(['X-Remote-Uid']);
    expect(JSON.parse(data['requestheader-group-headers']!)).toEqual(['X-Remote-Group']);
    expect(JSON.parse(data['requestheader-extra-headers-prefix']!)).toEqual(['X-Remote-Extra-']);
  });

  it('creates the default ServiceAccount and kube-root-ca.crt in new namespaces', async () => {
    await createNamespace('sa-check');
    await pollUntil(
      'the default ServiceAccount',
      async () => ((await cp.request('GET', '/api/v1/namespaces/sa-check/serviceaccounts/default')).status === 200 ? true : undefined),
      { timeoutMs: CONTROLLER_TIMEOUT_MS },
    );
    const rootCa = await pollUntil(
      'the kube-root-ca.crt ConfigMap',
      async () => {
        const response = await cp.request('GET', '/api/v1/namespaces/sa-check/configmaps/kube-root-ca.crt');
        return response.status === 200 ? (JSON.parse(response.body) as { data: { 'ca.crt': string } }) : undefined;
      },
      { timeoutMs: CONTROLLER_TIMEOUT_MS },
    );
    expect(rootCa.data['ca.crt'].trim()).toBe(cp.servingCa.certPem.trim());
  });

  it('finalizes namespace deletion', async () => {
    await createNamespace('doomed');
    await cp.requestJson('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'content' }, data: { a: 'b' } });
    await cp.requestJson('DELETE', '/api/v1/namespaces/doomed');
    await waitUntilNotFound('/api/v1/namespaces/doomed', 'namespace doomed to be deleted');
  });

  it('garbage-collects dependents of a deleted owner', async () => {
    const configMaps = '/api/v1/namespaces/default/configmaps';
    const owner = await cp.requestJson<ObjectMeta>('POST', configMaps, { metadata: { name: 'owner' } });
    await cp.requestJson('POST', configMaps, {
      metadata: {
        name: 'dependent',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }],
      },
    });
    await cp.requestJson('DELETE', `${configMaps}/owner`);
    await waitUntilNotFound(`${configMaps}/dependent`, 'the dependent ConfigMap to be collected');
  });

  it('applies YAML server-side and aggregates labelled ClusterRoles into admin/edit/view', async () => {
    await cp.applyFile(repoPath('deploy', 'base', 'aggregated-roles.yaml'));
    for (const role of ['admin', 'edit', 'view']) {
      await pollUntil(
        `ClusterRole ${role} to include tenancy.metal3.io rules`,
        async () => {
          const clusterRole = await cp.requestJson<{ rules?: { apiGroups?: string[] }[] }>(
            'GET',
            `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`,
          );
          return clusterRole.rules?.some((rule) => rule.apiGroups?.includes('tenancy.metal3.io')) ? true : undefined;
        },
        { timeoutMs: CONTROLLER_TIMEOUT_MS },
      );
    }
    const canCreate = await cp.kubectl(['auth', 'can-i', 'create', 'hostclaims.tenancy.metal3.io', '-n', 'default', '--as', 'someone', '--as-group', 'system:authenticated']);
    expect(canCreate.stdout.trim()).toBe('no');
  });

  it('writes client-certificate kubeconfigs for arbitrary users and groups', async () => {
    const kubeconfig = await cp.userKubeconfig('tenant-a', ['team-a', 'team-b'], path.join(scratch, 'tenant-a.kubeconfig'), {
      namespace: 'default',
    });
    const whoami = await cp.kubectl(['auth', 'whoami', '-o', 'json'], { kubeconfig });
    expect(whoami.code).toBe(0);
    const user = (JSON.parse(whoami.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    expect(user.username).toBe('tenant-a');
    expect(user.groups).toEqual(['team-a', 'team-b', 'system:authenticated']);

    const forbidden = await cp.kubectl(['get', 'secrets'], { kubeconfig });
    expect(forbidden.code).not.toBe(0);
    expect(forbidden.stderr).toContain('User "tenant-a" cannot list resource "secrets"');
  });

  it('writes ServiceAccount token kubeconfigs minted with TokenRequest', async () => {
    const kubeconfig = await cp.serviceAccountKubeconfig('default', 'robot', path.join(scratch, 'robot.kubeconfig'), 600);
    const whoami = await cp.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { kubeconfig });
    expect(whoami).toMatchObject({ code: 0, stdout: 'system:serviceaccount:default:robot' });
    // Idempotent: the ServiceAccount already exists.
    await cp.serviceAccountKubeconfig('default', 'robot', path.join(scratch, 'robot-2.kubeconfig'), 600);
  });

  it('stop() terminates every process and removes the work dir', async () => {
    const pids = cp.processes.map((p) => p.pid);
    expect(cp.processes.map((p) => p.name)).toEqual(['etcd', 'kube-apiserver', 'kube-controller-manager']);
    expect(pids.every((pid) => !isProcessGone(pid))).toBe(true);

    await cp.stop();

    expect(pids.filter((pid) => !isProcessGone(pid))).toEqual([]);
    expect(fs.existsSync(cp.workDir)).toBe(false);
    await expect(cp.stop()).resolves.toBeUndefined();
  });
});

describe('control plane failures and crashes', () => {
  it('reports a component that fails to start with the end of its log, and stops the rest', async () => {
    const fakeBinDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-controlplane-bin-'));
    try {
      for (const name of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl']) {
        fs.writeFileSync(path.join(fakeBinDir, name), `#!/bin/sh\necho "${name}: cannot open data dir" >&2\nexit 3\n`, { mode: 0o755 });
      }
      const workDir = path.join(fakeBinDir, 'work');
      await expect(startControlPlane({ binDir: fakeBinDir, workDir })).rejects.toThrow(
        /etcd exited \(code 3, signal -\)\n--- last 40 lines of .*etcd\.log ---\netcd: cannot open data dir/,
      );
      expect(fs.existsSync(workDir)).toBe(false);
    } finally {
      fs.rmSync(fakeBinDir, { recursive: true, force: true });
    }
  });

  it('kills the control plane when the process that started it is terminated', async () => {
    const script = [
      `import { startControlPlane } from ${JSON.stringify(repoPath('test', 'controlplane', 'controlplane.ts'))};`,
      `const cp = await startControlPlane({ binDir: ${JSON.stringify(binDir)} });`,
      `console.log(JSON.stringify({ workDir: cp.workDir, pids: cp.processes.map((p) => p.pid) }));`,
      'setInterval(() => undefined, 1000);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      cwd: repoPath(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => {
      child.once('exit', (_code, signal) => {
        resolve(signal);
      });
    });
    const started = await new Promise<{ workDir: string; pids: number[] }>((resolve, reject) => {
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        if (output.includes('\n')) resolve(JSON.parse(output) as { workDir: string; pids: number[] });
      });
      child.once('exit', () => {
        reject(new Error(`child exited before starting the control plane: ${output}`));
      });
    });
    expect(started.pids).toHaveLength(3);

    child.kill('SIGTERM');

    expect(await exited).toBe('SIGTERM');
    await pollUntil('control-plane processes to die', () => Promise.resolve(started.pids.every(isProcessGone) ? true : undefined), {
      timeoutMs: 10_000,
    });
    expect(fs.existsSync(started.workDir)).toBe(false);
  });
});

describe('development environment (needs the built server)', () => {
  let env: DevEnvironment;
  let workDir: string;

  beforeAll(async () => {
    // `make integration` builds the server first; a missing build must fail, never skip.
    if (!fs.existsSync(serverEntry)) throw new Error(`${serverEntry} is missing: run make build`);
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-environment-test-'));
    env = await startDevEnvironment({ workDir, serverEntry, binDir, keepLogs: true });
  });

  afterAll(async () => {
    await env.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('registers the server behind the aggregator', async () => {
    expect(await getAPIServiceAvailableCondition(env.controlPlane)).toMatchObject({ status: 'True', reason: 'Passed' });
    const discovery = await env.controlPlane.requestJson<{ groupVersion: string; resources: { name: string }[] }>(
      'GET',
      '/apis/tenancy.metal3.io/v1alpha1',
    );
    expect(discovery.groupVersion).toBe('tenancy.metal3.io/v1alpha1');
    expect(discovery.resources.map((resource) => resource.name)).toContain('hostclaims');
  });

  it('runs the server as its own ServiceAccount', async () => {
    const whoami = await env.controlPlane.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
      kubeconfig: env.serverKubeconfigPath,
    });
    expect(whoami.stdout).toBe('system:serviceaccount:hostclaim-system:hostclaim-apiserver');
  });

  it('gives each tenant admin rights on HostClaims in its own namespace only', async () => {
    const canI = async (tenant: 'tenant-a' | 'tenant-b', namespace: string): Promise<string> =>
      (
        await env.controlPlane.kubectl(['auth', 'can-i', 'create', 'hostclaims.tenancy.metal3.io', '-n', namespace], {
          kubeconfig: env.tenantKubeconfigPaths[tenant],
        })
      ).stdout.trim();
    expect(await canI('tenant-a', 'tenant-a')).toBe('yes');
    expect(await canI('tenant-a', 'tenant-b')).toBe('no');
    expect(await canI('tenant-b', 'tenant-b')).toBe('yes');
  });

  it('rotates the serving certificate to a new CA without losing availability', async () => {
    const oldCaPem = env.aggregatedServerCaPem;
    const seen = new Set<string>();
    const rotation = { done: false };
    const watch = (async () => {
      while (!rotation.done) {
        seen.add((await getAPIServiceAvailableCondition(env.controlPlane))?.status ?? 'none');
        await delay(50);
      }
    })();
    await env.rotateServingCertificate();
    rotation.done = true;
    await watch;

    expect([...seen]).toEqual(['True']);
    expect(env.aggregatedServerCaPem).not.toBe(oldCaPem);
    expect(fs.readFileSync(env.aggregatedServerCaPath, 'utf8')).toBe(env.aggregatedServerCaPem);
    const discovery = await env.controlPlane.kubectl(['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1']);
    expect(discovery.code).toBe(0);
  });

  it('restarts the server on the same port', async () => {
    const before = env.serverProcess!.pid;
    await env.restartServer();
    expect(env.serverProcess!.pid).not.toBe(before);
    expect(await getAPIServiceAvailableCondition(env.controlPlane)).toMatchObject({ status: 'True' });
  });

  it('stop() keeps only the logs', async () => {
    await env.stop();
    expect(fs.readdirSync(workDir)).toEqual(['logs']);
    expect(fs.readdirSync(path.join(workDir, 'logs')).sort()).toEqual([
      'etcd.log',
      'hostclaim-apiserver.log',
      'kube-apiserver.log',
      'kube-controller-manager.log',
    ]);
  });
});
