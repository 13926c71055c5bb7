import { describe, expect, it } from 'vitest';
import type { BareMetalHost } from '../../../src/metal3/types.js';
import { revealsBmcDetails, withoutBmcDetails } from '../../../src/tenancy/bmc-details.js';

function host(address: string, credentialsName = 'node-1-bmc-secret', goodCredentials?: string): BareMetalHost {
  return {
    metadata: { name: 'node-1', namespace: 'infra' },
    spec: { bmc: { address, credentialsName } },
    status: goodCredentials === undefined ? {} : { goodCredentials: { credentials: { name: goodCredentials, namespace: 'infra' } } },
  };
}

describe('BMC details', () => {
  it('are replaced in text: the whole address first, then its host part, and the credentials names', () => {
    const h = host('redfish+http://192.0.2.7:8000/redfish/v1/Systems/1', 'node-1-bmc-secret', 'node-1-old-secret');
    expect(
      withoutBmcDetails(
        "Unknown BMC type 'redfish+http' for address redfish+http://192.0.2.7:8000/redfish/v1/Systems/1; ping 192.0.2.7 failed; secret node-1-bmc-secret (was node-1-old-secret)",
        h,
      ),
    ).toBe("Unknown BMC type 'redfish+http' for address <BMC address>; ping <BMC address> failed; secret <BMC credentials> (was <BMC credentials>)");
  });

  it('find the host part of IPv6, host-name and scheme-less addresses', () => {
    expect(withoutBmcDetails('at 2001:db8::5 or [2001:db8::5]', host('ipmi://[2001:db8::5]:623'))).toBe('at <BMC address> or [<BMC address>]');
    expect(withoutBmcDetails('bmc-7.oob.example timed out', host('idrac-virtualmedia://bmc-7.oob.example/redfish/v1/Systems/1'))).toBe('<BMC address> timed out');
    expect(withoutBmcDetails('10.0.0.9 refused', host('10.0.0.9'))).toBe('<BMC address> refused');
  });

  it('are found in values, and nothing else is', () => {
    const h = host('redfish://192.0.2.7/redfish/v1/Systems/1');
    expect(revealsBmcDetails('console at 192.0.2.7', h)).toBe(true);
    expect(revealsBmcDetails('{"credentialsName":"node-1-bmc-secret"}', h)).toBe(true);
    expect(revealsBmcDetails('rack r7, U12', h)).toBe(false);
    expect(revealsBmcDetails('anything', { metadata: { name: 'h' }, spec: {} })).toBe(false);
  });
});
