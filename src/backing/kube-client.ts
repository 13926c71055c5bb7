/**
 * A thin JSON client for kube-apiserver. The server relays and caches raw
 * JSON (timestamps, unknown fields and Status errors must survive byte for
 * byte), so it talks HTTP itself; kubeconfig.ts supplies the endpoint and
 * credentials (client certs, bearer tokens, in-cluster token files that
 * rotate).
 *
 * Metadata-only reads follow client-go's metadata client
 * (k8s.io/client-go/metadata): a list asks for PartialObjectMetadataList,
 * a watch for PartialObjectMetadata (each event carries one object). A
 * list may also be asked for as a meta.k8s.io Table, as kubectl asks for
 * server-side printing.
 */
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { loadKubeConfig, type Credentials, type KubeConfigSource } from './kubeconfig.js';
import { decodeCollectionVersions, decodeStatus, protobufMediaType, type CollectionVersions, type ObjectVersion } from './metadata-protobuf.js';
import { projectVersion } from '../project-root.js';

export interface KubeStatus {
  readonly kind?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly uid?: string;
    readonly causes?: readonly { reason?: string; message?: string; field?: string }[];
    readonly retryAfterSeconds?: number;
  };
}

/** A successful answer with the `Warning` headers kube-apiserver attached (e.g. fieldValidation=Warn). */
export interface KubeResponse<T> {
  readonly body: T;
  readonly warnings: readonly string[];
}

/** A non-2xx answer from kube-apiserver, carrying its metav1.Status when it sent one. */
export class KubeApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly status: KubeStatus | undefined,
    readonly warnings: readonly string[] = [],
    readonly retryAfter?: string,
  ) {
    super(`kube-apiserver answered ${statusCode}${status?.message === undefined ? '' : `: ${status.message}`}`);
    this.name = 'KubeApiError';
  }

  get reason(): string | undefined {
    return this.status?.reason;
  }
}

/**
 * kube-apiserver did not answer: the connection failed (refused, reset,
 * closed mid-answer) or nothing arrived for the request's timeout. Not an
 * answer about the request: callers report it as a dependency failure
 * (backing/errors.ts `dependencyFailure`), never as a refusal.
 */
export class KubeUnavailableError extends Error {
  constructor(
    readonly timedOut: boolean,
    options: { readonly cause: unknown },
  ) {
    super(`kube-apiserver ${timedOut ? 'did not answer in time' : 'is unreachable'}: ${(options.cause as Error).message}`, options);
    this.name = 'KubeUnavailableError';
  }
}

/**
 * kube-apiserver says the object does not exist: a 404 Status (NotFound).
 * A 404 without a Status is Go's `404 page not found` for a path nothing
 * serves (a CRD not installed, or not loaded yet while kube-apiserver
 * starts): it says nothing about the object.
 */
export function isNotFound(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 404 && error.status !== undefined;
}

/** A 409: the object changed since it was read (or, for a create, it exists). */
export function isConflict(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 409;
}

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** Longest silence from kube-apiserver before the call fails (default 30 s). */
  readonly timeoutMs?: number;
  /**
   * Sending it twice changes nothing (a review: SubjectAccessReview,
   * TokenReview), so it may be sent again like a GET when kube-apiserver
   * closed the pooled connection it went out on (see `send`).
   */
  readonly idempotent?: boolean;
}

/** What a list or watch carries: whole objects, or only their metadata (names, labels, resourceVersions). */
export type Representation = 'full' | 'metadata';

/** A list may also be asked for as a meta.k8s.io Table (its printer columns; rows without objects with includeObject=None). */
export type ListRepresentation = Representation | 'table';

/**
 * The Accept header for each representation and answer shape. A list and a
 * watch event are different kinds: asked for PartialObjectMetadataList on a
 * watch, kube-apiserver fails to encode every event and closes the stream.
 * No plain-JSON fallback for metadata or a Table: a server that cannot
 * answer so must fail (406) rather than send whole objects (Secrets).
 */
