// Registers a hostclaim-apiserver running on 127.0.0.1 with the aggregator,
// from the template deploy/dev/apiservice.yaml.
import fs from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from './controlplane.js';
import { repoPath } from './paths.js';
import { pollUntil } from './wait.js';

export const API_SERVICE_NAME = 'v1alpha1.tenancy.metal3.io';
export const DEFAULT_SERVICE_NAMESPACE = 'hostclaim-system';
export const DEFAULT_SERVICE_NAME = 'hostclaim-apiserver';

export interface AggregatedServerRegistration {
  /** Port the server listens on at 127.0.0.1. */
  port: number;
  /** PEM CA bundle that verifies the server's certificate; may hold several CAs (rotation). */
  caBundlePem: string;
  serviceNamespace?: string;
  serviceName?: string;
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

const templatePath = repoPath('deploy', 'dev', 'apiservice.yaml');

/** Applies the Namespace, ExternalName Service and APIService; re-applying updates port and caBundle. */
export async function registerAggregatedServer(cp: ControlPlane, registration: AggregatedServerRegistration): Promise<void> {
  await cp.apply(await renderRegistration(registration));
}

async function renderRegistration(registration: AggregatedServerRegistration): Promise<string> {
  const namespace = registration.serviceNamespace ?? DEFAULT_SERVICE_NAMESPACE;
  const name = registration.serviceName ?? DEFAULT_SERVICE_NAME;
  const documents = parseAllDocuments(await fs.readFile(templatePath, 'utf8'));
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`${templatePath}: ${document.errors.join('; ')}`);
    switch (document.get('kind')) {
      case 'Namespace':
        document.setIn(['metadata', 'name'], namespace);
        break;
      case 'Service':
        document.setIn(['metadata', 'namespace'], namespace);
        document.setIn(['metadata', 'name'], name);
        break;
      case 'APIService':
        document.setIn(['spec', 'service'], { namespace, name, port: registration.port });
        document.setIn(['spec', 'caBundle'], Buffer.from(registration.caBundlePem).toString('base64'));
        break;
      default:
        throw new Error(`${templatePath}: unexpected kind ${String(document.get('kind'))}`);
    }
  }
  return documents.map((document) => document.toString()).join('---\n');
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
