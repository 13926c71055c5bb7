import { describe, expect, it } from 'vitest';
import { requestLogLevel } from '../../../../src/server/filters/request-log.js';

describe('the level of a request log line', () => {
  it('is error for a 5xx of an API request, info below 500', () => {
    expect(requestLogLevel('/apis/tenancy.metal3.io/v1alpha1/namespaces/a/hostclaims', 500)).toBe('error');
    expect(requestLogLevel('/apis/tenancy.metal3.io/v1alpha1/namespaces/a/hostclaims', 503)).toBe('error');
    expect(requestLogLevel('/metrics', 500)).toBe('error');
    expect(requestLogLevel('/apis/tenancy.metal3.io/v1alpha1/namespaces/a/hostclaims', 404)).toBe('info');
    expect(requestLogLevel('/readyz', 200)).toBe('info');
  });

  it('is warn for a health endpoint answering not ready or not live, and for its per-check paths', () => {
    for (const path of ['/readyz', '/livez', '/healthz', '/readyz/kube-apiserver', '/livez/ping']) expect(requestLogLevel(path, 500)).toBe('warn');
  });

  it('does not take a path that only begins like a health endpoint for one', () => {
    expect(requestLogLevel('/readyzz', 500)).toBe('error');
    expect(requestLogLevel('/apis/readyz', 500)).toBe('error');
  });
});
