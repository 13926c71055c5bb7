import { describe, expect, it } from 'vitest';
import { sameJson } from '../../../../src/backing/json.js';
import { bindingPatch, forwardedAnnotation, forwardedTo, rebootHandled, withoutWorkload, withWorkload, type SecretCopies } from '../../../../src/controllers/binder/host-spec.js';
import { hostKeys, type BareMetalHost } from '../../../../src/metal3/types.js';
import { claim, deepFreeze, host } from './fixtures.js';

const noCopies: SecretCopies = {};
const allowed = { detachAllowed: true };
const denied = { detachAllowed: false };
const remediation = `${hostKeys.rebootPrefix}capm3-remediation`;
const tenantKey = `${hostKeys.rebootPrefix}tenant-hold`;

function annotations(h: BareMetalHost): Record<string, string> {
  return h.metadata.annotations ?? {};
}

describe('withWorkload', () => {
  it('sets online from poweredOn', () => {
    expect(withWorkload(host(), claim({ spec: { poweredOn: true } }), noCopies, denied).spec.online).toBe(true);
    expect(withWorkload(host({ spec: { online: true } }), claim({ spec: { poweredOn: false } }), noCopies, denied).spec.online).toBe(false);
    expect(withWorkload(host({ spec: { online: true } }), claim({ spec: {} }), noCopies, denied).spec.online).toBe(false);
  });

  it('sets the image when the host has none', () => {
    const image = { url: 'http://images/a.qcow2', checksum: 'http://images/a.sha256', checksumType: 'sha256', format: 'qcow2' };
    const next = withWorkload(host(), claim({ spec: { poweredOn: true, image } }), noCopies, denied);
    expect(next.spec.image).toEqual(image);
    // An image with an empty URL counts as none.
    expect(withWorkload(host({ spec: { image: { url: '' } } }), claim({ spec: { image } }), noCopies, denied).spec.image).toEqual(image);
  });

  it('keeps the deployed image when the host has a different one', () => {
    const deployed = { url: 'http://images/old.qcow2', checksum: 'old' };
    const next = withWorkload(host({ spec: { image: deployed } }), claim({ spec: { image: { url: 'http://images/new.qcow2', checksum: 'new' } } }), noCopies, denied);
    expect(next.spec.image).toEqual(deployed);
  });

  it('updates the image details when the URL is the same', () => {
    const next = withWorkload(
      host({ spec: { image: { url: 'http://images/a.qcow2', checksum: 'old' } } }),
      claim({ spec: { image: { url: 'http://images/a.qcow2', checksum: 'new' } } }),
      noCopies,
      denied,
    );
    expect(next.spec.image).toEqual({ url: 'http://images/a.qcow2', checksum: 'new' });
  });

  it('clears the image when the claim has none', () => {
    const deployed = host({ spec: { image: { url: 'http://images/a.qcow2' } } });
    const cleared = withWorkload(deployed, claim({ spec: {} }), noCopies, denied);
    expect(cleared.spec).not.toHaveProperty('image');
    expect(withWorkload(deployed, claim({ spec: { image: null } }), noCopies, denied).spec).not.toHaveProperty('image');
    expect(withWorkload(deployed, claim({ spec: { image: { url: '' } } }), noCopies, denied).spec).not.toHaveProperty('image');
  });

  it('replaces the tenant ociAuthSecretName with the copy, or removes it', () => {
    const image = { url: 'oci://registry/a:1', ociAuthSecretName: 'tenant-pull-secret' };
    const copied = withWorkload(host(), claim({ spec: { image } }), { ociAuth: 'copy-oci' }, denied);
    expect(copied.spec.image).toEqual({ url: 'oci://registry/a:1', ociAuthSecretName: 'copy-oci' });
    const uncopied = withWorkload(host(), claim({ spec: { image } }), noCopies, denied);
    expect(uncopied.spec.image).toEqual({ url: 'oci://registry/a:1' });
    expect(JSON.stringify(copied)).not.toContain('tenant-pull-secret');
    expect(JSON.stringify(uncopied)).not.toContain('tenant-pull-secret');
  });

  it('points the data secrets to the copies in the host namespace', () => {
    const c = claim({
      spec: {
        userData: { name: 'tenant-user-data', namespace: 'tenant-a' },
        networkData: { name: 'tenant-network-data' },
        metaData: { name: 'tenant-meta-data' },
      },
    });
    const next = withWorkload(host({ namespace: 'infra-2' }), c, { userData: 'copy-u', networkData: 'copy-n', metaData: 'copy-m' }, denied);
    expect(next.spec.userData).toEqual({ name: 'copy-u', namespace: 'infra-2' });
    expect(next.spec.networkData).toEqual({ name: 'copy-n', namespace: 'infra-2' });
    expect(next.spec.metaData).toEqual({ name: 'copy-m', namespace: 'infra-2' });
    const references = JSON.stringify([next.spec.userData, next.spec.networkData, next.spec.metaData]);
    expect(references).not.toContain('tenant-');
  });

  it('removes data secrets that have no copy', () => {
    const before = host({ spec: { userData: { name: 'old', namespace: 'infra' }, networkData: { name: 'old-n', namespace: 'infra' } } });
    const next = withWorkload(before, claim(), { metaData: 'copy-m' }, denied);
    expect(next.spec).not.toHaveProperty('userData');
    expect(next.spec).not.toHaveProperty('networkData');
    expect(next.spec.metaData).toEqual({ name: 'copy-m', namespace: 'infra' });
  });

  it('sets and clears customDeploy', () => {
    const set = withWorkload(host(), claim({ spec: { customDeploy: { method: 'install_coreos' } } }), noCopies, denied);
    expect(set.spec.customDeploy).toEqual({ method: 'install_coreos' });
    expect(withWorkload(set, claim(), noCopies, denied).spec).not.toHaveProperty('customDeploy');
  });

  it('keeps what it does not own: consumerRef, BMC settings, other fields, labels and annotations', () => {
    const before = host({ labels: { rack: 'r1' }, annotations: { note: 'admin' }, spec: { bootMode: 'UEFI', disablePowerOff: false } });
    const next = withWorkload(before, claim({ spec: { poweredOn: true } }), noCopies, denied);
    expect(next.spec.consumerRef).toEqual(before.spec.consumerRef);
    expect(next.spec['bmc']).toEqual(before.spec['bmc']);
    expect(next.spec['bootMode']).toBe('UEFI');
    expect(next.metadata.labels).toEqual({ rack: 'r1' });
    expect(annotations(next)['note']).toBe('admin');
    expect(next.metadata.resourceVersion).toBe('100');
    expect(next.status).toEqual(before.status);
  });

  it('never mutates its inputs', () => {
    const h = deepFreeze(host({ annotations: { [forwardedAnnotation]: JSON.stringify({ [tenantKey]: '' }), [tenantKey]: '' } }));
    const c = deepFreeze(
      claim({
        spec: { poweredOn: true, image: { url: 'oci://a', ociAuthSecretName: 's' }, userData: { name: 'u' } },
        annotations: { [hostKeys.reboot]: '', [hostKeys.detached]: '' },
      }),
    );
    const copies = deepFreeze({ userData: 'copy-u', ociAuth: 'copy-oci' });
    const snapshot = structuredClone({ h, c, copies });
    const next = withWorkload(h, c, copies, allowed);
    expect(next).not.toBe(h);
    expect({ h, c, copies }).toEqual(snapshot);
  });

  it('is idempotent in the ordinary case', () => {
    const c = claim({
      spec: { poweredOn: true, image: { url: 'http://a' }, customDeploy: { method: 'm' } },
      annotations: { [hostKeys.reboot]: '', [tenantKey]: '{"mode":"hard"}', [hostKeys.detached]: '' },
    });
    const copies = { userData: 'copy-u' };
    const once = withWorkload(host(), c, copies, allowed);
    const twice = withWorkload(once, c, copies, allowed);
    expect(sameJson(once, twice)).toBe(true);
  });
});

