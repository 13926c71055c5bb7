import { describe, expect, it } from 'vitest';
import type { FuzzCase } from '../../fuzz/model.js';
import { judge, knownDifference, type Outcome } from '../../fuzz/oracle.js';
import type { RawResponse } from '../../support/raw-http.js';

const OBJECT = '/apis/tenancy.metal3.io/v1alpha1/namespaces/{ns}/hostclaims/{obj}';
const COLLECTION = '/apis/tenancy.metal3.io/v1alpha1/namespaces/{ns}/hostclaims';

const testCase = (overrides: Partial<FuzzCase> = {}): FuzzCase => ({
  family: 'query',
  route: 'aggregator',
  sender: 'tenant',
  method: 'GET',
  path: OBJECT,
  headers: {},
  comparable: true,
  ...overrides,
});

const text = (status: number, body: string): RawResponse => ({ status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body, json: undefined });

function status(code: number, reason: string, message: string): RawResponse {
  const json = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, ...(reason === '' ? {} : { reason }), code };
  return { status: code, headers: { 'content-type': 'application/json' }, body: JSON.stringify(json), json };
}

const claim: RawResponse = { status: 200, headers: {}, body: '{"kind":"HostClaim"}', json: { kind: 'HostClaim' } };
const list: RawResponse = { status: 200, headers: {}, body: '{"kind":"HostClaimList"}', json: { kind: 'HostClaimList', items: [] } };

const violations = (c: FuzzCase, ours: Outcome, theirs?: Outcome, changed?: string) =>
  judge({ testCase: c, ours, ...(theirs === undefined ? {} : { theirs }), ...(changed === undefined ? {} : { changed }) });
const known = (c: FuzzCase, ours: RawResponse, theirs: RawResponse): string | undefined => knownDifference(c, ours, theirs)?.name;

