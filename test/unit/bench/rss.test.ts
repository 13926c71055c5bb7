import { describe, expect, it } from 'vitest';
import { settledIndex } from '../../../test/bench/rss.js';

describe('settledIndex', () => {
  it('waits for a window of samples within the tolerance, past an earlier plateau shorter than the window', () => {
    // A restart at full size, one sample a second (session 16): a plateau at 358, one at 319, then 228 for good.
    const samples = [358, 358, 358, 319, 319, 319, 254, 232, 228, 229, 229, 229, 229, 229, 229, 230];
    expect(settledIndex(samples, 5, 3)).toBe(13);
    expect(samples[13]).toBe(229);
  });

  it('is undefined while the samples still move by more than the tolerance', () => {
    expect(settledIndex([300, 290, 280, 270, 260, 250], 3, 3)).toBeUndefined();
  });

  it('needs a whole window before it can settle', () => {
    expect(settledIndex([200, 200, 200], 3, 3)).toBeUndefined();
    expect(settledIndex([200, 200, 200, 200], 3, 3)).toBe(3);
  });
});
