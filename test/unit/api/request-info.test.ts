/** Cases follow k8s.io/apiserver's RequestInfoFactory (requestinfo_test.go), rewritten for our group. */
import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from '../../../src/api/request-info.js';

const base = '/apis/tenancy.metal3.io/v1alpha1';

function info(method: string, path: string): Record<string, unknown> {
  const parsed = parseRequestInfo(method, new URL(path, 'https://x'));
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
});
