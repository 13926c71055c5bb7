import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../src/api/rest/types.js';
import { unwrapContinue, wrapContinue, type ListIdentity } from '../../../src/backing/continue-token.js';
import { backingName, bookkeeping } from '../../../src/backing/storage-mapping.js';

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (token: string): unknown => JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));

function record(namespace: string, name: string): ApiObject {
  return {
    apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
    kind: 'HostClaimRecord',
    metadata: {
      name: backingName(namespace, name),
      namespace: 'hostclaim-system',
      labels: { [bookkeeping.namespaceLabel]: namespace },
      annotations: { [bookkeeping.nameAnnotation]: name },
    },
  };
}

const list: ListIdentity = { namespace: 'tenant-a', labelSelector: 'app=web', name: undefined };
const kubeToken = (recordName: string, rv = 42): string => encode({ v: 'meta.k8s.io/v1', rv, start: `/${recordName}\u0000` });

describe('continue tokens', () => {
  it('issues a token that names no record, storage namespace or backing group', () => {
    const token = wrapContinue(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    const text = Buffer.from(token, 'base64url').toString('utf8');
    for (const hidden of ['tenant-a.web-1', 'hostclaim-system', 'infra.tenancy.metal3.io', 'HostClaimRecord', 'meta.k8s.io']) expect(text).not.toContain(hidden);
    expect(decode(token)).toEqual({ v: 'tenancy.metal3.io/v1', rv: 42, list: expect.any(String) as string, after: { namespace: 'tenant-a', name: 'web-1' } });
  });

  it("gives kube-apiserver back its own token for the next page", () => {
    const token = wrapContinue(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    expect(decode(unwrapContinue(token, list))).toEqual({ v: 'meta.k8s.io/v1', rv: 42, start: '/tenant-a.web-1\u0000' });
  });

  it('maps digest-named records through their bookkeeping, both ways', () => {
    const long = 'x'.repeat(250);
    const last = record('tenant-a', long);
    expect(last.metadata.name).toMatch(/^h-/);
    const token = wrapContinue(kubeToken(last.metadata.name ?? ''), last, list);
    expect(decode(unwrapContinue(token, list))).toEqual({ v: 'meta.k8s.io/v1', rv: 42, start: `/${last.metadata.name ?? ''}\u0000` });
  });

  it('refuses a token issued for another namespace, selector or name with a 400', () => {
    const token = wrapContinue(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    for (const other of [
      { ...list, namespace: 'tenant-b' },
      { ...list, labelSelector: undefined },
      { ...list, name: 'web-1' },
    ]) {
      expect(() => unwrapContinue(token, other)).toThrow('invalid continue token: continue key is not valid: it was issued for another list');
    }
  });

  it('refuses a crafted token that would move the start key or use another version, as kube words it', () => {
    const issued = decode(wrapContinue(kubeToken('tenant-a.a'), record('tenant-a', 'a'), list)) as { list: string };
    const crafted = (after: unknown, extra: Record<string, unknown> = {}): string => encode({ v: 'tenancy.metal3.io/v1', rv: 42, list: issued.list, after, ...extra });
    expect(() => unwrapContinue(crafted({ namespace: 'tenant-a', name: '../x' }), list)).toThrow('invalid continue token: continue key is not valid');
    expect(() => unwrapContinue(crafted({ namespace: 'tenant-b', name: 'x' }), list)).toThrow('it was issued for another list');
    expect(() => unwrapContinue(crafted({ namespace: 'tenant-a', name: 'x' }, { rv: 0 }), list)).toThrow(
      'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version tenancy.metal3.io/v1)',
    );
    expect(() => unwrapContinue(kubeToken('tenant-a.x'), list)).toThrow('invalid continue token: continue key is not valid: server does not recognize this encoded version');
    expect(() => unwrapContinue('!!', list)).toThrow('invalid continue token: continue key is not valid');
  });

  it('fails loudly when kube-apiserver changes its token format', () => {
    expect(() => wrapContinue(encode({ v: 'meta.k8s.io/v2', rv: 1, start: '/tenant-a.a\u0000' }), record('tenant-a', 'a'), list)).toThrow('unexpected continue token from storage');
    expect(() => wrapContinue(kubeToken('tenant-a.b'), record('tenant-a', 'a'), list)).toThrow('unexpected continue token from storage');
  });
});
