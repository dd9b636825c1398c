// Many signed-in people of one org, fast (the event stream at scale: bench/support/scale-streams.ts
// and its test): people and their sessions inserted with two statements, not signed in one by one
// through the API (which throttles sign-ins and hashes each password).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { hashToken, newToken, SESSION_PREFIX } from '../../server/auth/tokens.ts';

/** `n` active people of the org (admins unless told) with one live session each; their session tokens and ids. */
export async function seedSignedInPeople(databaseUrl: string, orgId: string, n: number, role: 'admin' | 'member' = 'admin'): Promise<Array<{ token: string; userId: string }>> {
  const tokens = Array.from({ length: n }, () => newToken(SESSION_PREFIX));
  const tag = randomUUID().slice(0, 8);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  let people: pg.QueryResult<{ id: string }> | undefined;
  try {
    await db.query('BEGIN');
    people = await db.query<{ id: string }>(
      `WITH ids AS (SELECT gen_random_uuid() AS id, g FROM generate_series(1, $2::int) g)
       INSERT INTO identities (id, org_id, kind, user_id, name, email, role, password_hash)
       SELECT id, $1::uuid, 'user', id, 'viewer ' || g, 'viewer-' || $3 || '-' || g || '@bench.test', $4, 'not a password hash: no sign-in'
       FROM ids ORDER BY g RETURNING id`,
      [orgId, n, tag, role],
    );
    await db.query(
      `INSERT INTO sessions (user_id, token_hash, expires_at)
       SELECT u, h, now() + interval '1 day' FROM unnest($1::uuid[], $2::bytea[]) AS s(u, h)`,
      [people.rows.map((r) => r.id), tokens.map(hashToken)],
    );
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await db.end();
  }
  return tokens.map((token, i) => ({ token, userId: people!.rows[i]!.id }));
}
