import { describe, expect, it } from 'vitest';
import { MAX_TTL_MS, parseTtl, ttlExpiry } from '../../../core/permissions/ttl.ts';

const H = 3_600_000;

describe('parseTtl', () => {
  it.each([
    ['1h', H],
    ['12h', 12 * H],
    ['1d', 24 * H],
    ['30d', 30 * 24 * H],
    ['90d', MAX_TTL_MS],
    ['2160h', MAX_TTL_MS],
  ])('%s → %d ms', (input, ms) => {
    expect(parseTtl(input)).toEqual({ ok: true, ms });
  });

  it.each([
    ['', 'malformed'],
    ['h', 'malformed'],
    ['0h', 'malformed'],
    ['0d', 'malformed'],
    ['01d', 'malformed'],
    ['-1d', 'malformed'],
    ['1.5h', 'malformed'],
    ['1H', 'malformed'],
    ['1m', 'malformed'],
    ['1w', 'malformed'],
    [' 1d', 'malformed'],
    ['1d ', 'malformed'],
    ['1 d', 'malformed'],
    ['1d1h', 'malformed'],
    ['91d', 'too_long'],
    ['2161h', 'too_long'],
    [`${'9'.repeat(400)}d`, 'too_long'],
  ])('%j → %s', (input, reason) => {
    const result = parseTtl(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe(reason);
  });

  it('computes the expiry instant', () => {
    expect(ttlExpiry(new Date('2025-01-01T00:00:00Z'), 24 * H).toISOString()).toBe('2025-01-02T00:00:00.000Z');
  });
});
