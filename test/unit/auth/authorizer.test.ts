import { describe, expect, it } from 'vitest';
import { Authorizer, type Attributes } from '../../../src/auth/authorizer.js';
import { ApiError } from '../../../src/api/status.js';
import { KubeApiError, KubeUnavailableError } from '../../../src/backing/kube-client.js';

const user = { name: 'tenant-a', uid: '', groups: ['system:authenticated'], extra: {} };
const list: Extract<Attributes, { kind: 'resource' }> = { kind: 'resource', verb: 'list', group: 'tenancy.metal3.io', version: 'v1alpha1', resource: 'hostclaims', subresource: '', namespace: 'tenant-a', name: '' };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('Authorizer when kube-apiserver cannot review', () => {
  it.each([
    ['unreachable', new KubeUnavailableError(false, { cause: new Error('connect ECONNREFUSED 127.0.0.1:6443') }), 503, 'ServiceUnavailable'],
    ['silent past the client timeout', new KubeUnavailableError(true, { cause: new Error('no answer within 10000 ms') }), 504, 'Timeout'],
    ['refusing the server itself (its RBAC not loaded after a restart)', new KubeApiError(403, { kind: 'Status', reason: 'Forbidden', message: 'forbidden' }), 503, 'ServiceUnavailable'],
  ])('%s: a retriable %i, never a denial that blames the requester, and not cached', async (_label, failure, code, reason) => {
    let reviews = 0;
    const authorizer = new Authorizer(() => {
      reviews += 1;
      return Promise.reject(failure);
    });
    const error = await rejection(authorizer.authorize(user, list));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).toStatus()).toMatchObject({ code, reason, details: { retryAfterSeconds: 1 } });
    expect((error as ApiError).message).not.toContain('127.0.0.1');
    await rejection(authorizer.authorize(user, list));
    expect(reviews).toBe(2);
  });

  it('still denies what the review denies', async () => {
    const authorizer = new Authorizer(() => Promise.resolve({ allowed: false, reason: '' }));
    expect(await authorizer.authorize(user, list)).toEqual({ allowed: false, reason: '' });
  });

  it('lets a bug of its own surface as itself (a generic 500 later), not as unavailability', async () => {
    const bug = new TypeError('x is not a function');
    const authorizer = new Authorizer(() => Promise.reject(bug));
    expect(await rejection(authorizer.authorize(user, list))).toBe(bug);
  });

  it('while kube-apiserver is not ready, answers a denial with a retriable 503 and asks again next time (a restarted kube-apiserver denies until its RBAC is loaded); an allow stands', async () => {
    let reviews = 0;
    let allowed = false;
    let ready = false;
    const authorizer = new Authorizer(() => {
      reviews += 1;
      return Promise.resolve({ allowed, reason: '' });
    }, () => ready);
    const error = await rejection(authorizer.authorize(user, list));
    expect((error as ApiError).toStatus()).toMatchObject({ code: 503, reason: 'ServiceUnavailable', details: { retryAfterSeconds: 1 } });
    await rejection(authorizer.authorize(user, list));
    expect(reviews).toBe(2);
    ready = true;
    expect(await authorizer.authorize(user, list)).toEqual({ allowed: false, reason: '' });
    // A denial from a ready kube-apiserver is cached like kube's (10 s).
    expect(await authorizer.authorize(user, list)).toEqual({ allowed: false, reason: '' });
    expect(reviews).toBe(3);
    const other: Attributes = { ...list, verb: 'get', name: 'x' };
    ready = false;
    allowed = true;
    expect(await authorizer.authorize(user, other)).toEqual({ allowed: true, reason: '' });
  });
});

describe('Authorizer for a request naming an object', () => {
  const get = (name: string): Extract<Attributes, { kind: 'resource' }> => ({ ...list, verb: 'get', name });

  it('asks once for every name of the namespace (the review\'s empty name means all) and answers other names from that', async () => {
    const asked: Attributes[] = [];
    const authorizer = new Authorizer((_user, attributes) => {
      asked.push(attributes);
      return Promise.resolve({ allowed: true, reason: '' });
    });
    expect(await authorizer.authorize(user, get('c-1'))).toEqual({ allowed: true, reason: '' });
    expect(await authorizer.authorize(user, get('c-2'))).toEqual({ allowed: true, reason: '' });
    expect(asked).toEqual([get('')]);
    // Another namespace, verb or subresource is another question.
    await authorizer.authorize(user, { ...get('c-1'), namespace: 'tenant-b' });
    await authorizer.authorize(user, { ...get('c-1'), subresource: 'status' });
    expect(asked).toHaveLength(3);
  });

  it('asks about the name when every name is denied (a Role with resourceNames), and denies the names it does not allow', async () => {
    const asked: string[] = [];
    const authorizer = new Authorizer((_user, attributes) => {
      const name = attributes.kind === 'resource' ? attributes.name : '';
      asked.push(name);
      return Promise.resolve(name === 'c-1' ? { allowed: true, reason: 'RBAC: allowed by RoleBinding "one"' } : { allowed: false, reason: name === '' ? '' : `no rule for ${name}` });
    });
    expect(await authorizer.authorize(user, get('c-1'))).toEqual({ allowed: true, reason: 'RBAC: allowed by RoleBinding "one"' });
    // The reason of a denial is the named question's.
    expect(await authorizer.authorize(user, get('c-2'))).toEqual({ allowed: false, reason: 'no rule for c-2' });
    // The denial for every name is cached too: one review per name from then on.
    expect(asked).toEqual(['', 'c-1', 'c-2']);
    expect(await authorizer.authorize(user, get('c-2'))).toEqual({ allowed: false, reason: 'no rule for c-2' });
    expect(asked).toHaveLength(3);
  });

  it('while kube-apiserver is not ready, a denial for every name is not final: the name is asked about, and only its denial is a 503', async () => {
    const asked: string[] = [];
    const authorizer = new Authorizer(
      (_user, attributes) => {
        const name = attributes.kind === 'resource' ? attributes.name : '';
        asked.push(name);
        return Promise.resolve({ allowed: name === 'c-1', reason: '' });
      },
      () => false,
    );
    expect(await authorizer.authorize(user, get('c-1'))).toEqual({ allowed: true, reason: '' });
    const error = await rejection(authorizer.authorize(user, get('c-2')));
    expect((error as ApiError).toStatus()).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    // Untrusted denials are not cached: both are asked again.
    expect(asked).toEqual(['', 'c-1', '', 'c-2']);
  });
});
