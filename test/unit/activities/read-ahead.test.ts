// A read started ahead of the step that needs it must not take the process down when the step
// ends before awaiting it and the read then fails (chaos: PostgreSQL killed during an allow).
import { describe, expect, it } from 'vitest';
import { readAhead } from '../../../activities/read-ahead.ts';

/** Unhandled rejections seen while `run` and the turns after it run. */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const onUnhandled = (reason: unknown) => seen.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await run();
    // Unhandled rejections are reported after the microtask queue drains: give it a few turns.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return seen;
}

const failingLater = () => new Promise<string>((_, reject) => setTimeout(() => reject(new Error('connect ECONNREFUSED')), 5));

describe('readAhead', () => {
  it('a read the step never awaits fails without an unhandled rejection', async () => {
    const seen = await unhandledDuring(async () => {
      void readAhead(failingLater());
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(seen).toEqual([]);
  });

  it('the same read without it is an unhandled rejection (what the gateway died of)', async () => {
    const seen = await unhandledDuring(async () => {
      void failingLater();
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(seen).toHaveLength(1);
  });

  it('whoever awaits it still gets the value or the failure', async () => {
    await expect(readAhead(Promise.resolve('row'))).resolves.toBe('row');
    await expect(readAhead(failingLater())).rejects.toThrow('ECONNREFUSED');
  });
});
