import fs from 'node:fs/promises';
import { stringify } from 'yaml';

export type KubeconfigCredentials = { certPem: string; keyPem: string } | { token: string };

export interface KubeconfigSpec {
  server: string;
  caPem: string;
  userName: string;
  credentials: KubeconfigCredentials;
  /** Default namespace of the context, so `kubectl get` without -n targets it. */
  namespace?: string;
}

const CLUSTER_NAME = 'hostclaim-dev';

/** Writes a self-contained kubeconfig (all PEMs inlined), readable by its owner only. */
export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<string> {
  const contextName = `${spec.userName}@${CLUSTER_NAME}`;
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CLUSTER_NAME, cluster: { server: spec.server, 'certificate-authority-data': base64(spec.caPem) } }],
    users: [{ name: spec.userName, user: userEntry(spec.credentials) }],
    contexts: [
      {
        name: contextName,
        context: { cluster: CLUSTER_NAME, user: spec.userName, ...(spec.namespace ? { namespace: spec.namespace } : {}) },
      },
    ],
    'current-context': contextName,
  };
  await fs.writeFile(path, stringify(kubeconfig), { mode: 0o600 });
  return path;
}

function userEntry(credentials: KubeconfigCredentials): Record<string, string> {
  if ('token' in credentials) return { token: credentials.token };
  return { 'client-certificate-data': base64(credentials.certPem), 'client-key-data': base64(credentials.keyPem) };
}

function base64(text: string): string {
  return Buffer.from(text).toString('base64');
}