describe('annotation forwarding', () => {
  it('forwards reboot.metal3.io and reboot.metal3.io/<key> and records them', () => {
    const c = claim({ annotations: { [hostKeys.reboot]: '{"mode":"soft"}', [tenantKey]: '', note: 'tenant-note' } });
    const next = withWorkload(host(), c, noCopies, denied);
    expect(annotations(next)[hostKeys.reboot]).toBe('{"mode":"soft"}');
    expect(annotations(next)[tenantKey]).toBe('');
    expect(forwardedTo(next)).toEqual({ [hostKeys.reboot]: '{"mode":"soft"}', [tenantKey]: '' });
    // Other annotations stay on the claim.
    expect(annotations(next)).not.toHaveProperty('note');
  });

  it('never forwards host-controlling annotations other than reboot and (when allowed) detached', () => {
    const c = claim({
      annotations: {
        [hostKeys.paused]: 'tenant',
        [hostKeys.unhealthy]: '',
        'inspect.metal3.io': '',
        'baremetalhost.metal3.io/status': '{}',
        'reboot.metal3.io.evil/x': '',
        'rebootx.metal3.io': '',
      },
    });
    const next = withWorkload(host(), c, noCopies, allowed);
    expect(next.metadata.annotations ?? {}).toEqual({});
    expect(forwardedTo(next)).toEqual({});
  });

  it('removes a forwarded annotation from the host when it is removed from the claim', () => {
    const forwarded = withWorkload(host(), claim({ annotations: { [hostKeys.reboot]: '', [tenantKey]: '' } }), noCopies, denied);
    const afterKeyRemoved = withWorkload(forwarded, claim({ annotations: { [hostKeys.reboot]: '' } }), noCopies, denied);
    expect(annotations(afterKeyRemoved)).not.toHaveProperty(tenantKey);
    expect(annotations(afterKeyRemoved)[hostKeys.reboot]).toBe('');
    expect(forwardedTo(afterKeyRemoved)).toEqual({ [hostKeys.reboot]: '' });

    const afterAllRemoved = withWorkload(afterKeyRemoved, claim(), noCopies, denied);
    expect(annotations(afterAllRemoved)).not.toHaveProperty(hostKeys.reboot);
    expect(annotations(afterAllRemoved)).not.toHaveProperty(forwardedAnnotation);
  });

  it('updates a forwarded value that changed on the claim', () => {
    const forwarded = withWorkload(host(), claim({ annotations: { [tenantKey]: '' } }), noCopies, denied);
    const next = withWorkload(forwarded, claim({ annotations: { [tenantKey]: '{"mode":"hard"}' } }), noCopies, denied);
    expect(annotations(next)[tenantKey]).toBe('{"mode":"hard"}');
    expect(forwardedTo(next)).toEqual({ [tenantKey]: '{"mode":"hard"}' });
  });

  it('never removes host annotations it did not forward', () => {
    const foreign = { [remediation]: '', [hostKeys.reboot]: '{"mode":"hard"}', [hostKeys.detached]: '{"deleteAction":"delay"}', note: 'x' };
    let current = host({ annotations: foreign });
    // Forward something, then take it away again, then release.
    current = withWorkload(current, claim({ annotations: { [tenantKey]: '' } }), noCopies, allowed);
    current = withWorkload(current, claim(), noCopies, allowed);
    for (const [key, value] of Object.entries(foreign)) expect(annotations(current)[key], key).toBe(value);
    const released = withoutWorkload(current, undefined);
    for (const [key, value] of Object.entries(foreign)) expect(annotations(released)[key], key).toBe(value);
  });

  it('does not take over an annotation someone else set on the host under the same key', () => {
    // An administrator (or CAPM3 remediation) holds the host off with a keyed reboot annotation.
    const held = host({ annotations: { [remediation]: 'admin' } });
    const c = claim({ annotations: { [remediation]: 'tenant' } });
    const forwarded = withWorkload(held, c, noCopies, denied);
    // When the tenant removes its annotation, the administrator's hold must still be there.
    const after = withWorkload(forwarded, claim(), noCopies, denied);
    expect(annotations(after)).toHaveProperty(remediation);
    expect(withoutWorkload(forwarded, undefined).metadata.annotations).toHaveProperty(remediation);
  });

  it('does not forward a plain reboot again once BMO handled it, and reports it handled while the claim still has it', () => {
    const c = claim({ annotations: { [hostKeys.reboot]: '' } });
    const requested = withWorkload(host(), c, noCopies, denied);
    expect(annotations(requested)[hostKeys.reboot]).toBe('');
    expect(rebootHandled(requested, c)).toBe(false);

    // BMO reboots the host and removes the annotation.
    const handled = structuredClone(requested);
    const hostAnnotations = { ...handled.metadata.annotations };
    Reflect.deleteProperty(hostAnnotations, hostKeys.reboot);
    handled.metadata.annotations = hostAnnotations;
    expect(rebootHandled(handled, c)).toBe(true);

    const next = withWorkload(handled, c, noCopies, denied);
    expect(annotations(next)).not.toHaveProperty(hostKeys.reboot);
    // The claim still has the request: it stays handled, and further passes do not reboot again.
    expect(rebootHandled(next, c)).toBe(true);
    const again = withWorkload(next, c, noCopies, denied);
    expect(annotations(again)).not.toHaveProperty(hostKeys.reboot);

    // Once the claim's request is cleared, nothing is left of it.
    const cleared = withWorkload(handled, claim(), noCopies, denied);
    expect(annotations(cleared)).not.toHaveProperty(hostKeys.reboot);
    expect(annotations(cleared)).not.toHaveProperty(forwardedAnnotation);
    expect(rebootHandled(cleared, claim())).toBe(false);
  });

  it('keeps forwarding keyed reboots while the claim has them (BMO never removes those)', () => {
    const c = claim({ annotations: { [tenantKey]: '' } });
    const forwarded = withWorkload(host(), c, noCopies, denied);
    expect(annotations(withWorkload(forwarded, c, noCopies, denied))[tenantKey]).toBe('');
    expect(rebootHandled(forwarded, c)).toBe(false);
  });

  it('rebootHandled is false unless we forwarded a plain reboot that is now gone and the claim still asks for it', () => {
    const c = claim({ annotations: { [hostKeys.reboot]: '' } });
    // Never forwarded (the host has no record): not handled.
    expect(rebootHandled(host(), c)).toBe(false);
    // Forwarded and still on the host: pending.
    expect(rebootHandled(host({ annotations: { [hostKeys.reboot]: '', [forwardedAnnotation]: JSON.stringify({ [hostKeys.reboot]: '' }) } }), c)).toBe(false);
    // Gone from the host, but the claim no longer asks: nothing to clear.
    expect(rebootHandled(host({ annotations: { [forwardedAnnotation]: JSON.stringify({ [hostKeys.reboot]: '' }) } }), claim())).toBe(false);
    // Only a keyed reboot was forwarded.
    expect(rebootHandled(host({ annotations: { [forwardedAnnotation]: JSON.stringify({ [tenantKey]: '' }) } }), c)).toBe(false);
  });

  it('forwards detached only when the policy allows detaching', () => {
    const c = claim({ annotations: { [hostKeys.detached]: '{"deleteAction":"delay"}' } });
    const denying = withWorkload(host(), c, noCopies, denied);
    expect(annotations(denying)).not.toHaveProperty(hostKeys.detached);
    const allowing = withWorkload(host(), c, noCopies, allowed);
    expect(annotations(allowing)[hostKeys.detached]).toBe('{"deleteAction":"delay"}');
    expect(forwardedTo(allowing)).toEqual({ [hostKeys.detached]: '{"deleteAction":"delay"}' });
    // Permission withdrawn: the forwarded detach goes away.
    const withdrawn = withWorkload(allowing, c, noCopies, denied);
    expect(annotations(withdrawn)).not.toHaveProperty(hostKeys.detached);
  });
});

