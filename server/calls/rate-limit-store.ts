// SQL for the per-identity token buckets of rate-limit.ts (table rate_buckets).
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const bucketRow = z.object({ tokens: z.number(), last_allowed: z.boolean() });

/** A bucket: its key, its refill rate (tokens a second) and its size. */
export interface Bucket {
  key: string;
  rate: number;
  burst: number;
}

/**
 * Refills the bucket by the time elapsed (`rate` tokens a second, capped at `burst`; a new bucket
 * starts full) and takes a token when one is there, returning `tokens` (what is left) and
 * `last_allowed` (whether one was taken). A fragment, so a call's insert can take its token in
 * the same statement (calls/store.ts insertCall).
 */
export function bucketTokenTake({ key, rate, burst }: Bucket) {
  const refill = sql.fragment`LEAST(${burst}::float8, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.updated_at) * ${rate}::float8)`;
  return sql.fragment`
    INSERT INTO rate_buckets AS b (key, tokens, last_allowed, updated_at) VALUES (${key}, ${burst - 1}::float8, true, clock_timestamp())
    ON CONFLICT (key) DO UPDATE SET
      last_allowed = ${refill} >= 1,
      tokens = CASE WHEN ${refill} >= 1 THEN ${refill} - 1 ELSE ${refill} END,
      updated_at = clock_timestamp()
    RETURNING tokens, last_allowed`;
}

/** Takes a token on its own statement (a resume, which writes no call row). */
export async function takeBucketToken(db: CommonQueryMethods, bucket: Bucket): Promise<z.infer<typeof bucketRow>> {
  return db.one(sql.type(bucketRow)`${bucketTokenTake(bucket)}`);
}
