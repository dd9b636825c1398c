// TTL of a remembered rule: `<n>h` or `<n>d`, n a positive integer, at most 90 days.

export const MAX_TTL_MS = 90 * 24 * 60 * 60 * 1000;

const UNIT_MS = { h: 60 * 60 * 1000, d: 24 * 60 * 60 * 1000 } as const;

// Strict on purpose: no whitespace, signs, leading zeros or uppercase units.
const TTL = /^([1-9][0-9]*)([hd])$/;

export type TtlResult =
  | { ok: true; ms: number }
  | { ok: false; reason: 'malformed' | 'too_long'; message: string };

export function parseTtl(input: string): TtlResult {
  const match = TTL.exec(input);
  if (match === null) {
    return { ok: false, reason: 'malformed', message: 'ttl must look like <n>h or <n>d, e.g. 12h or 30d' };
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  // Huge digit strings become Infinity and land here too.
  if (!(ms <= MAX_TTL_MS)) return { ok: false, reason: 'too_long', message: 'ttl may be at most 90d' };
  return { ok: true, ms };
}

/** Expiry instant of a rule planted at `now` with the given ttl. */
export function ttlExpiry(now: Date, ttlMs: number): Date {
  return new Date(now.getTime() + ttlMs);
}
