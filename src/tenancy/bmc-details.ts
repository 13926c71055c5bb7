/**
 * What of a BareMetalHost's BMC never leaves the server through this API,
 * to tenants or infrastructure admins alike: its address (and the host part
 * of it, an IP or name on the management network) and the name of its
 * credentials Secret. BMO's error messages and annotations may quote them
 * (an unknown BMC type quotes the address, a missing Secret its name,
 * `kubectl.kubernetes.io/last-applied-configuration` the whole spec,
 * `baremetalhost.metal3.io/status` the credentials reference).
 */
import type { BareMetalHost } from '../metal3/types.js';

export const bmcAddressPlaceholder = '<BMC address>';
export const bmcCredentialsPlaceholder = '<BMC credentials>';

interface BmcSpec {
  readonly address?: unknown;
  readonly credentialsName?: unknown;
}

/** The host's BMC strings, longest first (the address before its host part), each with its placeholder. */
function bmcStrings(host: BareMetalHost): [string, string][] {
  const bmc = (host.spec['bmc'] ?? {}) as BmcSpec;
  const found: [string, string][] = [];
  if (typeof bmc.address === 'string' && bmc.address !== '') {
    found.push([bmc.address, bmcAddressPlaceholder]);
    const hostPart = addressHost(bmc.address);
    if (hostPart !== undefined) found.push([hostPart, bmcAddressPlaceholder]);
  }
  for (const name of [bmc.credentialsName, goodCredentialsName(host)]) {
    if (typeof name === 'string' && name !== '') found.push([name, bmcCredentialsPlaceholder]);
  }
  return found.sort(([a], [b]) => b.length - a.length);
}

/** The Secret BMO last used successfully (it may differ from the spec's while credentials are being changed). */
function goodCredentialsName(host: BareMetalHost): unknown {
  const good = host.status?.['goodCredentials'] as { credentials?: { name?: unknown } } | undefined;
  return good?.credentials?.name;
}

/** The host (IP or name) of a BMC address such as `redfish+http://192.0.2.1:8000/...` or `ipmi://[2001:db8::1]:623`, or a bare `192.0.2.1`. */
function addressHost(address: string): string | undefined {
  const afterScheme = address.includes('://') ? address.slice(address.indexOf('://') + 3) : address;
  const authority = afterScheme.split(/[/?#]/, 1)[0] ?? '';
  const bracketed = /^\[([^\]]+)\]/.exec(authority);
  const hostPart = bracketed?.[1] ?? authority.replace(/:\d*$/, '');
  return hostPart === '' ? undefined : hostPart;
}

/** The text with every BMC address and credentials name of the host replaced by a placeholder. */
export function withoutBmcDetails(text: string, host: BareMetalHost): string {
  let result = text;
  for (const [secret, placeholder] of bmcStrings(host)) result = result.split(secret).join(placeholder);
  return result;
}

/** Whether the text quotes the host's BMC address or credentials name. */
export function revealsBmcDetails(text: string, host: BareMetalHost): boolean {
  return bmcStrings(host).some(([secret]) => text.includes(secret));
}
