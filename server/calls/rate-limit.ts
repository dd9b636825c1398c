// Per-identity token bucket in PostgreSQL, so the limit holds across API replicas. One statement:
// refill by elapsed time (capped at the burst), take a token when one is there.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';

export interface RateLimitResult {
  allowed: boolean;
  retryAfterSeconds: number;
}

const bucketRow = z.object({ tokens: z.number(), last_allowed: z.boolean() });

export async function takeToken(db: CommonQueryMethods, key: string, perMinute: number): Promise<RateLimitResult> {
  const rate = perMinute / 60;
  const burst = perMinute;
  const refill = sql.fragment`LEAST(${burst}::float8, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.updated_at) * ${rate}::float8)`;
  const row = await db.one(sql.type(bucketRow)`
    INSERT INTO rate_buckets AS b (key, tokens, last_allowed, updated_at) VALUES (${key}, ${burst - 1}::float8, true, clock_timestamp())
    ON CONFLICT (key) DO UPDATE SET
      last_allowed = ${refill} >= 1,
      tokens = CASE WHEN ${refill} >= 1 THEN ${refill} - 1 ELSE ${refill} END,
      updated_at = clock_timestamp()
    RETURNING tokens, last_allowed`);
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
