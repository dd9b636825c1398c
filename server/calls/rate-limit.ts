// Per-identity token bucket in PostgreSQL, so the limit holds across API replicas. One statement:
// refill by elapsed time (capped at the burst), take a token when one is there.
import type { CommonQueryMethods } from 'slonik';
import { AppError } from '../errors.ts';
import { takeBucketToken } from './rate-limit-store.ts';

export interface RateLimitResult {
  allowed: boolean;
  retryAfterSeconds: number;
}

export async function takeToken(db: CommonQueryMethods, key: string, perMinute: number): Promise<RateLimitResult> {
  const rate = perMinute / 60;
  const burst = perMinute;
  const row = await takeBucketToken(db, key, rate, burst);
  return { allowed: row.last_allowed, retryAfterSeconds: row.last_allowed ? 0 : Math.max(1, Math.ceil((1 - row.tokens) / rate)) };
}

/** Throws `rate_limited` (429) with the seconds to wait when the identity's bucket is empty. */
export async function enforceRateLimit(db: CommonQueryMethods, identityId: string, perMinute: number): Promise<void> {
  if (perMinute <= 0) return;
  const r = await takeToken(db, `calls:${identityId}`, perMinute);
  if (!r.allowed) {
    throw new AppError('rate_limited', `too many calls: at most ${perMinute} per minute for this identity`, { retry_after_seconds: r.retryAfterSeconds });
  }
}