describe('forwardedTo', () => {
  it('reads the recorded map and tolerates garbage', () => {
    expect(forwardedTo(host())).toEqual({});
    expect(forwardedTo(host({ annotations: { [forwardedAnnotation]: 'not json' } }))).toEqual({});
    expect(forwardedTo(host({ annotations: { [forwardedAnnotation]: '["a"]' } }))).toEqual({});
    expect(forwardedTo(host({ annotations: { [forwardedAnnotation]: 'null' } }))).toEqual({});
    expect(forwardedTo(host({ annotations: { [forwardedAnnotation]: '"x"' } }))).toEqual({});
    expect(forwardedTo(host({ annotations: { [forwardedAnnotation]: '{"a":"1","b":2,"c":null}' } }))).toEqual({ a: '1' });
  });
});

describe('withoutWorkload', () => {
  const bound = (): BareMetalHost =>
    host({
      labels: { rack: 'r1' },
      annotations: { note: 'admin' },
      spec: {
        online: true,
        image: { url: 'http://a', ociAuthSecretName: 'copy-oci' },
        customDeploy: { method: 'm' },
        userData: { name: 'copy-u', namespace: 'infra' },
        networkData: { name: 'copy-n', namespace: 'infra' },
        metaData: { name: 'copy-m', namespace: 'infra' },
      },
    });

  it('clears the workload and powers off, keeping consumerRef', () => {
    const before = bound();
    const next = withoutWorkload(before, undefined);
    for (const field of ['image', 'customDeploy', 'userData', 'networkData', 'metaData']) expect(next.spec, field).not.toHaveProperty(field);
    expect(next.spec.online).toBe(false);
    expect(next.spec.consumerRef).toEqual(before.spec.consumerRef);
    expect(next.spec['bmc']).toEqual(before.spec['bmc']);
    expect(next.metadata.labels).toEqual({ rack: 'r1' });
    expect(annotations(next)['note']).toBe('admin');
  });

  it('leaves the host on when the admin disabled power-off', () => {
    const before = bound();
    before.spec.disablePowerOff = true;
    expect(withoutWorkload(before, undefined).spec.online).toBe(true);
  });

  it('sets the node-reuse label only when a pool value is given', () => {
    expect(withoutWorkload(bound(), 'tenant-a.workers').metadata.labels).toEqual({ rack: 'r1', [hostKeys.nodeReuse]: 'tenant-a.workers' });
    expect(withoutWorkload(bound(), undefined).metadata.labels).not.toHaveProperty(hostKeys.nodeReuse);
    const unlabelled = host();
    expect(withoutWorkload(unlabelled, 'tenant-a.workers').metadata.labels).toEqual({ [hostKeys.nodeReuse]: 'tenant-a.workers' });
  });

  it('removes every forwarded annotation and the record of them', () => {
    const c = claim({ annotations: { [hostKeys.reboot]: '', [tenantKey]: '', [hostKeys.detached]: '' } });
    const forwarded = withWorkload(bound(), c, noCopies, allowed);
    expect(Object.keys(forwardedTo(forwarded)).sort()).toEqual([hostKeys.detached, hostKeys.reboot, tenantKey].sort());
    const next = withoutWorkload(forwarded, undefined);
    expect(annotations(next)).toEqual({ note: 'admin' });
  });

  it('never mutates its input and is idempotent', () => {
    const before = deepFreeze(bound());
    const snapshot = structuredClone(before);
    const once = withoutWorkload(before, 'tenant-a.workers');
    expect(before).toEqual(snapshot);
    expect(sameJson(withoutWorkload(once, 'tenant-a.workers'), once)).toBe(true);
  });
});

