// mapBounded (core/async/map-bounded.ts): never more than `limit` in flight, every item once, the
// answers in the items' order whatever order the calls finish in.
import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../../core/async/map-bounded.ts';

describe('mapBounded', () => {
  it('keeps at most limit calls in flight and answers in the items’ order', async () => {
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    const items = Array.from({ length: 23 }, (_, i) => i);
    const out = await mapBounded(items, 4, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      seen.push(n);
      // Later items finish sooner: the order of answers must not follow the order of finishing.
      await new Promise((r) => setImmediate(r));
      if (n % 3 === 0) await new Promise((r) => setImmediate(r));
      inFlight--;
      return n * 10;
    });
    expect(out).toEqual(items.map((n) => n * 10));
    expect(most).toBe(4);
    expect([...seen].sort((a, b) => a - b)).toEqual(items);
  });

  it('handles fewer items than the limit, and none', async () => {
    expect(await mapBounded([1, 2], 4, async (n) => n + 1)).toEqual([2, 3]);
    expect(await mapBounded([], 4, async (n: number) => n)).toEqual([]);
  });

  it('refuses a limit that is not a positive integer', async () => {
    await expect(mapBounded([1], 0, async (n) => n)).rejects.toThrow(RangeError);
    await expect(mapBounded([1], 1.5, async (n) => n)).rejects.toThrow(RangeError);
  });
});
