/**
 * docs/operations.md, run as written by an infrastructure admin in a
 * checkout, against a real kube-apiserver: prerequisites, the default
 * install, the cert-manager install (cert-manager's CRDs from its Go module,
 * no cert-manager controllers), the upgrade overlay, scaling, certificate
 * and CA rotation, monitoring RBAC, troubleshooting, backup inventory and
 * the uninstall. The cluster has no nodes: the Deployment never gets pods,
 * so the APIService stays unavailable (EndpointsNotFound, as the
 * troubleshooting table explains), and commands that need a running replica
 * are listed with the reason they are not run. The alerting rules' second
 * group (kube-apiserver's metrics) is checked against this kube-apiserver's
 * /metrics while the APIService is registered and unavailable.
 */
import { X509Certificate } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadSchemaSource } from '../../src/api/openapi/schema-source.js';
import { hostClaimRecordCRD } from '../../src/resources/hostclaim/storage.js';
import { installBareMetalOperatorCrds, resolveBareMetalOperator } from '../controlplane/baremetal-operator.js';
import { kubernetesVersion } from '../controlplane/binaries.js';
import { startControlPlane, type ControlPlane } from '../controlplane/controlplane.js';
import { waitForCrdsEstablished } from '../controlplane/crds.js';
import { repoPath } from '../controlplane/paths.js';
import { API_SERVICE_NAME, getAPIServiceAvailableCondition } from '../controlplane/register.js';
import { pollUntil } from '../controlplane/wait.js';
import { readDocCommands } from '../support/doc-commands.js';
import { DocShell, type ShellResult } from '../support/doc-shell.js';
import { exposedSeries, readRuleGroups, vectorSelectors } from '../support/prometheus-rules.js';

const run = promisify(execFile);
const binDir = inject('controlPlaneBinDir');
const DOC = repoPath('docs', 'operations.md');
const NAMESPACE = 'hostclaim-system';
const RECORD_CRD = 'hostclaimrecords.infra.tenancy.metal3.io';
const NOT_FOUND_IN_NAMESPACE = `No resources found in ${NAMESPACE} namespace.\n`;
const NO_PODS = 'the test control plane has no nodes: the Deployment never gets pods';

let cp: ControlPlane;
/** The reader's checkout: a copy of deploy/ without tls/. */
let checkout: string;
let shell: DocShell;

beforeAll(async () => {
  cp = await startControlPlane({ binDir });
  // What exists in a cluster where the server once started (it installs its CRD) and baremetal-operator runs.
  await installBareMetalOperatorCrds(cp, (await resolveBareMetalOperator()).crdDir);
  await cp.apply(JSON.stringify(hostClaimRecordCRD(loadSchemaSource())));
  const { stdout: certManagerCrds } = await run(repoPath('test', 'deploy', 'cert-manager-crds.sh'));
  await cp.applyFile(certManagerCrds.trim());
  await waitForCrdsEstablished(cp, [RECORD_CRD, 'certificates.cert-manager.io', 'issuers.cert-manager.io']);

  checkout = await fs.mkdtemp(path.join(os.tmpdir(), 'operations-doc-'));
  await fs.cp(repoPath('deploy'), path.join(checkout, 'deploy'), { recursive: true, filter: (source) => path.basename(source) !== 'tls' });
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${binDir}:${process.env['PATH'] ?? ''}`, KUBECONFIG: cp.adminKubeconfigPath, KUBECACHEDIR: path.join(checkout, '.kube-cache') };
  shell = new DocShell(checkout, env);
});

afterAll(async () => {
  await cp.stop();
  await fs.rm(checkout, { recursive: true, force: true });
});

// --- what each command must answer ---------------------------------------------------

interface Expectation {
  text: string;
  /** Why the test does not run the command (instead of `check`). */
  notRun?: string;
  check?: (result: ShellResult) => Promise<void> | void;
}

function succeeded(result: ShellResult): void {
  expect(result.stderr, result.stdout).toBe('');
  expect(result.code).toBe(0);
}

function lines(stdout: string): string[] {
  return stdout.trimEnd().split('\n').sort();
}

async function readTls(file: string): Promise<string> {
  return fs.readFile(path.join(checkout, 'deploy', 'tls', file), 'utf8');
}

interface APIService {
  metadata: { annotations?: Record<string, string> };
  spec: { caBundle?: string };
}

async function caBundle(): Promise<X509Certificate[]> {
  const apiService = await cp.requestJson<APIService>('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${API_SERVICE_NAME}`);
  return pemCertificates(Buffer.from(apiService.spec.caBundle ?? '', 'base64').toString());
}

