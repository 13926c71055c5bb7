import { describe, expect, it } from 'vitest';
import { toReference } from '../../support/reference-crd.js';

const object = '/v1alpha1/namespaces/tenant-a/hostclaims/fuzz-w0';

describe('toReference', () => {
  it('renames the group segment of a plain path and leaves the query as is', () => {
    expect(toReference(`/apis/tenancy.metal3.io${object}?labelSelector=a%3Db&x=tenancy.metal3.io`)).toBe(`/apis/reference.tenancy.test${object}?labelSelector=a%3Db&x=tenancy.metal3.io`);
  });

  it('renames the group after a percent-encoded apis segment, which kube-apiserver decodes and routes to this server', () => {
    expect(toReference(`/%61%70%69%73/tenancy.metal3.io${object}`)).toBe(`/%61%70%69%73/reference.tenancy.test${object}`);
  });

  it('renames a percent-encoded group, in either hex case, as a percent-encoded reference group', () => {
    const encoded = '%74%65%6E%61%6E%63%79%2E%6D%65%74%61%6C%33%2E%69%6F';
    const reference = '%72%65%66%65%72%65%6E%63%65%2E%74%65%6E%61%6E%63%79%2E%74%65%73%74';
    expect(toReference(`/apis/${encoded}${object}`)).toBe(`/apis/${reference}${object}`);
    expect(toReference(`/apis/${encoded.toLowerCase()}${object}`)).toBe(`/apis/${reference}${object}`);
    expect(toReference(`/apis/tenancy.metal3%2Eio${object}`)).toBe(`/apis/${reference}${object}`);
  });

  it('renames the group wherever it is a segment: after dot segments, a doubled slash, an encoded slash', () => {
    expect(toReference(`//apis/tenancy.metal3.io${object}`)).toBe(`//apis/reference.tenancy.test${object}`);
    expect(toReference(`/apis/./tenancy.metal3.io/../tenancy.metal3.io${object}`)).toBe(`/apis/./reference.tenancy.test/../reference.tenancy.test${object}`);
    expect(toReference(`/apis%2Ftenancy.metal3.io%2fv1alpha1/hostclaims`)).toBe(`/apis%2Freference.tenancy.test%2fv1alpha1/hostclaims`);
    expect(toReference('/apis/tenancy.metal3.io')).toBe('/apis/reference.tenancy.test');
  });

  it('keeps an upper-case group upper case, so that kube routes neither, and leaves other case variants alone', () => {
    expect(toReference(`/apis/TENANCY.METAL3.IO${object}`)).toBe(`/apis/REFERENCE.TENANCY.TEST${object}`);
    expect(toReference(`/apis/Tenancy.metal3.io${object}`)).toBe(`/apis/Tenancy.metal3.io${object}`);
  });

  it('leaves segments that only contain the group, double-encoded groups and invalid escapes alone', () => {
    expect(toReference(`/apis/tenancy.metal3.io.x${object}`)).toBe(`/apis/tenancy.metal3.io.x${object}`);
    expect(toReference(`/apis/%2574enancy.metal3.io${object}`)).toBe(`/apis/%2574enancy.metal3.io${object}`);
    expect(toReference(`/apis/tenancy.metal3.io${object}%`)).toBe(`/apis/reference.tenancy.test${object}%`);
    expect(toReference(`/apis/tenancy.metal3.io${object}%zz`)).toBe(`/apis/reference.tenancy.test${object}%zz`);
  });
});