const listAccept: Readonly<Record<ListRepresentation, string>> = {
  full: 'application/json',
  metadata: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  table: 'application/json;as=Table;g=meta.k8s.io;v=v1',
};

/** listVersions(): protobuf first, the JSON form for a server without it (an aggregated API server such as this one). */
const versionsAccept = `${protobufMediaType};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, ${listAccept.metadata}`;

const watchAccept: Readonly<Record<Representation, string>> = {
  full: 'application/json',
  metadata: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
};

export interface WatchEvent<T> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: T;
}

/** How long a call to kube-apiserver may go without an answer (no byte for this long) before it fails as timed out. */
export const kubeCallTimeoutMs = 30_000;

/** Shorter than kube-apiserver's IdleTimeout (k8s.io/apiserver secure_serving.go: 90 s), and than common load balancers'. */
const idleSocketTimeoutMs = 30_000;

/** How a pooled connection the server had closed fails: the request went out and the connection ended without an answer. */
const staleConnectionCodes: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE']);

/** A request that went out on a reused connection that turned out closed: a KubeUnavailableError that `send` may retry. */
class StaleConnectionError extends KubeUnavailableError {
  constructor(cause: Error) {
    super(false, { cause: new Error(`reused connection closed: ${cause.message}`, { cause }) });
  }
}

/** client-go's form: `<binary>/<version> (<os>/<arch>)`. */
function userAgent(): string {
  return `hostclaim-apiserver/v${projectVersion()} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch})`;
}

export class KubeClient {
  private agent: https.Agent | undefined;
  /** The TLS identity `agent` was built with. */
  private agentCredentials: Credentials | undefined;

  readonly server: URL;

  private constructor(private readonly config: KubeConfigSource) {
    this.server = config.server;
  }

