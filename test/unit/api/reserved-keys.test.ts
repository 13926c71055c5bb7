import { describe, expect, it } from 'vitest';
import { isReservedKey } from '../../../src/api/reserved-keys.js';
import { bookkeeping, controllerAnnotationPrefix } from '../../../src/backing/storage-mapping.js';

describe('reserved keys', () => {
  it('cover this project domain and its subdomains only', () => {
    expect(isReservedKey('infra.tenancy.metal3.io/namespace')).toBe(true);
    expect(isReservedKey('tenancy.metal3.io/anything')).toBe(true);
    expect(isReservedKey('metal3.io/other')).toBe(false);
    expect(isReservedKey('evil-tenancy.metal3.io/x')).toBe(false);
    expect(isReservedKey('app')).toBe(false);
  });

  it("cover every key the storage mapping and the binder write", () => {
    for (const key of [...Object.values(bookkeeping), `${controllerAnnotationPrefix}host`]) expect(isReservedKey(key)).toBe(true);
  });
});