function pemCertificates(pem: string): X509Certificate[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/g)].map((match) => new X509Certificate(match[0]));
}

interface Deployment {
  spec: { replicas: number; template: { spec: { containers: { image: string }[]; volumes: { secret: { secretName: string } }[] } } };
}

async function deployment(): Promise<Deployment['spec']> {
  return (await cp.requestJson<Deployment>('GET', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/hostclaim-apiserver`)).spec;
}

/** The objects of deploy/ (the default install), as `kubectl apply` names them. */
const DEFAULT_INSTALL = [
  'apiservice.apiregistration.k8s.io/v1alpha1.tenancy.metal3.io',
  'clusterrole.rbac.authorization.k8s.io/hostclaim-apiserver',
  'clusterrole.rbac.authorization.k8s.io/hostclaim-apiserver-aggregate-to-admin',
  'clusterrole.rbac.authorization.k8s.io/hostclaim-apiserver-aggregate-to-edit',
  'clusterrole.rbac.authorization.k8s.io/hostclaim-apiserver-aggregate-to-view',
  'clusterrolebinding.rbac.authorization.k8s.io/hostclaim-apiserver',
  'clusterrolebinding.rbac.authorization.k8s.io/hostclaim-apiserver:system:auth-delegator',
  'deployment.apps/hostclaim-apiserver',
  'namespace/hostclaim-system',
  'networkpolicy.networking.k8s.io/hostclaim-apiserver',
  'poddisruptionbudget.policy/hostclaim-apiserver',
  'priorityclass.scheduling.k8s.io/hostclaim-apiserver',
  'role.rbac.authorization.k8s.io/hostclaim-apiserver',
  'rolebinding.rbac.authorization.k8s.io/hostclaim-apiserver',
  'rolebinding.rbac.authorization.k8s.io/hostclaim-apiserver:extension-apiserver-authentication-reader',
  'secret/hostclaim-apiserver-tls-HASH',
  'service/hostclaim-apiserver',
  'serviceaccount/hostclaim-apiserver',
];

/** `kubectl apply` output with the Secret's content hash replaced by HASH. */
function applied(stdout: string): string[] {
  return lines(stdout.replace(/secret\/hostclaim-apiserver-tls-[a-z0-9]{10}/g, 'secret/hostclaim-apiserver-tls-HASH'));
}

function withVerb(objects: readonly string[], verbs: Record<string, string>, otherwise: string): string[] {
  return objects.map((object) => `${object} ${verbs[object] ?? otherwise}`).sort();
}

/**
 * What client-side `kubectl apply` reports `configured` on every apply, even
 * when nothing changed (the patch it sends changes nothing): the Secret and
 * the caBundle, which kustomize renders as base64 wrapped in lines while
 * kube-apiserver returns it unwrapped; the Deployment's `strategy`
 * (`$retainKeys`) and the PDB's selector, which kubectl's three-way patch
 * always re-sends. docs/operations.md says so.
 */
const ALWAYS_CONFIGURED = [
  'apiservice.apiregistration.k8s.io/v1alpha1.tenancy.metal3.io',
  'deployment.apps/hostclaim-apiserver',
  'poddisruptionbudget.policy/hostclaim-apiserver',
  'secret/hostclaim-apiserver-tls-HASH',
];

/** A repeated `kubectl apply -k` of the default install: `created` for a new Secret, `configured` or `unchanged` for the rest. */
function reapplied(options: { newSecret: boolean }): string[] {
  const verbs: Record<string, string> = Object.fromEntries(ALWAYS_CONFIGURED.map((object) => [object, 'configured']));
  if (options.newSecret) verbs['secret/hostclaim-apiserver-tls-HASH'] = 'created';
  return withVerb(DEFAULT_INSTALL, verbs, 'unchanged');
}

const APISERVICE_ROW = /^v1alpha1\.tenancy\.metal3\.io\s+hostclaim-system\/hostclaim-apiserver\s+False \(EndpointsNotFound\)\s+\S+$/;
const BOUND_HOSTS = `kubectl get baremetalhosts.metal3.io -A -o jsonpath='{range .items[?(@.spec.consumerRef.kind=="HostClaimRecord")]}{.metadata.namespace}/{.metadata.name} {.spec.consumerRef.name}{"\\n"}{end}'`;

const EXPECTATIONS: Expectation[] = [
  // Prerequisites
  {
    text: 'kubectl version',
    check: async (result) => {
      succeeded(result);
      const version = await kubernetesVersion();
      expect(result.stdout).toMatch(new RegExp(`^Client Version: ${version}\\nKustomize Version: v\\S+\\nServer Version: ${version}\\n$`));
    },
  },
  {
    text: "kubectl -n kube-system get configmap extension-apiserver-authentication -o jsonpath='{.data.requestheader-client-ca-file}' | head -1",
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('-----BEGIN CERTIFICATE-----\n');
    },
  },
  // Installing, without cert-manager
  {
    text: 'deploy/generate-certificates.sh     # openssl: deploy/tls/{ca.key,ca.crt,tls.key,tls.crt}',
    check: async (result) => {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/^created CA .*\/deploy\/tls\/ca\.crt\nissued .*\/deploy\/tls\/tls\.crt for hostclaim-apiserver\.hostclaim-system\.svc, expires .+\n$/);
      expect((await fs.readdir(path.join(checkout, 'deploy', 'tls'))).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    },
  },
  {
    text: 'kubectl apply -k deploy/',
    check: async (result) => {
      succeeded(result);
      expect(applied(result.stdout)).toEqual(withVerb(DEFAULT_INSTALL, {}, 'created'));
      expect((await caBundle()).map((ca) => ca.raw)).toEqual([new X509Certificate(await readTls('ca.crt')).raw]);
      // The aggregator's first verdict, which the next command shows.
      await pollUntil('the APIService marked unavailable', async () => ((await getAPIServiceAvailableCondition(cp))?.reason === 'EndpointsNotFound' ? true : undefined), { timeoutMs: 60_000 });
    },
  },
  { text: 'kubectl -n hostclaim-system rollout status deployment/hostclaim-apiserver --timeout=5m', notRun: NO_PODS },
  {
    text: 'kubectl get apiservice v1alpha1.tenancy.metal3.io   # AVAILABLE True once a replica is ready',
    check: (result) => {
      succeeded(result);
      const [header, row, ...rest] = result.stdout.trimEnd().split('\n');
      expect(header?.trim().split(/\s{2,}/)).toEqual(['NAME', 'SERVICE', 'AVAILABLE', 'AGE']);
      // No pods here: the reason the troubleshooting table gives for a Service without EndpointSlices.
      expect(row).toMatch(APISERVICE_ROW);
      expect(rest).toEqual([]);
    },
  },
  // Installing, with cert-manager
  {
    text: 'kubectl get crd certificates.cert-manager.io issuers.cert-manager.io   # cert-manager is installed',
    check: (result) => {
      succeeded(result);
      expect(lines(result.stdout).map((line) => line.split(/\s+/)[0])).toEqual(['NAME', 'certificates.cert-manager.io', 'issuers.cert-manager.io']);
    },
  },
  {
    text: 'kubectl apply -k deploy/overlays/cert-manager/',
    check: async (result) => {
      succeeded(result);
      const base = DEFAULT_INSTALL.filter((object) => !object.startsWith('secret/'));
      expect(applied(result.stdout)).toEqual(
        [
          ...withVerb(base, Object.fromEntries(ALWAYS_CONFIGURED.map((object) => [object, 'configured'])), 'unchanged'),
          'certificate.cert-manager.io/hostclaim-apiserver created',
          'certificate.cert-manager.io/hostclaim-apiserver-ca created',
          'issuer.cert-manager.io/hostclaim-apiserver-ca created',
          'issuer.cert-manager.io/hostclaim-apiserver-selfsigned created',
        ].sort(),
      );
      const apiService = await cp.requestJson<APIService>('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${API_SERVICE_NAME}`);
      expect(apiService.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe('hostclaim-system/hostclaim-apiserver');
      expect((await deployment()).template.spec.volumes.map((volume) => volume.secret.secretName)).toEqual(['hostclaim-apiserver-tls']);
    },
  },
  // Upgrading
  {
    text: 'mkdir -p site',
    check: succeeded,
  },
  {
    text: [
      "cat > site/kustomization.yaml <<'YAML'",
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      '  - ../deploy            # or ../deploy/overlays/cert-manager',
      'images:',
      '  - name: hostclaim-apiserver',
      '    newName: registry.example/hostclaim-apiserver',
      '    newTag: v0.2.0',
      'YAML',
    ].join('\n'),
    check: succeeded,
  },
  {
    text: 'kubectl apply -k site/',
    check: async (result) => {
      succeeded(result);
      // Back from the cert-manager overlay to the default one, with the site's image.
      expect(applied(result.stdout)).toEqual(reapplied({ newSecret: false }));
      const spec = await deployment();
      expect(spec.template.spec.containers.map((container) => container.image)).toEqual(['registry.example/hostclaim-apiserver:v0.2.0']);
      expect(spec.template.spec.volumes.map((volume) => volume.secret.secretName)).toEqual([expect.stringMatching(/^hostclaim-apiserver-tls-[a-z0-9]{10}$/)]);
    },
  },
  { text: 'kubectl -n hostclaim-system rollout status deployment/hostclaim-apiserver --timeout=10m', notRun: NO_PODS },
  // Scaling
  {
    text: 'kubectl -n hostclaim-system scale deployment/hostclaim-apiserver --replicas=5   # until the next apply',
    check: async (result) => {
      succeeded(result);
      expect(result.stdout).toBe('deployment.apps/hostclaim-apiserver scaled\n');
      expect((await deployment()).replicas).toBe(5);
    },
  },
  {
    text: 'kubectl -n hostclaim-system get pods -l app.kubernetes.io/name=hostclaim-apiserver -o wide',
    check: (result) => {
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(NOT_FOUND_IN_NAMESPACE);
    },
  },
  {
    text: `kubectl -n hostclaim-system get lease hostclaim-binder -o jsonpath='{.spec.holderIdentity}{"\\n"}'   # <pod>_<uuid> of the binding replica`,
    check: (result) => {
      // No replica ever ran the binder here.
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('Error from server (NotFound): leases.coordination.k8s.io "hostclaim-binder" not found\n');
    },
  },
  // Rotating certificates, without cert-manager
  {
    text: 'openssl x509 -noout -enddate -in deploy/tls/tls.crt          # when the serving certificate expires',
    check: async (result) => {
      succeeded(result);
      const validTo = new X509Certificate(await readTls('tls.crt')).validTo;
      expect(result.stdout).toBe(`notAfter=${validTo}\n`);
    },
  },
  {
    text: 'deploy/generate-certificates.sh && kubectl apply -k deploy/  # or your overlay: kubectl apply -k site/',
    check: async (result) => {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/^issued .*\/deploy\/tls\/tls\.crt for hostclaim-apiserver\.hostclaim-system\.svc, expires .+\n$/);
      // A new Secret (its name has the new content's hash), the Deployment mounts it (and is back at 3 replicas and the default image).
      expect(applied(result.stdout)).toEqual(reapplied({ newSecret: true }));
      const spec = await deployment();
      expect(spec.replicas).toBe(3);
      expect(spec.template.spec.containers.map((container) => container.image)).toEqual(['hostclaim-apiserver:latest']);
      expect((await caBundle()).map((ca) => ca.raw)).toEqual([new X509Certificate(await readTls('ca.crt')).raw]);
    },
  },
  // Changing the CA
  {
    text: 'mkdir -p deploy/tls/previous && mv deploy/tls/ca.key deploy/tls/ca.crt deploy/tls/previous/',
    check: succeeded,
  },
  {
    text: 'deploy/generate-certificates.sh                          # no ca.key: a new CA, and a certificate it signs',
    check: async (result) => {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/^created CA /);
      const [previous] = pemCertificates(await readTls('previous/ca.crt'));
      const [next] = pemCertificates(await readTls('ca.crt'));
      expect(next?.raw.equals(previous?.raw ?? Buffer.alloc(0))).toBe(false);
      expect(new X509Certificate(await readTls('tls.crt')).verify(next?.publicKey ?? expect.fail('no CA'))).toBe(true);
    },
  },
  {
    text: 'cat deploy/tls/previous/ca.crt >> deploy/tls/ca.crt      # the caBundle trusts the new and the old CA',
    check: succeeded,
  },
  {
    text: 'kubectl apply -k deploy/',
    check: async (result) => {
      succeeded(result);
      expect(applied(result.stdout)).toEqual(reapplied({ newSecret: true }));
      const [next, previous] = pemCertificates(await readTls('ca.crt'));
      expect((await caBundle()).map((ca) => ca.raw)).toEqual([next?.raw, previous?.raw]);
      // Both the certificate now served and the one served before verify against the bundle.
      expect(new X509Certificate(await readTls('tls.crt')).checkIssued(next ?? expect.fail('no new CA'))).toBe(true);
    },
  },
  { text: 'kubectl -n hostclaim-system rollout status deployment/hostclaim-apiserver --timeout=10m', notRun: NO_PODS },
  {
    text: 'openssl x509 -in deploy/tls/ca.crt -out deploy/tls/ca.new.crt && mv deploy/tls/ca.new.crt deploy/tls/ca.crt   # keep the first: the new CA',
    check: async (result) => {
      succeeded(result);
      const remaining = pemCertificates(await readTls('ca.crt'));
      expect(remaining).toHaveLength(1);
      expect(new X509Certificate(await readTls('tls.crt')).checkIssued(remaining[0] ?? expect.fail('no CA'))).toBe(true);
    },
  },
  {
    text: 'kubectl apply -k deploy/',
    check: async (result) => {
      succeeded(result);
      expect(applied(result.stdout)).toEqual(reapplied({ newSecret: true }));
      expect((await caBundle()).map((ca) => ca.raw)).toEqual([new X509Certificate(await readTls('ca.crt')).raw]);
    },
  },
  {
    text: 'rm -r deploy/tls/previous',
    check: async (result) => {
      succeeded(result);
      expect((await fs.readdir(path.join(checkout, 'deploy', 'tls'))).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    },
  },
  // Rotating certificates, with cert-manager
  {
    text: `kubectl -n hostclaim-system get certificate hostclaim-apiserver -o jsonpath='{.status.notAfter} {.status.renewalTime}{"\\n"}'`,
    notRun: 'cert-manager runs no controller here, so the Certificate has no status (its name and fields are checked by the overlay apply above)',
  },
  // Monitoring
  {
    text: 'kubectl create clusterrolebinding prometheus-hostclaim-apiserver-metrics --clusterrole=system:monitoring --serviceaccount=monitoring:prometheus',
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('clusterrolebinding.rbac.authorization.k8s.io/prometheus-hostclaim-apiserver-metrics created\n');
    },
  },
  {
    text: 'kubectl auth can-i get /metrics --as=system:serviceaccount:monitoring:prometheus   # yes',
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('yes\n');
    },
  },
  // Troubleshooting
  {
    text: 'kubectl get apiservice v1alpha1.tenancy.metal3.io',
    check: (result) => {
      succeeded(result);
      expect(result.stdout.trimEnd().split('\n')[1]).toMatch(APISERVICE_ROW);
    },
  },
  {
    text: `kubectl get apiservice v1alpha1.tenancy.metal3.io -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}'`,
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('Available=False EndpointsNotFound: cannot find endpointslices for service/hostclaim-apiserver in "hostclaim-system"\n');
    },
  },
  {
    text: 'kubectl -n hostclaim-system get deployment,pods,endpointslices -o wide',
    check: (result) => {
      succeeded(result);
      const [header, row, ...rest] = result.stdout.trimEnd().split('\n');
      expect(header?.trim().split(/\s{2,}/)).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
      expect(row?.trim().split(/\s{2,}/)).toEqual(['deployment.apps/hostclaim-apiserver', '0/3', '0', '0', expect.any(String), 'apiserver', 'hostclaim-apiserver:latest', 'app.kubernetes.io/name=hostclaim-apiserver']);
      expect(rest).toEqual([]);
    },
  },
  {
    text: 'kubectl -n hostclaim-system describe pods -l app.kubernetes.io/name=hostclaim-apiserver',
    check: (result) => {
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(NOT_FOUND_IN_NAMESPACE);
    },
  },
  {
    text: `kubectl -n hostclaim-system get lease hostclaim-binder -o jsonpath='{.spec.holderIdentity}{"\\n"}'`,
    check: (result) => {
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('Error from server (NotFound): leases.coordination.k8s.io "hostclaim-binder" not found\n');
    },
  },
  {
    text: 'kubectl auth can-i create subjectaccessreviews.authorization.k8s.io --all-namespaces --as=system:serviceaccount:hostclaim-system:hostclaim-apiserver   # yes',
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe('yes\n');
    },
  },
  {
    text: 'kubectl get --raw /apis/tenancy.metal3.io/v1alpha1   # through the aggregator, as a client sees it',
    check: (result) => {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/Error from server \(ServiceUnavailable\): the server is currently unable to handle the request\n$/);
    },
  },
  {
    text: `export POD="$(kubectl -n hostclaim-system get pods -l app.kubernetes.io/name=hostclaim-apiserver -o jsonpath='{.items[0].metadata.name}')"`,
    notRun: NO_PODS,
  },
  { text: 'kubectl get --raw "/api/v1/namespaces/hostclaim-system/pods/https:${POD}:8443/proxy/readyz?verbose"', notRun: NO_PODS },
  { text: `kubectl -n hostclaim-system logs "\${POD}" --since=1h | grep -E '"level":(40|50)'`, notRun: NO_PODS },
  // Backing up and restoring
  {
    text: 'kubectl -n hostclaim-system get hostclaimrecords.infra.tenancy.metal3.io',
    check: (result) => {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(NOT_FOUND_IN_NAMESPACE);
    },
  },
  {
    text: BOUND_HOSTS,
    check: succeeded,
  },
  // Uninstalling
  {
    text: 'kubectl delete clusterrole hostclaim-apiserver-aggregate-to-admin hostclaim-apiserver-aggregate-to-edit   # tenants can no longer create claims',
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe(
        'clusterrole.rbac.authorization.k8s.io "hostclaim-apiserver-aggregate-to-admin" deleted\nclusterrole.rbac.authorization.k8s.io "hostclaim-apiserver-aggregate-to-edit" deleted\n',
      );
    },
  },
  {
    text: 'kubectl delete hostclaims --all --all-namespaces --wait=false',
    notRun: 'needs the API served (no replica runs here); deleting claims through it and the release of their hosts are proven in binding.test.ts',
  },
  {
    text: 'kubectl -n hostclaim-system get hostclaimrecords.infra.tenancy.metal3.io                                   # repeat until none is left',
    check: (result) => {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(NOT_FOUND_IN_NAMESPACE);
    },
  },
  {
    text: BOUND_HOSTS,
    check: succeeded,
  },
  {
    text: 'kubectl delete -k deploy/                                                                                  # or your overlay',
    check: async (result) => {
      // The two aggregated roles deleted above are reported missing; everything else goes.
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'Error from server (NotFound): error when deleting "deploy/": clusterroles.rbac.authorization.k8s.io "hostclaim-apiserver-aggregate-to-admin" not found\n' +
          'Error from server (NotFound): error when deleting "deploy/": clusterroles.rbac.authorization.k8s.io "hostclaim-apiserver-aggregate-to-edit" not found\n',
      );
      const remaining = DEFAULT_INSTALL.filter((object) => !/aggregate-to-(admin|edit)$/.test(object)).map((object) => object.replace(/\/.*/, ''));
      expect(lines(result.stdout).map((line) => line.split(' ')[0])).toEqual(remaining.sort());
      await pollUntil('namespace hostclaim-system deleted', async () => ((await cp.request('GET', `/api/v1/namespaces/${NAMESPACE}`)).status === 404 ? true : undefined), { timeoutMs: 60_000 });
    },
  },
  {
    text: 'kubectl delete crd hostclaimrecords.infra.tenancy.metal3.io',
    check: (result) => {
      succeeded(result);
      expect(result.stdout).toBe(`customresourcedefinition.apiextensions.k8s.io "${RECORD_CRD}" deleted\n`);
    },
  },
];

