import { describe, expect, it } from 'vitest';
import { referencePath } from '../../fuzz/worker.js';

const hardwareData = '//apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hardwaredata/fuzz-w0';

describe('referencePath', () => {
  it('is the path on the reference group for a comparable case, whatever the method', () => {
    expect(referencePath({ comparable: true, method: 'DELETE' }, '/%61pis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims/fuzz-w0')).toBe('/%61pis/reference.tenancy.test/v1alpha1/namespaces/tenant-a/hostclaims/fuzz-w0');
  });

  it('reads hostclaims for a HardwareData read, which tenants may read on both groups', () => {
    expect(referencePath({ comparable: false, method: 'GET' }, hardwareData)).toBe('//apis/reference.tenancy.test/v1alpha1/namespaces/tenant-a/hostclaims/fuzz-w0');
    expect(referencePath({ comparable: false, method: 'HEAD' }, `${hardwareData}%`)).toBe('//apis/reference.tenancy.test/v1alpha1/namespaces/tenant-a/hostclaims/fuzz-w0%');
  });

  it('keeps hardwaredata for a HardwareData write, which the reference group does not serve, so the probe never writes', () => {
    expect(referencePath({ comparable: false, method: 'DELETE' }, hardwareData)).toBe('//apis/reference.tenancy.test/v1alpha1/namespaces/tenant-a/hardwaredata/fuzz-w0');
  });
});