describe('answers kube-apiserver gives itself, before proxying', () => {
  const hardwareData = testCase({ family: 'path', comparable: false, path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/{ns}/hardwaredata/{obj}%' });

  it("are kube's for both when the reference request gets the same plain-text answer, byte for byte", () => {
    expect(violations(hardwareData, text(400, '400 Bad Request'), text(400, '400 Bad Request'))).toEqual([]);
    const doubled = testCase({ family: 'path', comparable: false, path: '//apis/tenancy.metal3.io/v1alpha1/namespaces/{ns}/hardwaredata/{obj}' });
    expect(violations(doubled, text(404, '404 page not found\n'), text(404, '404 page not found\n'))).toEqual([]);
  });

  it('and when both requests fail with the same client error (HEAD with an invalid escape)', () => {
    const head = { ...hardwareData, method: 'HEAD' };
    const error = { error: 'Parse Error: Data after `Connection: close`' };
    expect(violations(head, error, { ...error })).toEqual([]);
    expect(violations(head, error, { error: 'socket hang up' })).toEqual([{ kind: 'no-answer', detail: 'Parse Error: Data after `Connection: close`' }]);
    expect(violations(head, error)).toEqual([{ kind: 'no-answer', detail: 'Parse Error: Data after `Connection: close`' }]);
  });

  it('are ours when the reference answer differs, or the case went directly to this server', () => {
    expect(violations(hardwareData, text(404, '404 page not found\n'), text(400, '400 Bad Request'))).toEqual([{ kind: 'not-status', detail: '404' }]);
    expect(violations(hardwareData, text(400, '400 Bad Request'), status(404, 'NotFound', 'the server could not find the requested resource'))).toEqual([{ kind: 'not-status', detail: '400' }]);
    const direct = { ...hardwareData, route: 'direct' as const };
    expect(violations(direct, text(400, '400 Bad Request'), text(400, '400 Bad Request'))).toEqual([{ kind: 'not-status', detail: '400' }]);
  });

  it('still report a change on refusal', () => {
    expect(violations(hardwareData, text(400, '400 Bad Request'), text(400, '400 Bad Request'), 'target deleted')).toEqual([{ kind: 'changed-on-refusal', detail: 'target deleted' }]);
  });

  it('never compare codes of a case that is not comparable', () => {
    expect(violations(hardwareData, status(404, 'NotFound', 'hardwaredata.tenancy.metal3.io "fuzz-w0" not found'), status(404, 'NotFound', 'the server could not find the requested resource'))).toEqual([]);
    expect(violations(hardwareData, claim, status(404, 'NotFound', 'the server could not find the requested resource'))).toEqual([]);
  });
});

describe("kube's 500s on bad input", () => {
  it('a non-numeric resourceVersion on a get: our 400 with kube\'s message', () => {
    const message = 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax';
    const c = testCase({ path: `${OBJECT}?resourceVersion=abc` });
    expect(known(c, status(400, 'BadRequest', message), status(500, '', message))).toBe('kube-500-on-read-resource-version');
    expect(violations(c, status(400, 'BadRequest', message), status(500, '', message))).toEqual([]);
    // Another 4xx for the same input, or another message, is not this difference.
    expect(violations(c, status(422, 'Invalid', 'ListOptions.meta.k8s.io "" is invalid: allowWatchBookmarks: Forbidden'), status(500, '', message))).toEqual([{ kind: 'code', detail: '422≠500' }]);
    expect(known(c, status(400, 'BadRequest', 'invalid resource version'), status(500, '', message))).toBeUndefined();
  });

  it('an apply the typed converter refuses: our 400 naming the typed patch failure', () => {
    const c = testCase({ family: 'patch-apply', method: 'PATCH', path: `${OBJECT}?fieldManager=fuzz` });
    const theirs = status(500, '', 'failed to create typed patch object (/; reference.tenancy.test/v1alpha1, Kind=HostClaim): .metadata.k0: field not declared in schema');
    const ours = status(400, 'BadRequest', 'failed to create typed patch object (tenant-a/fuzz-w0; tenancy.metal3.io/v1alpha1, Kind=HostClaim): .metadata.k0: field not declared in schema');
    expect(known(c, ours, theirs)).toBe('kube-500-on-untypable-apply');
    expect(violations(c, claim, theirs)).toEqual([{ kind: 'code', detail: '200≠500' }]);
    expect(violations(c, status(400, 'BadRequest', 'yaml: line 1: did not find expected key'), theirs)).toEqual([{ kind: 'code', detail: '400≠500' }]);
  });

  it("a value of the wrong type in metadata: also kube's 400 for the same document in a create or update, whichever problem kube names", () => {
    const c = testCase({ family: 'patch-apply', method: 'PATCH', path: `${OBJECT}?fieldManager=fuzz` });
    const wrongType = status(500, '', 'failed to create typed patch object (/; reference.tenancy.test/v1alpha1, Kind=HostClaim): .metadata.name: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"a":interface {}(nil)}}');
    const undecodable = status(400, 'BadRequest', 'HostClaim in version "v1alpha1" cannot be handled as a HostClaim: json: cannot unmarshal object into Go struct field ObjectMeta.name of type string');
    expect(known(c, undecodable, wrongType)).toBe('kube-500-on-untypable-apply');
    const notAMap = status(500, '', 'failed to create typed patch object (/; reference.tenancy.test/v1alpha1, Kind=HostClaim): .metadata: expected map, got &{0}');
    expect(known(c, status(400, 'BadRequest', 'HostClaim in version "v1alpha1" cannot be handled as a HostClaim: json: cannot unmarshal number into Go value of type v1.ObjectMeta'), notAMap)).toBe('kube-500-on-untypable-apply');
    // kube may name another problem in metadata (an undeclared field beside a name of the wrong type).
    const undeclared = status(500, '', 'failed to create typed patch object (/; reference.tenancy.test/v1alpha1, Kind=HostClaim): .metadata.a: field not declared in schema');
    expect(known(c, status(400, 'BadRequest', 'HostClaim in version "v1alpha1" cannot be handled as a HostClaim: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string'), undeclared)).toBe('kube-500-on-untypable-apply');
    // kube lists several problems, one of them in metadata.
    const several = status(500, '', 'failed to create typed patch object (/fuzz-w1; reference.tenancy.test/v1alpha1, Kind=HostClaim): errors:\n  .metadata.finalizers: expected list, got &{map[a:<nil>]}\n  .spec.userData.k0: field not declared in schema');
    expect(known(c, status(400, 'BadRequest', 'HostClaim in version "v1alpha1" cannot be handled as a HostClaim: json: cannot unmarshal object into Go struct field ObjectMeta.finalizers of type []string'), several)).toBe('kube-500-on-untypable-apply');
    // Or a problem outside metadata, though metadata holds one too (a seeded run: metadata.generation a string, beside an undeclared top-level field).
    const outside = status(500, '', 'failed to create typed patch object (/; reference.tenancy.test/v1alpha1, Kind=HostClaim): .unknownTopLevel: field not declared in schema');
    expect(known(c, status(400, 'BadRequest', 'HostClaim in version "v1alpha1" cannot be handled as a HostClaim: json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64'), outside)).toBe('kube-500-on-untypable-apply');
    // Not another 400, nor another code.
    expect(known(c, status(422, 'Invalid', 'HostClaim in version "v1alpha1" cannot be handled as a HostClaim: json: cannot unmarshal string'), outside)).toBeUndefined();
    expect(known(c, status(400, 'BadRequest', 'the object provided is unrecognized'), undeclared)).toBeUndefined();
  });

  it("a resourceVersion that is not a number in a PUT or patch: our 409 Conflict with kube's optimistic-lock message", () => {
    const theirs = status(500, '', 'strconv.ParseUint: parsing "x": invalid syntax');
    const ours = status(409, 'Conflict', 'Operation cannot be fulfilled on hostclaims.tenancy.metal3.io "fuzz-w1": the object has been modified; please apply your changes to the latest version and try again');
    const patch = testCase({ family: 'patch-merge', method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' } });
    const put = testCase({ family: 'body-json', method: 'PUT' });
    expect(known(patch, ours, theirs)).toBe('kube-500-on-object-resource-version');
    expect(known(put, ours, status(500, '', 'strconv.ParseUint: parsing "18446744073709551616": value out of range'))).toBe('kube-500-on-object-resource-version');
    expect(violations(put, ours, theirs)).toEqual([]);
    // Not a GET, not another 409, not another 500.
    expect(known(testCase(), ours, theirs)).toBeUndefined();
    expect(known(put, status(409, 'Conflict', 'hostclaims.tenancy.metal3.io "fuzz-w1" already exists'), theirs)).toBeUndefined();
    expect(known(put, ours, status(500, 'InternalError', 'Internal error occurred: strconv.ParseUint: parsing "x": invalid syntax'))).toBeUndefined();
  });

  it('one object asked for as PartialObjectMetadataList: our 406 with kube\'s own message', () => {
    const c = testCase({ family: 'headers', headers: { Accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } });
    const ours = status(406, 'NotAcceptable', 'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)');
    expect(known(c, ours, status(500, '', 'content is not a list'))).toBe('kube-500-on-object-as-list');
    expect(violations(c, status(406, 'NotAcceptable', 'the server was unable to respond with a content type that the client supports'), status(500, '', 'content is not a list'))).toEqual([{ kind: 'code', detail: '406≠500' }]);
  });

  it('a patch removing apiVersion: our 422 patch: Invalid value', () => {
    const c = testCase({ family: 'patch-json', method: 'PATCH', headers: { 'Content-Type': 'application/json-patch+json' } });
    const theirs = status(500, 'InternalError', "Internal error occurred: Object 'apiVersion' is missing in 'object has no apiVersion field'");
    const ours = status(422, 'Invalid', ' "" is invalid: patch: Invalid value: "{\\"kind\\":\\"HostClaim\\"}": Object \'apiVersion\' is missing in \'{"kind":"HostClaim"}\'');
    expect(known(c, ours, theirs)).toBe('kube-500-on-patched-object-without-type');
    expect(known(c, status(422, 'Invalid', 'HostClaim.tenancy.metal3.io "fuzz-w0" is invalid: spec: Required value'), theirs)).toBeUndefined();
    expect(violations(c, status(400, 'BadRequest', 'x'), theirs)).toEqual([{ kind: 'code', detail: '400≠500' }]);
  });

  it('a refused write they explain must still change nothing', () => {
    const c = testCase({ family: 'patch-merge', method: 'PATCH' });
    const ours = status(409, 'Conflict', 'Operation cannot be fulfilled on hostclaims.tenancy.metal3.io "fuzz-w1": the object has been modified; please apply your changes to the latest version and try again');
    expect(violations(c, ours, status(500, '', 'strconv.ParseUint: parsing "x": invalid syntax'), 'resourceVersion moved (metadata differ)')).toEqual([{ kind: 'changed-on-refusal', detail: 'resourceVersion moved (metadata differ)' }]);
  });
});

describe('continue tokens this server did not issue', () => {
  const kubeToken = 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0';
  const ours = status(400, 'BadRequest', 'invalid continue token: continue key is not valid');

  it("are our 400 where kube reads its own format and answers the list or 410 Expired", () => {
    const c = testCase({ path: `${COLLECTION}?continue=${kubeToken}` });
    expect(known(c, ours, list)).toBe('sealed-continue-token');
    expect(known(c, ours, status(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.'))).toBe('sealed-continue-token');
    expect(violations(c, ours, list)).toEqual([]);
  });

  it('only with a continue parameter, our exact message, and kube answering 200 or 410', () => {
    expect(known(testCase({ path: `${COLLECTION}?limit=1` }), ours, list)).toBeUndefined();
    const c = testCase({ path: `${COLLECTION}?continue=${kubeToken}` });
    expect(known(c, status(400, 'BadRequest', 'invalid continue token: continue key is not valid: it was issued for another list'), list)).toBeUndefined();
    expect(violations(c, ours, status(422, 'Invalid', 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden'))).toEqual([{ kind: 'code', detail: '400≠422' }]);
  });
});

describe('an identity sent directly on several lines', () => {
  const unauthorized = status(401, 'Unauthorized', 'Unauthorized');
  const forbidden = status(403, 'Forbidden', 'hostclaims.reference.tenancy.test "fuzz-w0" is forbidden: User "a" cannot get resource "hostclaims"');

  it("is our 401 where kube answers as the first line's user", () => {
    const c = testCase({ family: 'headers', route: 'direct', headers: { 'X-Remote-User': ['a', 'b'] } });
    expect(known(c, unauthorized, forbidden)).toBe('ambiguous-front-proxy-identity');
    expect(known(testCase({ family: 'headers', route: 'direct', headers: { 'x-remote-uid': ['1', '2'] } }), unauthorized, forbidden)).toBe('ambiguous-front-proxy-identity');
  });

  it('not for one line, through the aggregator, or another answer of ours', () => {
    expect(known(testCase({ family: 'headers', route: 'direct', headers: { 'X-Remote-User': ['a'] } }), unauthorized, forbidden)).toBeUndefined();
    expect(known(testCase({ family: 'headers', route: 'aggregator', headers: { 'X-Remote-User': ['a', 'b'] } }), unauthorized, forbidden)).toBeUndefined();
    expect(known(testCase({ family: 'headers', route: 'direct', headers: { 'X-Remote-User': ['a', 'b'] } }), forbidden, unauthorized)).toBeUndefined();
  });
});
