// Instants for people in server-rendered pages and messages (core/text/when.ts).
import { describe, expect, it } from 'vitest';
import { absoluteTime, relativeTime, timeForPeople } from '../../../core/text/when.ts';

const now = new Date('2026-11-27T13:51:00Z');
const after = (seconds: number) => new Date(now.getTime() + seconds * 1000);

describe('times for people', () => {
  it('writes the day, the short month, the year and the UTC time, never ISO', () => {
    expect(absoluteTime(new Date('2026-11-27T14:05:59.999Z'))).toBe('27 Nov 2026, 14:05 UTC');
    expect(absoluteTime(new Date('2030-01-01T00:00:00Z'))).toBe('1 Jan 2030, 00:00 UTC');
  });

  it('says how far off an instant is, ahead or past, and "now" within a few seconds', () => {
    expect(relativeTime(after(14 * 60), now)).toBe('in 14 minutes');
    expect(relativeTime(after(-3 * 3600), now)).toBe('3 hours ago');
    expect(relativeTime(after(2), now)).toBe('now');
    expect(relativeTime(after(45), now)).toBe('in 45 seconds');
  });

  it('puts both together', () => {
    expect(timeForPeople(new Date('2026-11-27T14:05:00Z'), now)).toBe('27 Nov 2026, 14:05 UTC (in 14 minutes)');
  });
});