describe('bindingPatch', () => {
  const free = (options: Parameters<typeof host>[0] = {}): BareMetalHost => {
    const h = host(options);
    Reflect.deleteProperty(h.spec, 'consumerRef');
    return deepFreeze(h);
  };
  const consumerRef = { apiVersion: 'infra.tenancy.metal3.io/v1alpha1', kind: 'HostClaimRecord', namespace: 'hostclaim-system', name: 'tenant-a.web-0', uid: 'record-uid' };

  it("sets the consumerRef to the claim's record, with the judged resourceVersion as precondition", () => {
    expect(bindingPatch(free(), claim())).toEqual({ metadata: { resourceVersion: '100' }, spec: { consumerRef } });
  });

  it('consumes the node-reuse label, and leaves the other labels alone', () => {
    const marked = free({ labels: { [hostKeys.nodeReuse]: 'tenant-a.workers', rack: 'r1' } });
    expect(bindingPatch(marked, claim())).toEqual({ metadata: { resourceVersion: '100', labels: { [hostKeys.nodeReuse]: null } }, spec: { consumerRef } });
  });

  it('refuses a host without a resourceVersion: the patch would apply to any version', () => {
    const h = host();
    Reflect.deleteProperty(h.metadata, 'resourceVersion');
    expect(() => bindingPatch(h, claim())).toThrow('host infra/host-0 has no resourceVersion');
  });
});
