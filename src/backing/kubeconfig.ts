/**
 * Where kube-apiserver is and how to authenticate to it: a kubeconfig file
 * or, without one, the in-cluster ServiceAccount, read as client-go does
 * (tools/clientcmd: current-context, file paths relative to the
 * kubeconfig's directory, `-data` fields base64; rest.InClusterConfig:
 * KUBERNETES_SERVICE_HOST/PORT, the mounted token and CA, the token re-read
 * as kubelet rotates it).
 *
 * Only the common forms are read here: certificate authority, client
 * certificate and key, bearer token or token file, insecure-skip-tls-verify,
 * tls-server-name. A kubeconfig that uses anything else (exec plugins, auth
 * providers, basic auth, proxies) is handed to @kubernetes/client-node's
 * KubeConfig, imported only then: importing it loads its generated API
 * clients, ~80 MB of RSS the server would otherwise carry for nothing.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';

/** What one request to kube-apiserver needs: TLS material and headers. */
export interface Credentials {
  readonly ca?: Buffer | undefined;
  readonly cert?: Buffer | undefined;
  readonly key?: Buffer | undefined;
  readonly servername?: string | undefined;
  readonly rejectUnauthorized: boolean;
  readonly headers: Readonly<Record<string, string>>;
}

export interface KubeConfigSource {
  readonly server: URL;
  /** Read per request, so rotated files (certificates, tokens) are picked up. */
  credentials(): Promise<Credentials>;
}

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';
/** client-go re-reads a rotated ServiceAccount token once a minute (transport/token_source.go). */
const tokenRereadMs = 60_000;

/** From a kubeconfig file, or the in-cluster ServiceAccount when no path is given. */
export async function loadKubeConfig(kubeconfigPath: string | undefined): Promise<KubeConfigSource> {
  if (kubeconfigPath === undefined) return inCluster();
  const document = load(readFileSync(kubeconfigPath, 'utf8')) as KubeconfigDocument | null;
  return fromKubeconfig(document ?? {}, path.dirname(path.resolve(kubeconfigPath))) ?? (await withClientNode(kubeconfigPath));
}

function inCluster(): KubeConfigSource {
  const host = process.env['KUBERNETES_SERVICE_HOST'];
  const port = process.env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || port === undefined) throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  const token = rereadEvery(path.join(serviceAccountDir, 'token'), tokenRereadMs);
  return {
    server: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`),
    credentials: () =>
      Promise.resolve({ ca: readFileSync(path.join(serviceAccountDir, 'ca.crt')), rejectUnauthorized: true, headers: { Authorization: `Bearer ${token()}` } }),
  };
}

interface Named<T> {
  readonly name?: string;
  readonly cluster?: T;
  readonly user?: T;
  readonly context?: T;
}

type Fields = Readonly<Record<string, unknown>>;

interface KubeconfigDocument {
  readonly 'current-context'?: string;
  readonly clusters?: readonly Named<Fields>[] | null;
  readonly users?: readonly Named<Fields>[] | null;
  readonly contexts?: readonly Named<{ readonly cluster?: string; readonly user?: string }>[] | null;
}

const readableClusterFields = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions']);
const readableUserFields = new Set(['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'token', 'tokenFile', 'extensions']);

/** The source, or undefined when the kubeconfig uses a form this module does not read. */
function fromKubeconfig(document: KubeconfigDocument, directory: string): KubeConfigSource | undefined {
  const currentName = document['current-context'];
  const context = document.contexts?.find((entry) => entry.name === currentName)?.context;
  const cluster = document.clusters?.find((entry) => entry.name === context?.cluster)?.cluster;
  const user = document.users?.find((entry) => entry.name === context?.user)?.user ?? {};
  if (cluster === undefined || typeof cluster['server'] !== 'string') throw new Error('kubeconfig has no current cluster');
  if (!Object.keys(cluster).every((key) => readableClusterFields.has(key)) || !Object.keys(user).every((key) => readableUserFields.has(key))) return undefined;
  const file = (key: string): string | undefined => {
    const value = stringField(cluster, key) ?? stringField(user, key);
    return value === undefined ? undefined : path.resolve(directory, value);
  };
  const material = (fileKey: string, dataKey: string): Buffer | undefined => {
    const fromFile = file(fileKey);
    if (fromFile !== undefined) return readFileSync(fromFile);
    const data = stringField(cluster, dataKey) ?? stringField(user, dataKey);
    return data === undefined ? undefined : Buffer.from(data, 'base64');
  };
  const tokenFile = file('tokenFile');
  const token = stringField(user, 'token');
  const servername = stringField(cluster, 'tls-server-name');
  return {
    server: new URL(cluster['server']),
    credentials: () => {
      const bearer = token ?? (tokenFile === undefined ? undefined : readFileSync(tokenFile, 'utf8').trim());
      const headers: Record<string, string> = bearer === undefined || bearer === '' ? {} : { Authorization: `Bearer ${bearer}` };
      return Promise.resolve({
        ca: material('certificate-authority', 'certificate-authority-data'),
        cert: material('client-certificate', 'client-certificate-data'),
        key: material('client-key', 'client-key-data'),
        servername,
        rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
        headers,
      });
    },
  };
}

function stringField(fields: Fields, key: string): string | undefined {
  const value = fields[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The file's content, read again once it is older than `everyMs`. */
function rereadEvery(file: string, everyMs: number): () => string {
  let content = '';
  let readAt = -Infinity;
  return () => {
    if (performance.now() - readAt >= everyMs) {
      content = readFileSync(file, 'utf8').trim();
      readAt = performance.now();
    }
    return content;
  };
}

/** Every form client-node reads (exec plugins, auth providers, ...), at the cost of importing it. */
async function withClientNode(kubeconfigPath: string): Promise<KubeConfigSource> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  const cluster = config.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig has no current cluster');
  return {
    server: new URL(cluster.server),
    credentials: async () => {
      const options: import('node:https').RequestOptions = { headers: {} };
      await config.applyToHTTPSOptions(options);
      return {
        ca: toBuffer(options.ca),
        cert: toBuffer(options.cert),
        key: toBuffer(options.key),
        servername: options.servername,
        rejectUnauthorized: options.rejectUnauthorized ?? true,
        headers: { ...(options.headers as Record<string, string>) },
      };
    },
  };
}

function toBuffer(value: unknown): Buffer | undefined {
  if (value === undefined || value === null) return undefined;
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value);
  return undefined;
}
