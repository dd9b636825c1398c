// Many approvals in one org (each with its call, as the foreign keys want), written by the database
// itself (INSERT … SELECT over generate_series), and the reads of the approvals page over them: the
// history tab (every approval the viewer may see, newest first, a page of 100), "Mine", "Decide"
// and the assigned list, for an admin and for a member who has raised a few approvals only.
// Shared by the index test (test/integration/audit-indexes.test.ts) — deterministic ids
// (md5 of the org and a number) keep it free of randomness.
import { createHash } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import type { ApprovalQuery } from '../../server/approvals/store.ts';

/** People of the seeded org: 20 users; user 0 is the admin, who decides but has no agents; the 100 agents belong to the 19 others. */
const USERS = 20;
const AGENTS_PER_USER = 5;
/** One approval in this many is raised by the quiet member's agent. */
export const QUIET_EVERY = 20_000;

const uuidOf = (orgId: string, what: string) => sql.fragment`md5(${orgId}::text || ${what}::text)::uuid`;

/** The admin and the quiet member of the org seeded with `orgId`: md5 as the seed's SQL makes them. */
export function approvalVolumePeople(orgId: string): { adminId: string; quietMemberId: string } {
  const uuid = (text: string) => createHash('md5').update(text).digest('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  return { adminId: uuid(`${orgId}user:0`), quietMemberId: uuid(`${orgId}quiet-user`) };
}

/**
 * Creates the org with its people and `rows` approvals, one a minute up to now: almost all decided
 * (allowed, denied, expired), a few pending and bubbled, one in QUIET_EVERY raised by the quiet
 * member's agent (approvalVolumePeople names them).
 */
export async function seedApprovalVolume(db: CommonQueryMethods, orgId: string, rows: number): Promise<void> {
  const user = (n: ReturnType<typeof sql.fragment>) => sql.fragment`md5(${orgId}::text || 'user:' || (${n}))::uuid`;
  const agent = (n: ReturnType<typeof sql.fragment>) => sql.fragment`md5(${orgId}::text || 'agent:' || (${n}))::uuid`;
  const quietUser = uuidOf(orgId, 'quiet-user');
  const quietAgent = uuidOf(orgId, 'quiet-agent');
  const org = sql.fragment`${orgId}::uuid`;
  await db.query(sql.unsafe`INSERT INTO orgs (id, name) VALUES (${orgId}, 'approval volume')`);
  await db.query(sql.unsafe`
    INSERT INTO identities (id, org_id, kind, user_id, name, email, role, password_hash)
    SELECT ${user(sql.fragment`u`)}, ${org}, 'user', ${user(sql.fragment`u`)}, 'user ' || u, ${orgId}::text || '-' || u || '@example.test',
           CASE WHEN u = 0 THEN 'admin' ELSE 'member' END, 'not a real hash'
    FROM generate_series(0, ${USERS - 1}::int) AS u
    UNION ALL
    SELECT ${quietUser}, ${org}, 'user', ${quietUser}, 'quiet member', ${orgId}::text || '-quiet@example.test', 'member', 'not a real hash'`);
  await db.query(sql.unsafe`
    INSERT INTO identities (id, org_id, kind, parent_id, user_id, name)
    SELECT ${agent(sql.fragment`a`)}, ${org}, 'agent', ${user(sql.fragment`1 + a % ${USERS - 1}`)}, ${user(sql.fragment`1 + a % ${USERS - 1}`)}, 'agent ' || a
    FROM generate_series(0, ${USERS * AGENTS_PER_USER - 1}::int) AS a
    UNION ALL
    SELECT ${quietAgent}, ${org}, 'agent', ${quietUser}, ${quietUser}, 'quiet agent'`);
  // Who raised approval n: the quiet member's agent every QUIET_EVERY, else agent n % 100.
  const requester = sql.fragment`CASE WHEN n % ${QUIET_EVERY} = 0 THEN ${quietAgent} ELSE ${agent(sql.fragment`n % ${USERS * AGENTS_PER_USER}`)} END`;
  const owner = sql.fragment`CASE WHEN n % ${QUIET_EVERY} = 0 THEN ${quietUser} ELSE ${user(sql.fragment`1 + (n % ${USERS * AGENTS_PER_USER}) % ${USERS - 1}`)} END`;
  const at = sql.fragment`now() - make_interval(mins => ${rows} - n)`;
  await db.query(sql.unsafe`
    INSERT INTO calls (id, org_id, requester_id, user_id, service, template, action, risk, permission_keys, description,
                       request_redacted, request_envelope, status, created_at)
    SELECT md5(${orgId}::text || 'call:' || n)::uuid, ${org}, ${requester}, ${owner}, 'slack', 'chat', 'post', 'write',
           ARRAY['slack.chat.post'], 'post a message', '{}'::jsonb, '{}'::jsonb, 'finished', ${at}
    FROM generate_series(1, ${rows}::int) AS n`);
  await db.query(sql.unsafe`
    INSERT INTO approvals (id, call_id, org_id, requester_id, user_id, gap_identity_id, resolver_id, status, risk, permission_keys,
                           derived_keys, suggested_tiers, action_description, auto_call_on_approve, dedupe_key, expires_at,
                           created_at, updated_at)
    SELECT md5(${orgId}::text || 'approval:' || n)::uuid, md5(${orgId}::text || 'call:' || n)::uuid, ${org}, ${requester}, ${owner},
           ${owner}, ${owner},
           CASE WHEN n > ${rows} - 5 THEN 'pending' WHEN n > ${rows} - 8 THEN 'bubbled'
                WHEN n % 7 = 0 THEN 'denied' WHEN n % 11 = 0 THEN 'expired' ELSE 'allowed' END,
           'med', ARRAY['slack.chat.post'], ARRAY['slack.chat.post'], '[]'::jsonb, 'post a message', true, 'dedupe:' || n,
           ${at} + interval '15 minutes', ${at}, ${at}
    FROM generate_series(1, ${rows}::int) AS n`);
}

export interface ApprovalVolumeCase {
  name: string;
  query: Omit<ApprovalQuery, 'orgId' | 'before'>;
}

/** The approvals page's reads (web/src/routes/approvals): its three tabs and the assigned list. */
export function approvalVolumeCases(seeded: { adminId: string; quietMemberId: string }): ApprovalVolumeCase[] {
  const as = (who: 'admin' | 'quiet member', viewerId: string, admin: boolean) => [
    { name: `${who}: history (visible)`, query: { viewerId, admin, scope: 'visible' as const, limit: 101 } },
    { name: `${who}: history, cancelled only`, query: { viewerId, admin, scope: 'visible' as const, status: 'cancelled', limit: 101 } },
    { name: `${who}: mine`, query: { viewerId, admin, scope: 'mine' as const, limit: 101 } },
    { name: `${who}: assigned`, query: { viewerId, admin, scope: 'assigned' as const, limit: 101 } },
    { name: `${who}: decide (actionable)`, query: { viewerId, admin, scope: 'actionable' as const, limit: 101 } },
  ];
  return [...as('admin', seeded.adminId, true), ...as('quiet member', seeded.quietMemberId, false)];
}
