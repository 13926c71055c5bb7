/**
 * The delegated-authentication settings kube-apiserver publishes in
 * kube-system/extension-apiserver-authentication: the cluster client CA and
 * the front-proxy (request-header) CA, allowed names and header names. The
 * ConfigMap is watched so CA rotation needs no restart.
 */
import type { X509Certificate } from 'node:crypto';
import { Informer, type KubeObject } from '../backing/informer.js';
import type { KubeClient } from '../backing/kube-client.js';
import { parsePemBundle } from './x509-chain.js';

export interface RequestHeaderConfig {
  readonly caPem: string;
  readonly roots: readonly X509Certificate[];
  /** Empty means any certificate from the front-proxy CA may assert identities. */
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly uidHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

export interface AuthenticationConfig {
  readonly clientCAPem: string;
  readonly clientCA: readonly X509Certificate[];
  /** Undefined when kube-apiserver publishes no front-proxy CA: front-proxy authentication is off. */
  readonly requestHeader: RequestHeaderConfig | undefined;
}

interface ConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
}

export const authenticationConfigMap = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

export function parseAuthenticationConfig(data: Readonly<Record<string, string>>): AuthenticationConfig {
  const clientCAPem = data['client-ca-file'] ?? '';
  const requestHeaderCAPem = data['requestheader-client-ca-file'] ?? '';
  return {
    clientCAPem,
    clientCA: parsePemBundle(clientCAPem),
    requestHeader:
      requestHeaderCAPem === ''
        ? undefined
        : {
            caPem: requestHeaderCAPem,
            roots: parsePemBundle(requestHeaderCAPem),
            allowedNames: jsonList(data, 'requestheader-allowed-names'),
            usernameHeaders: jsonList(data, 'requestheader-username-headers'),
            uidHeaders: jsonList(data, 'requestheader-uid-headers'),
            groupHeaders: jsonList(data, 'requestheader-group-headers'),
            extraHeaderPrefixes: jsonList(data, 'requestheader-extra-headers-prefix'),
          },
  };
}

/** List-valued keys are JSON arrays, as requestheader_controller.go reads them. */
function jsonList(data: Readonly<Record<string, string>>, key: string): string[] {
  const raw = data[key];
  if (raw === undefined || raw.trim() === '') return [];
  const parsed: unknown = JSON.parse(raw);
  if (!Array.isArray(parsed) || !parsed.every((v): v is string => typeof v === 'string')) {
    throw new Error(`${authenticationConfigMap.namespace}/${authenticationConfigMap.name}: ${key} is not a JSON list of strings`);
  }
  return parsed.filter((v) => v !== '');
}

export type ConfigListener = (config: AuthenticationConfig) => void;

export class AuthenticationConfigSource {
  private config: AuthenticationConfig | undefined;
  private readonly listeners: ConfigListener[] = [];
  private readonly informer: Informer<ConfigMap>;

  constructor(
    client: KubeClient,
    private readonly onInvalid: (error: unknown) => void,
  ) {
    this.informer = new Informer<ConfigMap>(
      client,
      {
        path: `/api/v1/namespaces/${authenticationConfigMap.namespace}/configmaps`,
        fieldSelector: `metadata.name=${authenticationConfigMap.name}`,
      },
      {
        onList: (configMaps) => {
          const configMap = configMaps[0];
          if (configMap !== undefined) this.update(configMap);
        },
        onEvent: (event) => {
          if (event.type !== 'DELETED') this.update(event.object);
        },
        onError: onInvalid,
      },
    );
  }

  start(): void {
    this.informer.start();
  }

  stop(): void {
    this.informer.stop();
  }

  current(): AuthenticationConfig | undefined {
    return this.config;
  }

  onChange(listener: ConfigListener): void {
    this.listeners.push(listener);
  }

  private update(configMap: ConfigMap): void {
    try {
      this.config = parseAuthenticationConfig(configMap.data ?? {});
    } catch (error) {
      // Keep serving with the last good configuration rather than none.
      this.onInvalid(error);
      return;
    }
    for (const listener of this.listeners) listener(this.config);
  }
}
