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

describe('ExpiringAnswers while a question is in flight', () => {
  it('drops expired answers without failing a question being asked again for an expired key (lru-cache\'s purge aborted it: a 500 in the soak)', async () => {
    let now = 1_000;
    const cache = new ExpiringAnswers<Answer>({ max: 100, ttlMs: 1_000 }, () => now);
    await cache.fetch('a', () => Promise.resolve({ n: 1 }));
    now += 1_500;
    let answer: (value: Answer) => void = () => undefined;
    const again = cache.fetch('a', () => new Promise<Answer>((resolve) => (answer = resolve)));
    now += 1_500;
    // A fetch of another key is due to drop every expired answer, 'a' among them.
    await cache.fetch('b', () => Promise.resolve({ n: 2 }));
    answer({ n: 3 });
    expect(await again).toEqual({ n: 3 });
    expect(await cache.fetch('a', () => Promise.resolve({ n: 4 }))).toEqual({ n: 3 });
  });

  it('does not cache a failed question; the next fetch asks again', async () => {
    const cache = new ExpiringAnswers<Answer>({ max: 100, ttlMs: 1_000 }, () => 1_000);
    await expect(cache.fetch('a', () => Promise.reject(new Error('timed out')))).rejects.toThrow('timed out');
    expect(await cache.fetch('a', () => Promise.resolve({ n: 1 }))).toEqual({ n: 1 });
  });
});
