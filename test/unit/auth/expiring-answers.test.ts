import { describe, expect, it } from 'vitest';
import { ExpiringAnswers } from '../../../src/auth/expiring-answers.js';

interface Answer {
  readonly n: number;
}

/** A cache on a clock the test moves, counting what it asked. */
function setup(ttlMs = 1_000) {
  // Not 0: lru-cache takes a start time of 0 for "no expiry".
  let now = 1_000;
  let asked = 0;
  const cache = new ExpiringAnswers<Answer>({ max: 100, ttlMs }, () => now);
  const ask = (): Promise<Answer> => Promise.resolve({ n: ++asked });
  return {
    cache,
    ask,
    asked: () => asked,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('ExpiringAnswers', () => {
  it('answers a key from the cache until its answer expires, then asks again', async () => {
    const { cache, ask, asked, advance } = setup();
    expect(await cache.fetch('a', ask)).toEqual({ n: 1 });
    advance(999);
    expect(await cache.fetch('a', ask)).toEqual({ n: 1 });
    advance(2);
    expect(await cache.fetch('a', ask)).toEqual({ n: 2 });
    expect(asked()).toBe(2);
  });

  it('shares one request among concurrent fetches of a key', async () => {
    const { cache, ask, asked } = setup();
    const answers = await Promise.all([cache.fetch('a', ask), cache.fetch('a', ask), cache.fetch('a', ask)]);
    expect(answers).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }]);
    expect(asked()).toBe(1);
  });

  it('drops expired answers of keys never asked again, once per interval, instead of holding them until max', async () => {
    const { cache, ask, advance } = setup();
    for (const key of ['a', 'b', 'c']) await cache.fetch(key, ask);
    expect(cache.size).toBe(3);
    advance(1_500);
    // a, b and c expired; the first use after the interval drops them.
    await cache.fetch('d', ask);
    expect(cache.size).toBe(1);
    advance(300);
    await cache.fetch('e', ask);
    expect(cache.size).toBe(2);
  });

  it('forgets a deleted key', async () => {
    const { cache, ask } = setup();
    await cache.fetch('a', ask);
    cache.delete('a');
    expect(await cache.fetch('a', ask)).toEqual({ n: 2 });
  });
});
