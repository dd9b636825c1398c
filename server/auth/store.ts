// SQL for what authentication keeps of its own: dashboard sessions and the sign-in throttle's
// counters (login-throttle.ts). No authorization here: the auth service decides; this module reads and writes rows.
import { prepared } from '../db/prepared.ts';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { RideAlongRead } from '../identities/store.ts';

type Db = CommonQueryMethods;

export const sessionPrincipalRow = z.object({
  session_id: z.string(),
  user_id: z.string(),
  org_id: z.string(),
  role: z.enum(['admin', 'member', 'approver']),
});

export async function createSession(db: Db, userId: string, tokenHash: Buffer, ttlSeconds: number): Promise<{ id: string; expires_at: Date }> {
  return db.one(sql.type(z.object({ id: z.string(), expires_at: z.date() }))`
    INSERT INTO sessions (user_id, token_hash, expires_at)
    VALUES (${userId}, ${sql.binary(tokenHash)}, now() + make_interval(secs => ${ttlSeconds}))
    RETURNING id, expires_at`);
}

const sessionWithAlongside = sessionPrincipalRow.extend({ alongside: z.unknown() });

/** A live session's user; `alongside` reads what the request needs next in the same statement. */
export const findSession = (db: Db, tokenHash: Buffer, alongside?: RideAlongRead) =>
  db.maybeOne(prepared(sql.type(sessionWithAlongside)`
    SELECT s.id AS session_id, u.id AS user_id, u.org_id, u.role,
      ${alongside ? alongside(sql.fragment`u.org_id`, sql.fragment`u.id`, sql.fragment`u.id`) : sql.fragment`NULL::json`} AS alongside
    FROM sessions s JOIN identities u ON u.id = s.user_id
    WHERE s.token_hash = ${sql.binary(tokenHash)} AND s.revoked_at IS NULL AND s.expires_at > now() AND u.status = 'active'`));

export async function revokeSession(db: Db, sessionId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE sessions SET revoked_at = now() WHERE id = ${sessionId} AND revoked_at IS NULL`);
}

const throttleRow = z.object({ key: z.string(), failures: z.number(), last_failure_at: z.date().nullable(), blocked_until: z.date().nullable(), now: z.date() });

/**
 * The sign-in throttle's counters for `keys`, locked until the transaction ends (parallel
 * attempts on any replica take turns), with the database's clock: every replica judges by the
 * same time. Missing counters are created empty first.
 */
export async function lockThrottleCounters(tx: Db, keys: readonly string[]) {
  const sorted = [...new Set(keys)].sort();
  await tx.query(sql.unsafe`INSERT INTO login_throttles (key) SELECT unnest(${sql.array(sorted, 'text')}) ORDER BY 1 ON CONFLICT (key) DO NOTHING`);
  return tx.any(sql.type(throttleRow)`
    SELECT key, failures, last_failure_at, blocked_until, clock_timestamp() AS now FROM login_throttles
    WHERE key = ANY(${sql.array(sorted, 'text')}) ORDER BY key FOR UPDATE`);
}

export async function saveThrottleCounters(tx: Db, rows: readonly { key: string; failures: number; lastFailureAt: Date | null; blockedUntil: Date | null }[]): Promise<void> {
  for (const r of rows) {
    const lastFailureAt = r.lastFailureAt ? sql.timestamp(r.lastFailureAt) : null;
    const blockedUntil = r.blockedUntil ? sql.timestamp(r.blockedUntil) : null;
    // An upsert: a prune may have dropped an idle counter meanwhile.
    await tx.query(sql.unsafe`
      INSERT INTO login_throttles (key, failures, last_failure_at, blocked_until) VALUES (${r.key}, ${r.failures}, ${lastFailureAt}, ${blockedUntil})
      ON CONFLICT (key) DO UPDATE SET failures = EXCLUDED.failures, last_failure_at = EXCLUDED.last_failure_at, blocked_until = EXCLUDED.blocked_until`);
  }
}

/** Drops counters quiet for longer than `olderThanSeconds` (they count nothing any more). */
export async function pruneThrottleCounters(db: Db, olderThanSeconds: number): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM login_throttles
    WHERE COALESCE(last_failure_at, '-infinity') < now() - make_interval(secs => ${olderThanSeconds})
      AND COALESCE(blocked_until, '-infinity') < now()`);
}
