/**
 * HostClaim as tenants and controllers use it, only through the real
 * aggregator: the kubectl verbs, status semantics, tenant isolation, the
 * garbage collector and namespace deletion, and a client-node informer.
 * The create/list/get/delete flow follows upstream test/e2e/apimachinery/aggregator.go;
 * selector-transition watching follows test/e2e/apimachinery/watch.go.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig, makeInformer, CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';

const binDir = inject('controlPlaneBinDir');
let env: DevEnvironment;
let scratch: string;

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `hostclaim-${process.pid}`), serverEntry: 'dist/src/main.js', binDir });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'hostclaim-files-'));
});

afterAll(async () => {
  await env.stop();
  await rm(scratch, { recursive: true, force: true });
});

type Tenant = 'tenant-a' | 'tenant-b';

function kubectl(tenant: Tenant | 'admin', args: string[], extraEnv?: Record<string, string>) {
  const kubeconfig = tenant === 'admin' ? env.adminKubeconfigPath : env.tenantKubeconfigPaths[tenant];
  return env.controlPlane.kubectl(args, { kubeconfig, ...(extraEnv === undefined ? {} : { env: extraEnv }) });
}

async function ok(tenant: Tenant | 'admin', args: string[], extraEnv?: Record<string, string>): Promise<string> {
  const result = await kubectl(tenant, args, extraEnv);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

function manifest(name: string, extra = ''): string {
  return `apiVersion: tenancy.metal3.io/v1alpha1
kind: HostClaim
metadata:
  name: ${name}
  labels: {app: web}
spec:
  poweredOn: true
  image: {url: "http://images.example/ubuntu.qcow2", checksum: "http://images.example/ubuntu.qcow2.sha256"}
  hostSelector: {matchLabels: {role: worker}}
${extra}`;
}

async function file(name: string, text: string): Promise<string> {
  const target = path.join(scratch, name);
  await writeFile(target, text);
  return target;
}

describe('the aggregator flow (create 201, list, get, delete, list)', () => {
  it('works with raw requests', async () => {
    const body = JSON.stringify({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'flow' }, spec: { poweredOn: false } });
    const created = JSON.parse(
      await ok('tenant-a', ['create', '--raw', '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims', '-f', await file('flow.json', body)]),
    ) as { metadata: { uid: string; generation: number; resourceVersion: string; namespace: string } };
    expect(created.metadata).toMatchObject({ generation: 1, namespace: 'tenant-a' });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    const list = JSON.parse(await ok('tenant-a', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims'])) as {
      kind: string;
      items: { metadata: { name: string } }[];
    };
    expect(list.kind).toBe('HostClaimList');
    expect(list.items.map((i) => i.metadata.name)).toContain('flow');
    // As kube-apiserver does for a custom resource deleted at once: a Success Status naming it, with its uid.
    const deleted = JSON.parse(await ok('tenant-a', ['delete', '--raw', '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims/flow'])) as unknown;
    expect(deleted).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'flow', group: 'tenancy.metal3.io', kind: 'hostclaims', uid: created.metadata.uid },
    });
    const after = await kubectl('tenant-a', ['-n', 'tenant-a', 'get', 'hostclaim', 'flow']);
    expect(after.stderr).toContain('hostclaims.tenancy.metal3.io "flow" not found');
  });
});

describe('kubectl', () => {
  it('creates, shows and explains', async () => {
    await ok('tenant-a', ['-n', 'tenant-a', 'apply', '-f', await file('web-0.yaml', manifest('web-0'))]);
    await ok('tenant-a', ['-n', 'tenant-a', 'apply', '-f', await file('web-0.yaml', manifest('web-0'))]);
    expect(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc'])).toMatch(/^NAME\s+HOST\s+READY\s+POWERED\s+AGE\nweb-0\s/);
    expect(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc', '-o', 'wide'])).toContain('http://images.example/ubuntu.qcow2');
    expect(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc', '-o', 'name'])).toBe('hostclaim.tenancy.metal3.io/web-0\n');
    const yaml = await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc', 'web-0', '-o', 'yaml']);
    expect(yaml).toContain('kind: HostClaim');
    expect(yaml).not.toContain('infra.tenancy.metal3.io');
    expect(yaml).not.toContain('hostclaim-system');
    const described = await ok('tenant-a', ['-n', 'tenant-a', 'describe', 'hc', 'web-0']);
    expect(described).toContain('Name:         web-0');
    // kube-aggregator merges an APIService's OpenAPI v3 asynchronously after it turns Available; explain may briefly not find it.
    const explained = await pollUntil('kubectl explain to find the HostClaim schema', async () => {
      const result = await kubectl('tenant-a', ['explain', 'hostclaim.spec.hostSelector']);
      return result.code === 0 ? result.stdout : undefined;
    }, { timeoutMs: 60_000, intervalMs: 1_000 });
    expect(explained).toContain('matchExpressions');
    expect(await ok('tenant-a', ['api-resources', '--api-group=tenancy.metal3.io'])).toMatch(/hostclaims\s+hc\s+tenancy.metal3.io\/v1alpha1\s+true\s+HostClaim/);
  });

  it('labels, annotates, patches and edits', async () => {
    await ok('tenant-a', ['-n', 'tenant-a', 'label', 'hc', 'web-0', 'tier=front']);
    await ok('tenant-a', ['-n', 'tenant-a', 'annotate', 'hc', 'web-0', 'note=hello']);
    await ok('tenant-a', ['-n', 'tenant-a', 'patch', 'hc', 'web-0', '--type=merge', '-p', '{"spec":{"failureDomain":"rack-1"}}']);
    await ok('tenant-a', ['-n', 'tenant-a', 'patch', 'hc', 'web-0', '--type=json', '-p', '[{"op":"replace","path":"/spec/poweredOn","value":false}]']);
    await ok('tenant-a', ['-n', 'tenant-a', 'edit', 'hc', 'web-0'], { EDITOR: 'sed -i s/rack-1/rack-2/' });
    const object = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc', 'web-0', '-o', 'json'])) as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string>; generation: number };
      spec: { failureDomain: string; poweredOn: boolean };
    };
    expect(object.metadata.labels).toEqual({ app: 'web', tier: 'front' });
    expect(object.metadata.annotations['note']).toBe('hello');
    expect(object.spec).toMatchObject({ failureDomain: 'rack-2', poweredOn: false });
    // Three spec changes since creation; label/annotate touched only metadata.
    expect(object.metadata.generation).toBe(4);
  });

  it('rejects strategic merge patch with 415 and a stale resourceVersion with kube conflict wording', async () => {
    const smp = await kubectl('tenant-a', ['-n', 'tenant-a', 'patch', 'hc', 'web-0', '--type=strategic', '-p', '{"spec":{"poweredOn":true}}']);
    expect(smp.code).not.toBe(0);
    expect(smp.stderr).toContain('the body of the request was in an unknown format');
    const stale = await kubectl('tenant-a', ['-n', 'tenant-a', 'patch', 'hc', 'web-0', '--type=merge', '-p', '{"metadata":{"resourceVersion":"1"},"spec":{"poweredOn":true}}']);
    expect(stale.stderr).toContain(
      'Operation cannot be fulfilled on hostclaims.tenancy.metal3.io "web-0": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('applies server-side, with conflicts and force', async () => {
    const config = await file('ssa.yaml', manifest('ssa-0').replace('poweredOn: true', 'poweredOn: true\n  failureDomain: rack-9'));
    expect(await ok('tenant-a', ['-n', 'tenant-a', 'apply', '--server-side', '--field-manager=alice', '-f', config])).toContain('serverside-applied');
    const conflicting = await file('ssa-2.yaml', manifest('ssa-0').replace('poweredOn: true', 'poweredOn: true\n  failureDomain: rack-8'));
    const clash = await kubectl('tenant-a', ['-n', 'tenant-a', 'apply', '--server-side', '--field-manager=bob', '-f', conflicting]);
    expect(clash.code).not.toBe(0);
    expect(clash.stderr).toContain('conflict');
    expect(clash.stderr).not.toContain('HostClaimRecord');
    await ok('tenant-a', ['-n', 'tenant-a', 'apply', '--server-side', '--force-conflicts', '--field-manager=bob', '-f', conflicting]);
    const managers = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc', 'ssa-0', '-o', 'json', '--show-managed-fields'])) as {
      metadata: { managedFields: { manager: string; apiVersion: string }[] };
    };
    expect(managers.metadata.managedFields.map((m) => m.manager)).toContain('bob');
    expect(managers.metadata.managedFields.every((m) => m.apiVersion === 'tenancy.metal3.io/v1alpha1')).toBe(true);
  });

  it('diffs, deletes and waits', async () => {
    const diff = await kubectl('tenant-a', ['-n', 'tenant-a', 'diff', '-f', await file('web-0-changed.yaml', manifest('web-0').replace('ubuntu.qcow2"', 'debian.qcow2"'))]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('debian.qcow2');
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hc', 'ssa-0', '--wait']);
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hc', 'web-0', '--wait=false']);
    await ok('tenant-a', ['-n', 'tenant-a', 'wait', '--for=delete', 'hc/web-0', '--timeout=30s']);
  });

  // kubectl describe finds a resource's Events with a field selector on
  // involvedObject.{name,namespace,kind,uid}: the uid it sends is the one
  // served by get, so that uid must be stable and be the one events record.
  it('describes a claim with its Events, found by the uid the server serves', async () => {
    type Meta = { metadata: { uid: string; name: string } };
    const created = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'create', '-o', 'json', '-f', await file('described.yaml', manifest('described-0'))])) as Meta;
    const uid = created.metadata.uid;
    expect(uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    for (let i = 0; i < 2; i++) {
      const got = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc', 'described-0', '-o', 'json'])) as Meta;
      expect(got.metadata.uid).toBe(uid);
    }
    const listed = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hc', '-o', 'json'])) as { items: Meta[] };
    expect(listed.items.find((item) => item.metadata.name === 'described-0')?.metadata.uid).toBe(uid);

    const message = `described by the test ${process.pid}-${Date.now()}`;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const event = (name: string, reason: string, text: string, involvedUid: string): object => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: 'tenant-a' },
      involvedObject: { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', namespace: 'tenant-a', name: 'described-0', uid: involvedUid },
      reason,
      message: text,
      type: 'Normal',
      source: { component: 'hostclaim-test' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    // The first is about this claim; the second about an earlier claim of the same name (another uid).
    await ok('admin', ['create', '-f', await file('event.json', JSON.stringify(event('described-0.testing', 'Testing', message, uid)))]);
    const staleUid = '00000000-0000-4000-8000-000000000000';
    await ok('admin', ['create', '-f', await file('stale-event.json', JSON.stringify(event('described-0.stale', 'Stale', `${message} (stale)`, staleUid)))]);

    // Tenants list events in their namespace through the built-in admin role.
    expect(await ok('tenant-a', ['auth', 'can-i', 'list', 'events'])).toBe('yes\n');
    const described = await ok('tenant-a', ['describe', 'hostclaims.tenancy.metal3.io', 'described-0']);
    expect(described).toMatch(/^Name:\s+described-0$/m);
    const events = described.slice(described.search(/^Events:/m));
    expect(events, described).toMatch(/^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/);
    expect(events).toMatch(new RegExp(`^\\s+Normal\\s+Testing\\s+\\S+\\s+hostclaim-test\\s+${message}$`, 'm'));
    expect(events).not.toContain('Stale');
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hc', 'described-0', '--wait']);
  });
});

describe('what a tenant reads about its claims', () => {
  interface Event {
    readonly type: string;
    readonly reason: string;
    readonly reportingController?: string;
    readonly reportingInstance?: string;
    readonly source?: { readonly component?: string; readonly host?: string };
  }

  it('names no backing kind, group, storage namespace, record or server host: the Events the binder writes included', async () => {
    const name = 'unbindable';
    await ok('tenant-a', ['-n', 'tenant-a', 'create', '-f', await file('unbindable.yaml', manifest(name))]);
    // No HostDeployPolicy admits tenant-a here: the binder says so with a Warning Event in the tenant's namespace.
    const listEvents = async () => ok('tenant-a', ['-n', 'tenant-a', 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
    const binderEvents = await pollUntil(
      "the binder's Event about the claim",
      async () => {
        const items = (JSON.parse(await listEvents()) as { items: Event[] }).items.filter((e) => e.reportingController !== undefined || e.source?.component === 'hostclaim-binder');
        return items.length > 0 ? items : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(binderEvents.map((e) => [e.type, e.reason])).toContainEqual(['Warning', 'NoAdmittingPolicy']);
    // Which replica acted is infrastructure: the Event names the component, never the server's host.
    for (const event of binderEvents) {
      expect([event.reportingInstance, event.source?.component, event.source?.host ?? '']).toEqual(['hostclaim-binder', 'hostclaim-binder', '']);
    }
    const missing = await kubectl('tenant-a', ['-n', 'tenant-a', 'get', 'hostclaims.tenancy.metal3.io', `${name}-missing`]);
    expect(missing.code).not.toBe(0);
    const readable = [
      await ok('tenant-a', ['-n', 'tenant-a', 'get', 'events', '-o', 'json']),
      await ok('tenant-a', ['-n', 'tenant-a', 'describe', 'hostclaims.tenancy.metal3.io', name]),
      await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hostclaims.tenancy.metal3.io', name, '-o', 'json']),
      missing.stderr,
    ].join('\n');
    expect(readable).toContain('NoAdmittingPolicy');
    for (const backing of ['HostClaimRecord', 'infra.tenancy.metal3.io', 'hostclaim-system', `tenant-a.${name}`]) expect(readable).not.toContain(backing);
    expect(readable).not.toMatch(new RegExp(`\\b${os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`));
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hc', name, '--wait']);
  });
});

describe('validation and status', () => {
  it('rejects reserved metadata and secrets of other namespaces with 422 field causes', async () => {
    const reserved = await kubectl('tenant-a', [
      '-n', 'tenant-a', 'create', '-f',
      await file('reserved.yaml', manifest('reserved').replace('labels: {app: web}', 'labels: {app: web, "infra.tenancy.metal3.io/namespace": tenant-b}')),
    ]);
    expect(reserved.stderr).toContain('metadata.labels[infra.tenancy.metal3.io/namespace]: Forbidden: this prefix is reserved');
    const foreign = await kubectl('tenant-a', [
      '-n', 'tenant-a', 'create', '-f',
      await file('foreign.yaml', manifest('foreign', '  userData: {name: cloud-init, namespace: tenant-b}\n')),
    ]);
    expect(foreign.stderr).toContain('spec.userData.namespace: Invalid value: "tenant-b"');
    expect(await kubectl('tenant-a', ['-n', 'tenant-a', 'get', 'hc', 'reserved', 'foreign'])).toMatchObject({ code: 1 });
  });

  it('ignores status on create and spec on status updates; tenants may not write status', async () => {
    const withStatus = manifest('status-0') + 'status: {poweredOn: true}\n';
    const created = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'create', '-o', 'json', '-f', await file('status.yaml', withStatus)])) as { status?: unknown };
    expect(created.status).toBeUndefined();
    const denied = await kubectl('tenant-a', ['-n', 'tenant-a', 'patch', 'hc', 'status-0', '--subresource=status', '--type=merge', '-p', '{"status":{"poweredOn":true}}']);
    expect(denied.stderr).toContain('User "tenant-a" cannot get resource "hostclaims/status"');
    const patched = JSON.parse(
      await ok('admin', ['-n', 'tenant-a', 'patch', 'hc', 'status-0', '--subresource=status', '--type=merge', '-o', 'json', '-p', '{"status":{"poweredOn":true},"spec":{"poweredOn":false}}']),
    ) as { status: { poweredOn: boolean }; spec: { poweredOn: boolean }; metadata: { generation: number } };
    expect(patched.status.poweredOn).toBe(true);
    expect(patched.spec.poweredOn).toBe(true);
    expect(patched.metadata.generation).toBe(1);
  });

  it('applies status server-side for those who may write it (the server patches the record under its own RBAC)', async () => {
    await ok('admin', ['-n', 'tenant-a', 'create', '-f', await file('status-apply.yaml', manifest('status-apply'))]);
    const configuration = await file('status-apply-config.yaml', 'apiVersion: tenancy.metal3.io/v1alpha1\nkind: HostClaim\nmetadata: {name: status-apply}\nstatus: {poweredOn: true}\n');
    const applied = JSON.parse(
      await ok('admin', ['-n', 'tenant-a', 'apply', '--server-side', '--subresource=status', '--field-manager=status-writer', '--show-managed-fields', '-o', 'json', '-f', configuration]),
    ) as { status: { poweredOn: boolean }; metadata: { managedFields: { manager: string; subresource?: string }[] } };
    expect(applied.status.poweredOn).toBe(true);
    expect(applied.metadata.managedFields).toContainEqual(expect.objectContaining({ manager: 'status-writer', subresource: 'status' }));
  });
});

describe('tenant isolation', () => {
  beforeAll(async () => {
    await ok('tenant-a', ['-n', 'tenant-a', 'apply', '-f', await file('secret-claim.yaml', manifest('private'))]);
  });

  it('denies tenant-b every path into tenant-a', async () => {
    for (const args of [
      ['get', 'hc', 'private'],
      ['get', 'hc'],
      ['get', 'hc', '--watch', '--request-timeout=2s'],
      ['patch', 'hc', 'private', '--type=merge', '-p', '{"spec":{"poweredOn":false}}'],
      ['delete', 'hc', 'private'],
      ['delete', 'hc', '--all'],
    ]) {
      const result = await kubectl('tenant-b', ['-n', 'tenant-a', ...args]);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toContain('is forbidden: User "tenant-b"');
    }
  });

  it('never shows tenant-a objects in tenant-b lists, whatever the selectors or continue token', async () => {
    const viaFieldSelector = await ok('tenant-b', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-b/hostclaims?fieldSelector=metadata.namespace%3Dtenant-a']);
    expect(JSON.parse(viaFieldSelector)).toMatchObject({ items: [] });
    const pageA = JSON.parse(await ok('tenant-a', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims?limit=1'])) as {
      metadata: { continue?: string };
    };
    if (pageA.metadata.continue !== undefined) {
      const forged = await kubectl('tenant-b', ['get', '--raw', `/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-b/hostclaims?limit=1&continue=${encodeURIComponent(pageA.metadata.continue)}`]);
      expect(forged.stdout).not.toContain('"namespace":"tenant-a"');
    }
    const reservedSelector = await kubectl('tenant-b', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-b/hostclaims?labelSelector=infra.tenancy.metal3.io%2Fnamespace%3Dtenant-a']);
    expect(reservedSelector.code).not.toBe(0);
  });
});

describe('system controllers', () => {
  it('lets the garbage collector delete a claim whose owner is gone', async () => {
    const owner = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'create', 'configmap', 'owner', '-o', 'json'])) as { metadata: { uid: string } };
    const owned = manifest('owned').replace(
      'labels: {app: web}',
      `labels: {app: web}\n  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: ${owner.metadata.uid}}]`,
    );
    await ok('tenant-a', ['-n', 'tenant-a', 'create', '-f', await file('owned.yaml', owned)]);
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'configmap', 'owner']);
    await pollUntil('the garbage collector deletes the owned claim', async () => ((await kubectl('tenant-a', ['-n', 'tenant-a', 'get', 'hc', 'owned'])).code !== 0 ? true : undefined), {
      timeoutMs: 90_000,
      intervalMs: 1000,
    });
  });

  it('refuses claims in a namespace that does not exist, like NamespaceLifecycle', async () => {
    const result = await kubectl('admin', ['-n', 'no-such-namespace', 'create', '-f', await file('nowhere.yaml', manifest('nowhere'))]);
    expect(result.stderr).toContain('namespaces "no-such-namespace" not found');
    expect(await ok('admin', ['-n', 'hostclaim-system', 'get', 'hostclaimrecords', '-o', 'name'])).not.toContain('no-such-namespace');
  });

  it('completes namespace deletion and removes the backing records', async () => {
    await ok('admin', ['create', 'namespace', 'tenant-c']);
    await ok('admin', ['-n', 'tenant-c', 'create', '-f', await file('c.yaml', manifest('c-0'))]);
    await ok('admin', ['delete', 'namespace', 'tenant-c', '--timeout=120s']);
    const records = await ok('admin', ['-n', 'hostclaim-system', 'get', 'hostclaimrecords', '-o', 'name']);
    expect(records).not.toContain('tenant-c.');
  });
});

describe('client-node informer', () => {
  it('converges on the server state', async () => {
    const config = new KubeConfig();
    config.loadFromFile(env.tenantKubeconfigPaths['tenant-a']);
    const api = config.makeApiClient(CustomObjectsApi);
    const path = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims';
    const list = () => api.listNamespacedCustomObject({ group: 'tenancy.metal3.io', version: 'v1alpha1', namespace: 'tenant-a', plural: 'hostclaims' }) as Promise<{ items: KubernetesObject[] }>;
    const informer = makeInformer<KubernetesObject>(config, path, list);
    await informer.start();
    try {
      await ok('tenant-a', ['-n', 'tenant-a', 'apply', '-f', await file('inf-1.yaml', manifest('inf-1'))]);
      await ok('tenant-a', ['-n', 'tenant-a', 'label', 'hc', 'inf-1', 'seen=yes']);
      await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hc', 'private']);
      await pollUntil(
        'the informer cache to match the server list',
        async () => {
          const server = (await list()).items.map((o) => `${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`).sort();
          const cached = informer.list('tenant-a').map((o) => `${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`).sort();
          return JSON.stringify(server) === JSON.stringify(cached) && cached.some((c) => c.startsWith('inf-1@')) ? true : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
    } finally {
      await informer.stop();
    }
  });
});
