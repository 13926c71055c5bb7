import { CompactEncrypt, compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../src/api/rest/types.js';
import { ContinueTokens, type ListIdentity } from '../../../src/backing/continue-token.js';
import { backingName, bookkeeping } from '../../../src/backing/storage-mapping.js';

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (token: string): unknown => JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));

const key = new Uint8Array(32).fill(7);
const tokens = new ContinueTokens(Promise.resolve(key));
const wrapContinue = (kube: string, last: ApiObject, identity: ListIdentity): Promise<string> => tokens.wrap(kube, last, identity);
const unwrapContinue = (token: string, identity: ListIdentity): Promise<string> => tokens.unwrap(token, identity);
/** What a sealed token says, read with the key (as a replica would). */
const opened = async (token: string): Promise<unknown> => JSON.parse(new TextDecoder().decode((await compactDecrypt(token, key)).plaintext));
/** A token sealed with the right key but crafted content: what only a holder of the key could make. */
const sealed = (value: unknown, with_ = key): Promise<string> =>
  new CompactEncrypt(new TextEncoder().encode(JSON.stringify(value))).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(with_);

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
  it('issues an opaque token that names no record, storage namespace or backing group', async () => {
    const token = await wrapContinue(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    const text = token
      .split('.')
      .map((part) => Buffer.from(part, 'base64url').toString('utf8'))
      .join('.');
    for (const hidden of ['tenant-a', 'web-1', 'hostclaim-system', 'infra.tenancy.metal3.io', 'HostClaimRecord', 'meta.k8s.io']) expect(text).not.toContain(hidden);
    expect(await opened(token)).toEqual({ v: 'tenancy.metal3.io/v1', rv: 42, list: expect.any(String) as string, after: { namespace: 'tenant-a', name: 'web-1' } });
  });

  it("gives kube-apiserver back its own token for the next page", async () => {
    const token = await wrapContinue(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    expect(decode(await unwrapContinue(token, list))).toEqual({ v: 'meta.k8s.io/v1', rv: 42, start: '/tenant-a.web-1\u0000' });
  });

  it('accepts a token another replica sealed with the shared key', async () => {
    const token = await new ContinueTokens(Promise.resolve(new Uint8Array(key))).wrap(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    expect(decode(await unwrapContinue(token, list))).toEqual({ v: 'meta.k8s.io/v1', rv: 42, start: '/tenant-a.web-1\u0000' });
  });

  it('maps digest-named records through their bookkeeping, both ways', async () => {
    const long = 'x'.repeat(250);
    const last = record('tenant-a', long);
    expect(last.metadata.name).toMatch(/^h-/);
    const token = await wrapContinue(kubeToken(last.metadata.name ?? ''), last, list);
    expect(decode(await unwrapContinue(token, list))).toEqual({ v: 'meta.k8s.io/v1', rv: 42, start: `/${last.metadata.name ?? ''}\u0000` });
  });

  it('refuses a token issued for another namespace, selector or name with a 400', async () => {
    const token = await wrapContinue(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    for (const other of [
      { ...list, namespace: 'tenant-b' },
      { ...list, labelSelector: undefined },
      { ...list, name: 'web-1' },
    ]) {
      await expect(unwrapContinue(token, other)).rejects.toThrow('invalid continue token: continue key is not valid: it was issued for another list');
    }
  });

  it('refuses a changed token, one sealed with another key, and an unsealed one, as kube words an invalid token', async () => {
    const token = await wrapContinue(kubeToken('tenant-a.web-1'), record('tenant-a', 'web-1'), list);
    const parts = token.split('.');
    const ciphertext = parts[3] ?? '';
    const flipped = `${ciphertext[0] === 'A' ? 'B' : 'A'}${ciphertext.slice(1)}`;
    const changed = [...parts.slice(0, 3), flipped, ...parts.slice(4)].join('.');
    const foreign = await sealed({ v: 'tenancy.metal3.io/v1', rv: 42, list: 'x', after: { namespace: 'tenant-a', name: 'web-1' } }, new Uint8Array(32).fill(9));
    const unsealed = encode({ v: 'tenancy.metal3.io/v1', rv: 42, list: 'x', after: { namespace: 'tenant-a', name: 'web-1' } });
    for (const bad of [changed, foreign, unsealed, kubeToken('tenant-a.x'), '!!', '']) {
      await expect(unwrapContinue(bad, list)).rejects.toThrow(/^invalid continue token: continue key is not valid$/);
    }
  });

  it('still checks what a sealed token says: the start key, the list and the version, as kube words them', async () => {
    const issued = (await opened(await wrapContinue(kubeToken('tenant-a.a'), record('tenant-a', 'a'), list))) as { list: string };
    const crafted = (after: unknown, extra: Record<string, unknown> = {}): Promise<string> => sealed({ v: 'tenancy.metal3.io/v1', rv: 42, list: issued.list, after, ...extra });
    await expect(unwrapContinue(await crafted({ namespace: 'tenant-a', name: '../x' }), list)).rejects.toThrow(/^invalid continue token: continue key is not valid$/);
    await expect(unwrapContinue(await crafted({ namespace: 'tenant-b', name: 'x' }), list)).rejects.toThrow('it was issued for another list');
    await expect(unwrapContinue(await crafted({ namespace: 'tenant-a', name: 'x' }, { rv: 0 }), list)).rejects.toThrow(
      'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version tenancy.metal3.io/v1)',
    );
    await expect(unwrapContinue(await crafted({ namespace: 'tenant-a', name: 'x' }, { v: 'meta.k8s.io/v1' }), list)).rejects.toThrow(
      'invalid continue token: continue key is not valid: server does not recognize this encoded version',
    );
  });

  it('fails loudly when kube-apiserver changes its token format', async () => {
    await expect(wrapContinue(encode({ v: 'meta.k8s.io/v2', rv: 1, start: '/tenant-a.a\u0000' }), record('tenant-a', 'a'), list)).rejects.toThrow('unexpected continue token from storage');
    await expect(wrapContinue(kubeToken('tenant-a.b'), record('tenant-a', 'a'), list)).rejects.toThrow('unexpected continue token from storage');
  });
});
