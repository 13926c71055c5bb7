import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { kubeconfigFileRereadMs, loadKubeConfig } from '../../../src/backing/kubeconfig.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function kubeconfig(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>): Promise<string> {
  const file = join(dir, name);
  // YAML, as kubectl writes it (JSON is YAML too, but the loader must read both).
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'current-context: ctx',
    'contexts:',
    '  - name: other',
    '    context: {cluster: wrong, user: wrong}',
    '  - name: ctx',
    '    context: {cluster: c, user: u}',
    'clusters:',
    '  - name: wrong',
    '    cluster: {server: "https://192.0.2.99:6443"}',
    `  - name: c`,
    `    cluster: ${JSON.stringify(cluster)}`,
    'users:',
    `  - name: u`,
    `    user: ${JSON.stringify(user)}`,
  ].join('\n');
  await writeFile(file, yaml);
  return file;
}


afterEach(() => {
  vi.restoreAllMocks();
});

describe('loadKubeConfig', () => {
  it('reads the current context: server, inline CA, client certificate and key, and token', async () => {
    const file = await kubeconfig(
      'inline',
      { server: 'https://127.0.0.1:6443', 'certificate-authority-data': Buffer.from('CA PEM').toString('base64') },
      { 'client-certificate-data': Buffer.from('CERT PEM').toString('base64'), 'client-key-data': Buffer.from('KEY PEM').toString('base64'), token: 'abc' },
    );
    const source = await loadKubeConfig(file);
    expect(source.server.href).toBe('https://127.0.0.1:6443/');
    expect(await source.credentials()).toEqual({
      ca: Buffer.from('CA PEM'),
      cert: Buffer.from('CERT PEM'),
      key: Buffer.from('KEY PEM'),
      servername: undefined,
      rejectUnauthorized: true,
      headers: { Authorization: 'Bearer abc' },
    });
  });

  it('reads files relative to the kubeconfig again once they are older than the reread interval (rotation), and honours insecure-skip-tls-verify and tls-server-name', async () => {
    let now = 1_000_000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    await writeFile(join(dir, 'ca.crt'), 'CA 1');
    await writeFile(join(dir, 'token'), 'token-1\n');
    const file = await kubeconfig(
      'files',
      { server: 'https://[::1]:6443', 'certificate-authority': 'ca.crt', 'insecure-skip-tls-verify': true, 'tls-server-name': 'kubernetes.default' },
      { tokenFile: join(dir, 'token') },
    );
    const source = await loadKubeConfig(file);
    expect(await source.credentials()).toEqual({
      ca: Buffer.from('CA 1'),
      cert: undefined,
      key: undefined,
      servername: 'kubernetes.default',
      rejectUnauthorized: false,
      headers: { Authorization: 'Bearer token-1' },
    });
    const first = await source.credentials();
    await writeFile(join(dir, 'ca.crt'), 'CA 2');
    await writeFile(join(dir, 'token'), 'token-2\n');
    // Within the interval: the same bytes, not read again (a request costs no file reads).
    now += kubeconfigFileRereadMs - 1;
    const cached = await source.credentials();
    expect([cached.ca, cached.headers]).toEqual([Buffer.from('CA 1'), { Authorization: 'Bearer token-1' }]);
    expect(cached.ca).toBe(first.ca);
    now += 1;
    const rotated = await source.credentials();
    expect([rotated.ca, rotated.headers]).toEqual([Buffer.from('CA 2'), { Authorization: 'Bearer token-2' }]);
  });

  it('hands a kubeconfig using an exec plugin to client-node, which runs it', async () => {
    const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec' } });
    const file = await kubeconfig(
      'exec',
      { server: 'https://127.0.0.1:6443', 'certificate-authority-data': Buffer.from('CA PEM').toString('base64') },
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', `echo '${credential}'`], interactiveMode: 'Never' } },
    );
    const source = await loadKubeConfig(file);
    expect(source.server.href).toBe('https://127.0.0.1:6443/');
    const credentials = await source.credentials();
    expect([credentials.ca, credentials.headers['Authorization'], credentials.rejectUnauthorized]).toEqual([Buffer.from('CA PEM'), 'Bearer from-exec', true]);
  });

  it('refuses a kubeconfig whose current context names no cluster', async () => {
    const file = join(dir, 'empty');
    await writeFile(file, 'apiVersion: v1\nkind: Config\n');
    await expect(loadKubeConfig(file)).rejects.toThrow('kubeconfig has no current cluster');
  });

  it('without a kubeconfig, needs the in-cluster environment', async () => {
    const saved = { host: process.env['KUBERNETES_SERVICE_HOST'], port: process.env['KUBERNETES_SERVICE_PORT'] };
    delete process.env['KUBERNETES_SERVICE_HOST'];
    try {
      await expect(loadKubeConfig(undefined)).rejects.toThrow(
        'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
      );
    } finally {
      if (saved.host !== undefined) process.env['KUBERNETES_SERVICE_HOST'] = saved.host;
    }
  });
});
