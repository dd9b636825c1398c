// One load per turn of the event loop (server/events/turn-batch.ts): what lets 500 open event
// streams share one read of their viewers when an event arrives.
import { describe, expect, it } from 'vitest';
import { turnBatcher } from '../../../server/events/turn-batch.ts';

describe('turnBatcher', () => {
  it('answers every request of a turn with one load, each its own answer, in order', async () => {
    const loads: number[][] = [];
    const double = turnBatcher(async (xs: readonly number[]) => {
      loads.push([...xs]);
      return xs.map((x) => x * 2);
    });
    const answers = await Promise.all(Array.from({ length: 500 }, (_, i) => double(i)));
    expect(answers).toEqual(Array.from({ length: 500 }, (_, i) => i * 2));
    expect(loads).toHaveLength(1);
    expect(loads[0]).toHaveLength(500);
  });

  it('asks from promise chains of the same turn join the batch; a later turn loads again', async () => {
    let loads = 0;
    const echo = turnBatcher(async (xs: readonly string[]) => {
      loads++;
      return xs;
    });
    // As each stream's delivery runs: after an awaited, already settled promise (a microtask).
    const chained = await Promise.all(['a', 'b', 'c'].map((x) => Promise.resolve().then(() => echo(x))));
    expect(chained).toEqual(['a', 'b', 'c']);
    expect(loads).toBe(1);
    expect(await echo('d')).toBe('d');
    expect(loads).toBe(2);
  });

  it('fails every request of a batch whose load fails, and the next batch loads afresh', async () => {
    let fail = true;
    const flaky = turnBatcher(async (xs: readonly number[]) => {
      if (fail) throw new Error('database gone');
      return xs;
    });
    const results = await Promise.allSettled([flaky(1), flaky(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await flaky(3)).toBe(3);
  });

  it('refuses a load that does not answer every request', async () => {
    const short = turnBatcher(async (xs: readonly number[]) => xs.slice(1));
    await expect(Promise.all([short(1), short(2)])).rejects.toThrow('answered 1 of 2');
  });
});
