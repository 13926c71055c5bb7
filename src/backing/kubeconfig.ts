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
  /** Asked per request; files (certificates, tokens) are read again every few seconds, so rotated ones are picked up. */
  credentials(): Promise<Credentials>;
}

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';
/** client-go re-reads a rotated ServiceAccount token once a minute (transport/token_source.go). */
const tokenRereadMs = 60_000;
/**
 * How long a certificate, key or token file read from a kubeconfig is used
 * before it is read again: rotation is picked up within this, and a request
 * costs no file reads (three per request before, with new Buffers each).
 */
export const kubeconfigFileRereadMs = 10_000;

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
  const token = rereadEvery(path.join(serviceAccountDir, 'token'), tokenRereadMs, tokenText);
  const ca = rereadEvery(path.join(serviceAccountDir, 'ca.crt'), kubeconfigFileRereadMs, (bytes) => bytes);
  return {
    server: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`),
    credentials: () => Promise.resolve({ ca: ca(), rejectUnauthorized: true, headers: { Authorization: `Bearer ${token()}` } }),
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
  /** The material of a file field, read again every kubeconfigFileRereadMs, else of its `-data` field, decoded once. */
  const material = (fileKey: string, dataKey: string): (() => Buffer | undefined) => {
    const fromFile = file(fileKey);
    if (fromFile !== undefined) return rereadEvery(fromFile, kubeconfigFileRereadMs, (bytes) => bytes);
    const data = stringField(cluster, dataKey) ?? stringField(user, dataKey);
    const decoded = data === undefined ? undefined : Buffer.from(data, 'base64');
    return () => decoded;
  };
  const ca = material('certificate-authority', 'certificate-authority-data');
  const cert = material('client-certificate', 'client-certificate-data');
  const key = material('client-key', 'client-key-data');
  const tokenFile = file('tokenFile');
  const token = stringField(user, 'token');
  const fileToken = tokenFile === undefined ? undefined : rereadEvery(tokenFile, kubeconfigFileRereadMs, tokenText);
  const servername = stringField(cluster, 'tls-server-name');
  return {
    server: new URL(cluster['server']),
    credentials: () => {
      const bearer = token ?? fileToken?.();
      const headers: Record<string, string> = bearer === undefined || bearer === '' ? {} : { Authorization: `Bearer ${bearer}` };
      return Promise.resolve({
        ca: ca(),
        cert: cert(),
        key: key(),
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

/** The file's content as `parse` makes it, read again once it is older than `everyMs`. */
function rereadEvery<T>(file: string, everyMs: number, parse: (bytes: Buffer) => T): () => T {
  let content: T | undefined;
  let readAt = -Infinity;
  return () => {
    if (content === undefined || performance.now() - readAt >= everyMs) {
      content = parse(readFileSync(file));
      readAt = performance.now();
    }
    return content;
  };
}

function tokenText(bytes: Buffer): string {
  return bytes.toString('utf8').trim();
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
