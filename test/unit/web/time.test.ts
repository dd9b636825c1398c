import { describe, expect, it } from 'vitest';
import { countdown, relative } from '../../../web/src/lib/time.ts';

const now = Date.parse('2026-11-23T12:00:00Z');
const at = (offsetS: number) => new Date(now + offsetS * 1000).toISOString();

describe('relative times for people', () => {
  it('says "now" for an instant within a few seconds either way (clock skew is not "in 1 second")', () => {
    expect(relative(at(1.2), now)).toBe('now');
    expect(relative(at(-3), now)).toBe('now');
  });

  it('names the unit beyond that, past and future', () => {
    expect(relative(at(-42), now)).toBe('42 seconds ago');
    expect(relative(at(-3 * 3600), now)).toBe('3 hours ago');
    expect(relative(at(2 * 86400), now)).toBe('in 2 days');
  });

  it('counts down to expiry and stops once past', () => {
    expect(countdown(at(14 * 60 + 59), now)).toBe('14:59');
    expect(countdown(at(2 * 3600 + 5 * 60), now)).toBe('2h 05m');
    expect(countdown(at(-1), now)).toBeNull();
  });
});
