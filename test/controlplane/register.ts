// Installs deploy/overlays/dev (kubectl kustomize, as an admin would) and
// registers a hostclaim-apiserver running on 127.0.0.1 with the aggregator
// through the APIService it contains.
import { parseAllDocuments, type Document } from 'yaml';
import type { ControlPlane } from './controlplane.js';
import { repoPath } from './paths.js';
import { pollUntil } from './wait.js';

export const API_SERVICE_NAME = 'v1alpha1.tenancy.metal3.io';
export const DEFAULT_SERVICE_NAMESPACE = 'hostclaim-system';
export const DEFAULT_SERVICE_NAME = 'hostclaim-apiserver';
export const DEV_OVERLAY_DIR = repoPath('deploy', 'overlays', 'dev');

export interface AggregatedServerRegistration {
  /** Port the server listens on at 127.0.0.1. */
  port: number;
  /** PEM CA bundle that verifies the server's certificate; may hold several CAs (rotation). */
  caBundlePem: string;
}

export interface APIServiceCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface APIServiceStatus {
  status?: { conditions?: APIServiceCondition[] };
}

/** `kubectl kustomize <dir>`: the documents an admin's `kubectl apply -k <dir>` would apply. */
export async function renderKustomization(cp: ControlPlane, dir: string): Promise<string> {
  const result = await cp.kubectl(['kustomize', dir]);
  if (result.code !== 0) throw new Error(`kubectl kustomize ${dir} failed (${result.code}): ${result.stderr.trim()}`);
  return result.stdout;
}

/**
 * Server-side applies what deploy/overlays/dev renders (namespace,
 * ServiceAccount, RBAC, tenant roles, sample tenants, ExternalName Service,
 * availability objects) except the APIService: registerAggregatedServer()
 * applies that once the local server is ready, so the aggregator's first
 * availability check finds it serving.
 */
export async function installDevOverlay(cp: ControlPlane): Promise<void> {
  const documents = await renderDevOverlay(cp);
  await cp.apply(documents.filter((document) => !isAPIService(document)).map(String).join('---\n'));
}

/** Applies the dev overlay's APIService pointing at the local server; re-applying updates port and caBundle (rotation). */
export async function registerAggregatedServer(cp: ControlPlane, registration: AggregatedServerRegistration): Promise<void> {
  const apiServices = (await renderDevOverlay(cp)).filter(isAPIService);
  if (apiServices.length !== 1) throw new Error(`${DEV_OVERLAY_DIR}: expected one APIService ${API_SERVICE_NAME}, found ${apiServices.length}`);
  const [apiService] = apiServices as [Document];
  apiService.setIn(['spec', 'service', 'port'], registration.port);
  apiService.setIn(['spec', 'caBundle'], Buffer.from(registration.caBundlePem).toString('base64'));
  await cp.apply(apiService.toString());
}

async function renderDevOverlay(cp: ControlPlane): Promise<Document[]> {
  const documents = parseAllDocuments(await renderKustomization(cp, DEV_OVERLAY_DIR));
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`${DEV_OVERLAY_DIR}: ${document.errors.join('; ')}`);
  }
  return documents;
}

function isAPIService(document: Document): boolean {
  return document.get('kind') === 'APIService' && document.getIn(['metadata', 'name']) === API_SERVICE_NAME;
}

/** The APIService's Available condition, or undefined before the aggregator has set one. */
export async function getAPIServiceAvailableCondition(cp: ControlPlane): Promise<APIServiceCondition | undefined> {
  const apiService = await cp.requestJson<APIServiceStatus>(
    'GET',
    `/apis/apiregistration.k8s.io/v1/apiservices/${API_SERVICE_NAME}`,
  );
  return apiService.status?.conditions?.find((condition) => condition.type === 'Available');
}

/** Waits for Available=True; on timeout the error carries the last condition seen. */
export async function waitForAPIServiceAvailable(cp: ControlPlane, timeoutMs: number): Promise<APIServiceCondition> {
  let last: APIServiceCondition | undefined;
  return pollUntil(
    `APIService ${API_SERVICE_NAME} to become Available`,
    async () => {
      last = await getAPIServiceAvailableCondition(cp);
      return last?.status === 'True' ? last : undefined;
    },
    { timeoutMs, intervalMs: 500, describeFailure: () => `last Available condition: ${describeCondition(last)}` },
  );
}

function describeCondition(condition: APIServiceCondition | undefined): string {
  if (condition === undefined) return '(none yet)';
  return `status=${condition.status} reason=${condition.reason ?? ''} message=${condition.message ?? ''}`;
}
