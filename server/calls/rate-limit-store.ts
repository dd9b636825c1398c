// SQL for the per-identity token buckets of rate-limit.ts (table rate_buckets).
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const bucketRow = z.object({ tokens: z.number(), last_allowed: z.boolean() });

/**
 * One statement: refills the bucket by the time elapsed (`rate` tokens a second, capped at
 * `burst`; a new bucket starts full) and takes a token when one is there. Returns what is left
 * and whether a token was taken.
 */
export async function takeBucketToken(db: CommonQueryMethods, key: string, rate: number, burst: number): Promise<z.infer<typeof bucketRow>> {
  const refill = sql.fragment`LEAST(${burst}::float8, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.updated_at) * ${rate}::float8)`;
  return db.one(sql.type(bucketRow)`
    INSERT INTO rate_buckets AS b (key, tokens, last_allowed, updated_at) VALUES (${key}, ${burst - 1}::float8, true, clock_timestamp())
    ON CONFLICT (key) DO UPDATE SET
      last_allowed = ${refill} >= 1,
      tokens = CASE WHEN ${refill} >= 1 THEN ${refill} - 1 ELSE ${refill} END,
      updated_at = clock_timestamp()
    RETURNING tokens, last_allowed`);
}