  /** From a kubeconfig file, or the in-cluster service account when no path is given. */
  static async load(kubeconfigPath: string | undefined): Promise<KubeClient> {
    return new KubeClient(await loadKubeConfig(kubeconfigPath));
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.call<T>(method, path, options)).body;
  }

  /** Like request(), keeping the Warning headers. */
  call<T>(method: string, path: string, options: RequestOptions = {}): Promise<KubeResponse<T>> {
    return this.exchange<T>(method, path, options, 'application/json');
  }

  private async exchange<T>(method: string, path: string, options: RequestOptions, accept: string): Promise<KubeResponse<T>> {
    const { response, bytes } = await this.successful(method, path, options, accept);
    return { body: JSON.parse(bytes.toString('utf8')) as T, warnings: response.headersDistinct['warning'] ?? [] };
  }

  /** The answer of a request, or its error as a KubeApiError (with the Status kube-apiserver sent, JSON or protobuf). */
  private async successful(method: string, path: string, options: RequestOptions, accept: string): Promise<{ readonly response: IncomingMessage; readonly bytes: Buffer }> {
    const answered = await this.answer(method, path, options, accept);
    const { response, bytes } = answered;
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const retryAfter = response.headers['retry-after'];
      throw new KubeApiError(status, parseStatus(bytes), response.headersDistinct['warning'] ?? [], retryAfter);
    }
    return answered;
  }

  /** One request and its whole answer; a failure while reading it is kube-apiserver being unavailable. */
  private async answer(method: string, path: string, options: RequestOptions, accept: string): Promise<{ readonly response: IncomingMessage; readonly bytes: Buffer }> {
    const response = await this.send(method, path, options, accept, options.timeoutMs);
    const bytes = await readBody(response).catch((error: unknown) => {
      throw unavailable(error);
    });
    return { response, bytes };
  }

  get<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  /** A plain-text GET (a health endpoint such as /readyz): its body, or a KubeApiError when not 2xx. */
  async getText(path: string, signal?: AbortSignal): Promise<string> {
    const { response, bytes } = await this.answer('GET', path, signal === undefined ? {} : { signal }, 'text/plain');
    const text = bytes.toString('utf8');
    const status = response.statusCode ?? 0;
    // kube's health answers name the failed checks ("[-]etcd failed: reason withheld"): kept for the log.
    if (status < 200 || status > 299) throw new KubeApiError(status, { message: text.trim().slice(0, 500) });
    return text;
  }

  /** A collection, as whole objects, a PartialObjectMetadataList or a Table. */
  async list<T>(path: string, query: RequestOptions['query'], representation: ListRepresentation, signal?: AbortSignal): Promise<T> {
    const accept = listAccept[representation];
    return (await this.exchange<T>('GET', path, { query, ...(signal === undefined ? {} : { signal }) }, accept)).body;
  }

  /**
   * Which objects a collection holds and at which resourceVersions, from a
   * PartialObjectMetadataList asked for in protobuf (metadata-protobuf.ts),
   * or in JSON from a server that does not offer protobuf.
   */
  async listVersions(path: string, query: RequestOptions['query'], signal?: AbortSignal): Promise<CollectionVersions> {
    const { response, bytes } = await this.successful('GET', path, { query, ...(signal === undefined ? {} : { signal }) }, versionsAccept);
    if ((response.headers['content-type'] ?? '').startsWith(protobufMediaType)) return decodeCollectionVersions(bytes);
    const list = JSON.parse(bytes.toString('utf8')) as { metadata?: { resourceVersion?: string }; items?: { metadata?: Partial<ObjectVersion> }[] | null };
    return {
      resourceVersion: list.metadata?.resourceVersion ?? '',
      items: (list.items ?? []).map(({ metadata }) => ({ namespace: metadata?.namespace ?? '', name: metadata?.name ?? '', resourceVersion: metadata?.resourceVersion ?? '' })),
    };
  }

  create<T>(path: string, body: unknown, options: Pick<RequestOptions, 'timeoutMs' | 'idempotent'> = {}): Promise<T> {
    return this.request<T>('POST', path, { ...options, body });
  }

  /**
   * Streams a watch, each event's object in the given representation.
   * Resolves when the server ends the stream (timeout or close); rejects on
   * transport errors or a non-200 answer.
   */
  async watch<T>(
    path: string,
    query: Readonly<Record<string, string | undefined>>,
    onEvent: (event: WatchEvent<T>) => void,
    options: { readonly signal?: AbortSignal; readonly representation?: Representation } = {},
  ): Promise<void> {
    const accept = watchAccept[options.representation ?? 'full'];
    const response = await this.send('GET', path, { query: { ...query, watch: 'true' }, ...(options.signal === undefined ? {} : { signal: options.signal }) }, accept, 0);
    if (response.statusCode !== 200) {
      throw new KubeApiError(response.statusCode ?? 0, parseStatus(await readBody(response)));
    }
    const lines = createInterface({ input: response, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (line.trim() !== '') onEvent(JSON.parse(line) as WatchEvent<T>);
      }
    } finally {
      response.destroy();
    }
  }

  /**
   * One request. A pooled connection kube-apiserver closed as idle just as
   * the request went out on it (its IdleTimeout, 90 s) fails with a reset
   * and no answer: the request never reached a handler. Like client-go, a
   * GET (or an idempotent review) is then sent once more on a new
   * connection; a write is not, as nothing tells a lost request from a lost
   * answer. Closing idle connections first (`idleSocketTimeoutMs`) makes
   * the race rare.
   */
  private async send(
    method: string,
    path: string,
    options: RequestOptions,
    accept: string,
    timeoutMs = kubeCallTimeoutMs,
  ): Promise<IncomingMessage> {
    const replayable = method === 'GET' || options.idempotent === true;
    try {
      return await this.attempt(method, path, options, accept, timeoutMs);
    } catch (error) {
      if (!replayable || !(error instanceof StaleConnectionError)) throw error;
      return this.attempt(method, path, options, accept, timeoutMs);
    }
  }

  private async attempt(
    method: string,
    path: string,
    options: RequestOptions,
    accept: string,
    timeoutMs: number,
  ): Promise<IncomingMessage> {
    const url = new URL(path, this.server);
    // A dot segment (`..`, `%2e%2e`) would be resolved here and the request would reach another object
    // (another namespace's Secret) than the one its caller built and authorized: refuse what the parser rewrites.
    if (url.pathname !== path.split('?')[0]) throw new Error(`refusing a request path that does not stay as built: ${JSON.stringify(path)}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const credentials = await this.config.credentials();
    const headers: Record<string, string> = {
      ...credentials.headers,
      Accept: accept,
      // kube-apiserver names the field manager of our writes (the binder's status, Secret copies) after this, as client-go's default.
      'User-Agent': userAgent(),
    };
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      // Node frames a DELETE body with neither Content-Length nor chunking; kube-apiserver would ignore it.
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = https.request(url, {
        method,
        headers,
        agent: this.sharedAgent(credentials),
        signal: options.signal,
        timeout: timeoutMs,
      });
      req.on('response', resolve);
      req.on('error', (error: Error & { code?: string }) => {
        reject(req.reusedSocket && staleConnectionCodes.has(error.code ?? '') ? new StaleConnectionError(error) : unavailable(error));
      });
      req.on('timeout', () => {
        req.destroy(new KubeUnavailableError(true, { cause: new Error(`no answer within ${timeoutMs} ms`) }));
      });
      req.end(payload);
    });
  }

  /** One keep-alive agent per TLS identity (rebuilt when rotated files change it). */
  private sharedAgent(options: Credentials): https.Agent {
    if (this.agent === undefined || !sameTlsIdentity(options, this.agentCredentials)) {
      this.agent?.destroy();
      this.agent = new https.Agent({
        keepAlive: true,
        // A pooled connection idle this long is closed here, before kube-apiserver's IdleTimeout (90 s) closes it under a request.
        timeout: idleSocketTimeoutMs,
        maxSockets: 64,
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        rejectUnauthorized: options.rejectUnauthorized,
        ...(options.servername === undefined ? {} : { servername: options.servername }),
      });
      this.agentCredentials = options;
    }
    return this.agent;
  }

  /** The identity this client presents (its CA aside): peers of this server authenticate replicas by it. */
  credentials(): Promise<Credentials> {
    return this.config.credentials();
  }

  close(): void {
    this.agent?.destroy();
  }
}

/**
 * Whether two credentials are the same TLS identity. Compared field by field
 * on every request: serializing the PEM Buffers into a key, as before, cost
 * ~150 µs per request to kube-apiserver.
 */
export function sameTlsIdentity(a: Credentials, b: Credentials | undefined): boolean {
  return (
    b !== undefined &&
    sameBytes(a.ca, b.ca) &&
    sameBytes(a.cert, b.cert) &&
    sameBytes(a.key, b.key) &&
    a.rejectUnauthorized === b.rejectUnauthorized &&
    a.servername === b.servername
  );
}

function sameBytes(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.equals(b));
}

/** A transport failure as KubeUnavailableError; an abort by the caller's signal stays what it is. */
function unavailable(error: unknown): Error {
  if (error instanceof KubeUnavailableError || (error instanceof Error && error.name === 'AbortError')) return error;
  return new KubeUnavailableError(false, { cause: error });
}

async function readBody(response: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseStatus(bytes: Buffer): KubeStatus | undefined {
  const inProtobuf = decodeStatus(bytes);
  if (inProtobuf !== undefined) return inProtobuf;
  try {
    const parsed = JSON.parse(bytes.toString('utf8')) as KubeStatus;
    return parsed.kind === 'Status' ? parsed : undefined;
  } catch {
    return undefined;
  }
}
