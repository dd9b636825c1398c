// Per-identity token bucket in PostgreSQL, so the limit holds across API replicas: refilled by
// elapsed time (capped at the burst), a token taken per call. A fresh call takes its token in the
// statement that writes its row (calls/store.ts insertCall); a resume in one of its own.
import type { CommonQueryMethods } from 'slonik';
import { AppError } from '../errors.ts';
import { takeBucketToken, type Bucket } from './rate-limit-store.ts';

/** The identity's call bucket; null when the limit is off (0 per minute). */
export function callBucket(identityId: string, perMinute: number): Bucket | null {
  return perMinute > 0 ? { key: `calls:${identityId}`, rate: perMinute / 60, burst: perMinute } : null;
}

/** `rate_limited` (429) with the seconds until a token is back (`tokens`: what the bucket holds). */
export function rateLimited(perMinute: number, tokens: number): AppError {
  const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / (perMinute / 60)));
  return new AppError('rate_limited', `too many calls: at most ${perMinute} per minute for this identity`, { retry_after_seconds: retryAfterSeconds });
}

/** Throws `rate_limited` when the identity's bucket is empty (a call that writes no row). */
export async function enforceRateLimit(db: CommonQueryMethods, identityId: string, perMinute: number): Promise<void> {
  const bucket = callBucket(identityId, perMinute);
  if (!bucket) return;
  const r = await takeBucketToken(db, bucket);
  if (!r.last_allowed) throw rateLimited(perMinute, r.tokens);
}
