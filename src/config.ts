/** Command-line flags, named like k8s.io/apiserver's so operators recognise them. */
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { parseArgs } from 'node:util';
import { parseGoDuration } from './api/go-duration.js';

export interface ServerConfig {
  readonly securePort: number;
  readonly bindAddress: string;
  /** The address peer replicas reach this one at (kube-apiserver's --advertise-address); undefined: none found. */
  readonly advertiseAddress: string | undefined;
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  /** Undefined: in-cluster service account. */
  readonly kubeconfig: string | undefined;
  /** The Service fronting this server, for the self-signed fallback certificate's SAN. */
  readonly serviceName: string;
  readonly serviceNamespace: string;
  /** Where backing records live; tenants have no RBAC there. */
  readonly storageNamespace: string;
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  readonly shutdownTimeoutSeconds: number;
  /** kube-apiserver's `--request-timeout`: the deadline of every request but watches. */
  readonly requestTimeoutMs: number;
  /** The controllers this replica may run (kube-controller-manager's `--controllers`): today only the binder. */
  readonly controllers: ReadonlySet<ControllerName>;
}

export const controllerNames = ['binder'] as const;
export type ControllerName = (typeof controllerNames)[number];

export function parseConfig(argv: readonly string[]): ServerConfig {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      'secure-port': { type: 'string', default: '8443' },
      'bind-address': { type: 'string', default: '0.0.0.0' },
      'advertise-address': { type: 'string' },
      'tls-cert-file': { type: 'string' },
      'tls-private-key-file': { type: 'string' },
      kubeconfig: { type: 'string' },
      'service-name': { type: 'string', default: 'hostclaim-apiserver' },
      'service-namespace': { type: 'string', default: 'hostclaim-system' },
      'storage-namespace': { type: 'string', default: 'hostclaim-system' },
      'max-requests-inflight': { type: 'string', default: '400' },
      'max-mutating-requests-inflight': { type: 'string', default: '200' },
      'shutdown-timeout-seconds': { type: 'string', default: '30' },
      'request-timeout': { type: 'string', default: '1m0s' },
      controllers: { type: 'string', default: '*' },
    },
  });
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-private-key-file'];
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
  }
  return {
    securePort: positiveInteger('secure-port', values['secure-port']),
    bindAddress: values['bind-address'],
    advertiseAddress: advertiseAddress(values['advertise-address'], values['bind-address']),
    tlsCertFile: certFile,
    tlsPrivateKeyFile: keyFile,
    kubeconfig: values.kubeconfig,
    serviceName: values['service-name'],
    serviceNamespace: values['service-namespace'],
    storageNamespace: values['storage-namespace'],
    maxRequestsInflight: positiveInteger('max-requests-inflight', values['max-requests-inflight']),
    maxMutatingRequestsInflight: positiveInteger('max-mutating-requests-inflight', values['max-mutating-requests-inflight']),
    shutdownTimeoutSeconds: positiveInteger('shutdown-timeout-seconds', values['shutdown-timeout-seconds']),
    requestTimeoutMs: positiveDuration('request-timeout', values['request-timeout']),
    controllers: enabledControllers(values.controllers),
  };
}

/**
 * kube-controller-manager's list syntax: `*` enables every controller,
 * `name` one, `-name` disables one (e.g. `--controllers=*,-binder` for a
 * replica that only serves the API).
 */
function enabledControllers(list: string): ReadonlySet<ControllerName> {
  const items = list.split(',').map((item) => item.trim()).filter((item) => item !== '');
  for (const item of items) {
    const name = item.replace(/^-/, '');
    if (item !== '*' && !(controllerNames as readonly string[]).includes(name)) {
      throw new Error(`--controllers: unknown controller "${name}"; known: ${controllerNames.join(', ')}`);
    }
  }
  return new Set(controllerNames.filter((name) => items.includes(name) || (items.includes('*') && !items.includes(`-${name}`))));
}

/**
 * As kube-apiserver's flag: given, it must be an IP address; unset, the
 * bind address when that is a specific one, else this host's first
 * non-loopback IPv4 address (in a pod, its pod IP).
 */
function advertiseAddress(flag: string | undefined, bindAddress: string): string | undefined {
  if (flag !== undefined) {
    if (isIP(flag) === 0) throw new Error(`--advertise-address must be an IP address, got "${flag}"`);
    return flag;
  }
  if (bindAddress !== '0.0.0.0' && bindAddress !== '::') return bindAddress;
  const addresses = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []);
  return addresses.find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
}

/** A Go duration, as kube's duration flags take (e.g. `1m0s`), in milliseconds. */
function positiveDuration(flag: string, value: string): number {
  let nanoseconds: bigint;
  try {
    nanoseconds = parseGoDuration(value);
  } catch (error) {
    throw new Error(`--${flag}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (nanoseconds <= 0n) throw new Error(`--${flag} must be positive, got "${value}"`);
  return Number(nanoseconds) / 1e6;
}

function positiveInteger(flag: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`--${flag} must be a positive integer, got "${value}"`);
  return parsed;
}
