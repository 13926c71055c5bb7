import { afterEach, describe, expect, it } from 'vitest';
import { bufferPoolSlabBytes, useSmallBufferPool } from '../../../src/observability/buffer-pool.js';

describe('the Buffer pool slab', () => {
  const nodeDefault = Buffer.poolSize;
  afterEach(() => {
    Buffer.poolSize = nodeDefault;
  });

  it('is 8 KiB once the current slab is used up, so a long-lived small slice keeps at most 8 KiB alive', () => {
    useSmallBufferPool();
    expect(Buffer.poolSize).toBe(bufferPoolSlabBytes);
    // Use up whatever slab was current (up to Node 24's 64 KiB) with slices smaller than half a new slab.
    for (let used = 0; used < 2 * 64 * 1024; used += 3000) Buffer.from('x'.repeat(3000));
    expect(Buffer.from('alpn').buffer.byteLength).toBe(8 * 1024);
    // Half a slab and more: an allocation of its own, as before.
    const large = Buffer.from('y'.repeat(5000));
    expect(large.buffer.byteLength).toBe(5000);
  });
});
