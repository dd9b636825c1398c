import { describe, expect, it } from 'vitest';
import { waitAtMost } from '../../../core/async/wait-at-most.ts';

describe('waitAtMost', () => {
  it('resolves as soon as the work settles, fulfilled or rejected', async () => {
    let done = false;
    await waitAtMost(
      new Promise((resolve) => setTimeout(resolve, 5)).then(() => (done = true)),
      60_000,
    );
    expect(done).toBe(true);
    await expect(waitAtMost(Promise.reject(new Error('lost')), 60_000)).resolves.toBeUndefined();
  });

  it('stops waiting after the bound for work that never settles', async () => {
    const never = new Promise(() => {});
    const outcome = await Promise.race([waitAtMost(never, 10).then(() => 'bounded'), new Promise((resolve) => setTimeout(resolve, 30_000, 'still waiting'))]);
    expect(outcome).toBe('bounded');
  });
});
