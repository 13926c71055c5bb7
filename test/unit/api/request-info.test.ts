/** Cases follow k8s.io/apiserver's RequestInfoFactory (requestinfo_test.go), rewritten for our group. */
import { describe, expect, it } from 'vitest';
import { checkPathSegmentName, parseRequestInfo } from '../../../src/api/request-info.js';
import { parseRequestUrl } from '../../../src/api/request-url.js';
import { ApiError } from '../../../src/api/status.js';

const base = '/apis/tenancy.metal3.io/v1alpha1';

function info(method: string, path: string): Record<string, unknown> {
  const parsed = parseRequestInfo(method, parseRequestUrl(path));
  if (!parsed.isResourceRequest) return { nonResource: parsed.path, verb: parsed.verb };
  const { verb, namespace, resource, subresource, name } = parsed;
  return { verb, namespace, resource, subresource, name };
}

describe('parseRequestInfo', () => {
  it.each([
    ['GET', `${base}/namespaces/ns/hostclaims`, { verb: 'list', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/namespaces/ns/hostclaims?watch=true`, { verb: 'watch', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/namespaces/ns/hostclaims?watch=false`, { verb: 'list', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/namespaces/ns/hostclaims/a`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'a' }],
    ['PUT', `${base}/namespaces/ns/hostclaims/a/status`, { verb: 'update', namespace: 'ns', resource: 'hostclaims', subresource: 'status', name: 'a' }],
    ['PATCH', `${base}/namespaces/ns/hostclaims/a`, { verb: 'patch', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'a' }],
    ['POST', `${base}/namespaces/ns/hostclaims`, { verb: 'create', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['DELETE', `${base}/namespaces/ns/hostclaims/a`, { verb: 'delete', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'a' }],
    ['DELETE', `${base}/namespaces/ns/hostclaims`, { verb: 'deletecollection', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/hostclaims`, { verb: 'list', namespace: '', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/watch/namespaces/ns/hostclaims/a`, { verb: 'watch', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'a' }],
    ['GET', `${base}/namespaces/ns`, { verb: 'get', namespace: 'ns', resource: 'namespaces', subresource: '', name: 'ns' }],
    // A single-object list/watch is authorized against the object's name (RBAC resourceNames).
    ['GET', `${base}/namespaces/ns/hostclaims?watch=1&fieldSelector=metadata.name%3Dmine`, { verb: 'watch', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'mine' }],
    ['GET', `${base}/namespaces/ns/hostclaims?fieldSelector=metadata.name%3D%3Dmine,metadata.namespace%3Dns`, { verb: 'list', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'mine' }],
    ['GET', `${base}/namespaces/ns/hostclaims?fieldSelector=metadata.name!%3Dmine`, { verb: 'list', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['DELETE', `${base}/namespaces/ns/hostclaims?fieldSelector=metadata.name%3Dmine`, { verb: 'deletecollection', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
  ])('%s %s', (method, path, expected) => {
    expect(info(method, path)).toEqual(expected);
  });

  it.each(['/apis', '/apis/tenancy.metal3.io', base, '/openapi/v2', '/healthz', '/version'])('treats %s as a non-resource URL', (path) => {
    expect(info('GET', path)).toEqual({ nonResource: path, verb: 'get' });
  });

  // The path is decoded once and split like kube: dot segments are names, never resolved.
  it.each([
    ['DELETE', `${base}/namespaces/ns/hostclaims/.`, { verb: 'delete', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '.' }],
    ['GET', `${base}/namespaces/ns/hostclaims/%2e`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '.' }],
    ['GET', `${base}/namespaces/ns/hostclaims/%2E%2e`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '..' }],
    ['GET', `${base}/namespaces/ns/hostclaims/..`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '..' }],
    ['GET', `${base}/namespaces/ns/hostclaims/a%20b`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'a b' }],
    ['GET', `${base}/namespaces/ns/hostclaims/fuzz%2Dt0`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'fuzz-t0' }],
    // %2F becomes a separator after decoding, as in kube (URL.Path is decoded).
    ['GET', `${base}/namespaces/ns/hostclaims/a%2fstatus`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: 'status', name: 'a' }],
    ['GET', `${base}/namespaces/ns/hostclaims/x%252F..`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'x%2F..' }],
    // Trailing and leading slashes are trimmed; inner empty segments are kept.
    ['GET', `${base}/namespaces/ns/hostclaims/a/`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: '', name: 'a' }],
    ['GET', `//${base.slice(1)}/namespaces/ns/hostclaims`, { verb: 'list', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/namespaces//hostclaims`, { verb: 'list', namespace: '', resource: 'hostclaims', subresource: '', name: '' }],
    ['DELETE', `${base}/namespaces/ns/hostclaims//status`, { verb: 'deletecollection', namespace: 'ns', resource: 'hostclaims', subresource: 'status', name: '' }],
    ['GET', `${base}/namespaces/ns/hostclaims/a/status/x`, { verb: 'get', namespace: 'ns', resource: 'hostclaims', subresource: 'status', name: 'a' }],
    // Only a query that decodes as ListOptions names the selected object.
    ['GET', `${base}/namespaces/ns/hostclaims?fieldSelector=metadata.name%3Dmine&limit=x`, { verb: 'list', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/namespaces/ns/hostclaims?fieldSelector=metadata.name%3D.`, { verb: 'list', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
    ['GET', `${base}/namespaces/ns/hostclaims?watch=`, { verb: 'watch', namespace: 'ns', resource: 'hostclaims', subresource: '', name: '' }],
  ])('%s %s (raw)', (method, path, expected) => {
    expect(info(method, path)).toEqual(expected);
  });

  it.each(['//evil/apis/tenancy.metal3.io/v1alpha1/namespaces/ns/hostclaims', '/apis/', '/apis//tenancy.metal3.io', '//'])('treats %s as a non-resource URL (raw)', (path) => {
    expect(info('GET', path)).toEqual({ nonResource: path, verb: 'get' });
  });

  it('refuses a path verb without a resource, as kube fails to build the RequestInfo', () => {
    expect(() => info('GET', `${base}/watch`)).toThrow('unable to determine kind and namespace from url');
  });
});

describe('parseRequestUrl', () => {
  it('decodes the path once and keeps dot segments and double slashes', () => {
    expect(parseRequestUrl('//a/./%2e%2E/b%252F?x=1').pathname).toBe('//a/.../b%2F'.replace('...', './..'));
  });

  it('refuses an invalid escape in the path with a 400', () => {
    expect(() => parseRequestUrl('/apis/x%zz')).toThrow(ApiError);
    expect(() => parseRequestUrl('/apis/x%2')).toThrow('invalid URL escape');
  });

  it("parses the query like Go's url.ParseQuery: `;` pairs and bad escapes dropped, `+` is a space", () => {
    const query = parseRequestUrl('/p?a=1;b=2&c=x+y%21&d=%zz&=e&f&g=1&g=2&h=a%3Db').searchParams;
    expect([...query.entries()]).toEqual([
      ['c', 'x y!'],
      ['f', ''],
      ['g', '1'],
      ['g', '2'],
      ['h', 'a=b'],
    ]);
  });
});

describe('checkPathSegmentName', () => {
  it.each([
    ['.', `Name parameter invalid: ".": may not be '.'`],
    ['..', `Name parameter invalid: "..": may not be '..'`],
    ['x%2F..', `Name parameter invalid: "x%2F..": may not contain '%'`],
    ['a/b%', `Name parameter invalid: "a/b%": may not contain '/';may not contain '%'`],
  ])('refuses %s with kube’s message', (name, message) => {
    expect(() => {
      checkPathSegmentName(name);
    }).toThrow(message);
  });

  it('accepts names kube accepts as path segments', () => {
    expect(() => {
      checkPathSegmentName('a b...c');
    }).not.toThrow();
  });
});

