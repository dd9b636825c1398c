// SQL for what authentication keeps of its own: dashboard sessions and sign-in attempts (the
// throttle). No authorization here: the auth service decides; this module reads and writes rows.
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

export async function recordLoginAttempt(db: Db, email: string, succeeded: boolean): Promise<void> {
  await db.query(sql.unsafe`INSERT INTO login_attempts (email_lower, succeeded) VALUES (lower(${email}), ${succeeded})`);
}

/** Failed attempts for this email since its last success, within the window. */
export const recentFailures = (db: Db, email: string, windowSeconds: number) =>
  db.one(sql.type(z.object({ n: z.number(), oldest: z.date().nullable() }))`
    SELECT count(*)::int AS n, min(attempted_at) AS oldest FROM login_attempts
    WHERE email_lower = lower(${email}) AND NOT succeeded
      AND attempted_at > now() - make_interval(secs => ${windowSeconds})
      AND attempted_at > COALESCE((SELECT max(attempted_at) FROM login_attempts WHERE email_lower = lower(${email}) AND succeeded), '-infinity')`);
