// The Temporal watcher's answers, taken in the order questions were asked (server/temporal/health.ts).
import { describe, expect, it } from 'vitest';
import { newestAnswerWins } from '../../../server/temporal/health.ts';

describe('newestAnswerWins', () => {
  it('drops a probe that times out after a later check heard Temporal answer', () => {
    const q = newestAnswerWins();
    const probe = q.ask(); // asked while Temporal is down; waits out its deadline
    const readyz = q.ask(); // asked once Temporal is back
    expect(q.answered(readyz)).toBe(true); // Temporal answers: up
    expect(q.answered(probe)).toBe(false); // the old probe's timeout comes later: not news
  });

  it('takes answers that arrive in order, and an older one while nothing newer was answered', () => {
    const q = newestAnswerWins();
    const first = q.ask();
    const second = q.ask();
    expect(q.answered(first)).toBe(true);
    expect(q.answered(second)).toBe(true);
    const third = q.ask();
    const fourth = q.ask();
    expect(q.answered(third)).toBe(true); // fourth still open: third is the newest word so far
    expect(q.answered(fourth)).toBe(true);
    expect(q.answered(third)).toBe(false);
  });
});