/** After this command the APIService is registered and unavailable: the moment to read kube-apiserver's aggregator metrics. */
const AGGREGATOR_METRICS_AFTER = 'kubectl get apiservice v1alpha1.tenancy.metal3.io';

describe('docs/operations.md', () => {
  const commands = readDocCommands(DOC);

  it('has an expectation here for every command, in order, and none for a command it lost', () => {
    expect(commands.map((command) => command.text)).toEqual(EXPECTATIONS.map((expectation) => expectation.text));
  });

  describe('run as written', () => {
    for (const [index, command] of commands.entries()) {
      const expectation = EXPECTATIONS[index];
      // Listed above with the reason; the completeness test covers them.
      if (expectation?.notRun !== undefined) continue;
      it(`docs/operations.md:${command.line} ${command.text.split('\n')[0] ?? ''}`, async () => {
        if (expectation?.check === undefined || expectation.text !== command.text) throw new Error(`no expectation for docs/operations.md:${command.line}`);
        await expectation.check(await shell.run(command.text));
      });
      if (command.text === AGGREGATOR_METRICS_AFTER) {
        it('deploy/monitoring/prometheus-rules.yaml: the aggregation group names metrics and labels kube-apiserver exports', async () => {
          const response = await cp.request('GET', '/metrics');
          expect(response.status).toBe(200);
          const exported = exposedSeries(response.body);
          const aggregation = readRuleGroups().find((group) => group.name === 'hostclaim-apiserver-aggregation');
          const selectors = (aggregation?.rules ?? []).flatMap((rule) => vectorSelectors(rule.expr));
          expect(selectors).toEqual([
            { metric: 'aggregator_unavailable_apiservice', labels: ['name'] },
            { metric: 'aggregator_unavailable_apiservice', labels: ['name'] },
          ]);
          for (const selector of selectors) {
            expect([...(exported.get(selector.metric) ?? [])], selector.metric).toEqual(expect.arrayContaining(selector.labels));
          }
          // What the rules alert on, right now: this APIService is unavailable.
          expect(response.body).toContain(`aggregator_unavailable_apiservice{name="${API_SERVICE_NAME}"} 1\n`);
        });
      }
    }
  });
});
