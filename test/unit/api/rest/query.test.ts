import { describe, expect, it } from 'vitest';
import { checkReadResourceVersion, parseDeleteParameters, parseListParameters } from '../../../../src/api/rest/query.js';
import { ApiError } from '../../../../src/api/status.js';

const list = (query: string) => parseListParameters(new URLSearchParams(query));
const refusal = (run: () => unknown): { code: number; message: string } | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.code, message: error.message };
  }
};

describe('ListOptions from the query, as metav1 converts them (strconv.ParseInt)', () => {
  it('a limit of zero or less asks for everything', () => {
    expect(list('limit=-1').limit).toBeUndefined();
    expect(list('limit=0').limit).toBeUndefined();
    expect(list('limit=%2B5').limit).toBe('5');
  });

  it.each([
    ['limit=ten', 'strconv.ParseInt: parsing "ten": invalid syntax'],
    ['limit=', 'strconv.ParseInt: parsing "": invalid syntax'],
    ['timeoutSeconds=9999999999999999999', 'strconv.ParseInt: parsing "9999999999999999999": value out of range'],
  ])('%s is a 400', (query, message) => {
    expect(refusal(() => list(query))).toEqual({ code: 400, message });
  });

  it('a resourceVersion that is not a uint64 is a 400 with the storage layer’s words, after the options are validated', () => {
    expect(refusal(() => list('resourceVersion=%25'))).toEqual({ code: 400, message: 'invalid resource version: resourceVersion: Invalid value: "%": strconv.ParseUint: parsing "%": invalid syntax' });
    expect(refusal(() => list('resourceVersion=x&sendInitialEvents='))?.code).toBe(422);
    // A watch refuses it before its 200, in the words kube's 500 uses.
    expect(refusal(() => list('watch=true&resourceVersion=-1'))).toEqual({ code: 400, message: 'resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax' });
    expect(refusal(() => { checkReadResourceVersion('18446744073709551616', 'get'); })?.message).toBe(
      'resourceVersion: Invalid value: "18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range',
    );
    expect(refusal(() => { checkReadResourceVersion('18446744073709551615', 'get'); })).toBeUndefined();
  });

  it('a watch from "" naming no resourceVersionMatch is a watch-list, which refuses continue', () => {
    expect(refusal(() => list('watch=1&continue=x'))?.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
    );
    expect(refusal(() => list('watch=1&continue=x&resourceVersion=5'))).toBeUndefined();
  });

  it('booleans are Go\'s: only "0" and "false" are false, a blank value is true', () => {
    expect(list('watch=').watch).toBe(true);
    expect(list('watch=FALSE').watch).toBe(false);
    expect(list('watch=0&allowWatchBookmarks=').allowWatchBookmarks).toBe(true);
    // A blank sendInitialEvents is true; nothing requires allowWatchBookmarks with it (kube 1.35 to 1.37).
    expect(list('watch=1&sendInitialEvents=%20&resourceVersionMatch=NotOlderThan').sendInitialEvents).toBe(true);
    expect(refusal(() => list('watch=&continue=%3C'))?.code).toBe(422);
  });

  it('SetListOptionsDefaults: a watch from "" or "0" is a watch-list from NotOlderThan; a list and a watch from a revision are not', () => {
    const defaulted = { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' };
    expect(list('watch=1')).toMatchObject(defaulted);
    expect(list('watch=1&resourceVersion=0')).toMatchObject(defaulted);
    expect(list('watch=1&resourceVersion=7')).toMatchObject({ sendInitialEvents: undefined, resourceVersionMatch: undefined });
    expect(list('watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan')).toMatchObject({ sendInitialEvents: false });
    expect(list('')).toMatchObject({ sendInitialEvents: undefined, resourceVersionMatch: undefined });
  });

  it('checks in listOpts\' order: decoding (integers, selector syntax) 400, then validation 422, then field labels 400', () => {
    const invalidContinue = 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided';
    expect(refusal(() => list('watch=&fieldSelector=spec.poweredOn%3Dtrue&continue=x'))).toEqual({ code: 422, message: invalidContinue });
    expect(refusal(() => list('fieldSelector=spec.poweredOn%3Dtrue&resourceVersionMatch=Exact'))?.code).toBe(422);
    expect(refusal(() => list('fieldSelector=spec.poweredOn%3Dtrue'))).toEqual({ code: 400, message: 'field label not supported: spec.poweredOn' });
    expect(refusal(() => list('watch=&fieldSelector=a%3Db%3Dc&continue=x'))).toEqual({ code: 400, message: 'invalid field selector: unescaped character in value: 61' });
    expect(refusal(() => list('watch=&labelSelector=a%20in%20(&continue=x'))?.code).toBe(400);
    expect(refusal(() => list('labelSelector=a%20in%20(&limit=x&timeoutSeconds=y'))).toEqual({ code: 400, message: 'strconv.ParseInt: parsing "y": invalid syntax' });
  });
});

describe('DeleteOptions from the query (Convert_url_Values_To_v1_DeleteOptions)', () => {
  const remove = (query: string) => parseDeleteParameters(new URLSearchParams(query), undefined);

  it('uid and resourceVersion are preconditions', () => {
    expect(remove('resourceVersion=-1').preconditions).toEqual({ resourceVersion: '-1' });
    expect(remove('uid=u&resourceVersion=').preconditions).toEqual({ uid: 'u' });
    expect(remove('').preconditions).toBeUndefined();
  });

  it('an empty propagationPolicy is set, and not supported', () => {
    expect(refusal(() => remove('propagationPolicy='))).toEqual({
      code: 422,
      message: 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "": supported values: "Foreground", "Background", "Orphan", "nil"',
    });
  });
});
