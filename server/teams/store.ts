// SQL for the people of an org (issue 29): members with their counts, role and approver changes,
// deactivation, invitations, and an approval's routing past the requester's user. No
// authorization here: the teams service decides who may do what.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Role } from '../../core/permissions/routing.ts';

type Db = CommonQueryMethods;

const role = z.enum(['admin', 'member', 'approver']);

export const memberRow = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  email: z.string(),
  role,
  approver_id: z.string().nullable(),
  status: z.enum(['active', 'archived', 'revoked']),
  created_at: z.date(),
  deactivated_at: z.date().nullable(),
  last_sign_in_at: z.date().nullable(),
  agent_count: z.number(),
  pending_approvals: z.number(),
});
export type MemberRow = z.infer<typeof memberRow>;

const MEMBER_SELECT = sql.fragment`
  SELECT u.id, u.org_id, u.name, u.email, u.role, u.approver_id, u.status, u.created_at, u.deactivated_at,
    (SELECT max(s.created_at) FROM sessions s WHERE s.user_id = u.id) AS last_sign_in_at,
    (SELECT count(*)::int FROM identities a WHERE a.user_id = u.id AND a.kind = 'agent' AND a.status = 'active') AS agent_count,
    (SELECT count(*)::int FROM approvals p WHERE p.user_id = u.id AND p.status IN ('pending', 'bubbled')) AS pending_approvals
  FROM identities u`;

export const listMembers = (db: Db, orgId: string) =>
  db.any(sql.type(memberRow)`${MEMBER_SELECT} WHERE u.org_id = ${orgId} AND u.kind = 'user' ORDER BY u.created_at`);

export const getMember = (db: Db, orgId: string, id: string) =>
  db.maybeOne(sql.type(memberRow)`${MEMBER_SELECT} WHERE u.org_id = ${orgId} AND u.kind = 'user' AND u.id = ${id}`);

/** Every person of the org, in the shape core/permissions/routing.ts takes. */
export const peopleOfOrg = (db: Db, orgId: string) =>
  db.any(sql.type(z.object({ id: z.string(), name: z.string(), role, approver_id: z.string().nullable(), status: z.string() }))`
    SELECT id, name, role, approver_id, status FROM identities WHERE org_id = ${orgId} AND kind = 'user'`);

/** Serialises changes to the org's admins (the last-admin guard reads, then writes). */
export async function lockOrgPeople(db: Db, orgId: string): Promise<void> {
  await db.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`org-people:${orgId}`}, 7242029))`);
}

export const activeAdminCount = (db: Db, orgId: string) =>
  db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM identities WHERE org_id = ${orgId} AND kind = 'user' AND role = 'admin' AND status = 'active'`);

export async function setRole(db: Db, id: string, r: Role): Promise<void> {
  await db.query(sql.unsafe`UPDATE identities SET role = ${r} WHERE id = ${id} AND kind = 'user'`);
}

export async function setApprover(db: Db, id: string, approverId: string | null): Promise<void> {
  await db.query(sql.unsafe`UPDATE identities SET approver_id = ${approverId} WHERE id = ${id} AND kind = 'user'`);
}

/**
 * Deactivation: the person and every identity below them stop (status `revoked`, which every
 * credential check already refuses), their sessions end, every key of their tree is revoked.
 * Nothing is deleted. Answers the ids of the tree (the caller ends their OAuth grants and approvals).
 */
export async function deactivate(db: Db, userId: string, by: string): Promise<string[]> {
  const ids = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    UPDATE identities SET status = 'revoked', archived_at = COALESCE(archived_at, now()),
      deactivated_at = CASE WHEN id = ${userId} THEN now() ELSE deactivated_at END,
      deactivated_by = CASE WHEN id = ${userId} THEN ${by}::uuid ELSE deactivated_by END
    WHERE user_id = ${userId} AND status <> 'revoked'
    RETURNING id`);
  await db.query(sql.unsafe`UPDATE sessions SET revoked_at = now() WHERE user_id = ${userId} AND revoked_at IS NULL`);
  await db.query(sql.unsafe`
    UPDATE agent_keys k SET revoked_at = now()
    WHERE k.revoked_at IS NULL AND k.identity_id IN (SELECT id FROM identities WHERE user_id = ${userId})`);
  return [...ids];
}

// Invitations --------------------------------------------------------------------------------------

export const invitationRow = z.object({
  id: z.string(),
  org_id: z.string(),
  email: z.string(),
  role,
  approver_id: z.string().nullable(),
  created_by: z.string(),
  created_at: z.date(),
  expires_at: z.date(),
  accepted_at: z.date().nullable(),
  accepted_by: z.string().nullable(),
  revoked_at: z.date().nullable(),
});
export type InvitationRow = z.infer<typeof invitationRow>;

const INVITATION_COLUMNS = sql.fragment`id, org_id, email, role, approver_id, created_by, created_at, expires_at, accepted_at, accepted_by, revoked_at`;

export const createInvitation = (
  db: Db,
  i: { orgId: string; email: string; role: Role; approverId: string | null; tokenHash: Buffer; createdBy: string; ttlSeconds: number },
) =>
  db.one(sql.type(invitationRow)`
    INSERT INTO invitations (org_id, email, role, approver_id, token_hash, created_by, expires_at)
    VALUES (${i.orgId}, ${i.email}, ${i.role}, ${i.approverId}, ${sql.binary(i.tokenHash)}, ${i.createdBy}, now() + make_interval(secs => ${i.ttlSeconds}))
    RETURNING ${INVITATION_COLUMNS}`);

export const listInvitations = (db: Db, orgId: string) =>
  db.any(sql.type(invitationRow)`SELECT ${INVITATION_COLUMNS} FROM invitations WHERE org_id = ${orgId} ORDER BY created_at DESC`);

export const getInvitation = (db: Db, orgId: string, id: string) =>
  db.maybeOne(sql.type(invitationRow)`SELECT ${INVITATION_COLUMNS} FROM invitations WHERE org_id = ${orgId} AND id = ${id}`);

/** The invitation behind a link's token (any state: the service says why it no longer works), with its org's name. */
export const invitationByToken = (db: Db, tokenHash: Buffer) =>
  db.maybeOne(sql.type(invitationRow.extend({ org_name: z.string() }))`
    SELECT i.id, i.org_id, i.email, i.role, i.approver_id, i.created_by, i.created_at, i.expires_at, i.accepted_at, i.accepted_by, i.revoked_at, o.name AS org_name
    FROM invitations i JOIN orgs o ON o.id = i.org_id WHERE i.token_hash = ${sql.binary(tokenHash)}`);

/** An open invitation for this address in the org (one at a time). */
export const openInvitationFor = (db: Db, orgId: string, email: string) =>
  db.maybeOne(sql.type(invitationRow)`
    SELECT ${INVITATION_COLUMNS} FROM invitations
    WHERE org_id = ${orgId} AND lower(email) = lower(${email}) AND accepted_at IS NULL AND revoked_at IS NULL`);

/** Revokes an invitation still open; its revocation time, or null when it was not (already used or revoked). */
export const revokeInvitation = (db: Db, id: string) =>
  db.maybeOneFirst(sql.type(z.object({ revoked_at: z.date() }))`
    UPDATE invitations SET revoked_at = now() WHERE id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL RETURNING revoked_at`);

/** Takes the invitation (single use): true only for the one request that finds it open and unexpired. */
export async function claimInvitation(db: Db, id: string, userId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE invitations SET accepted_at = now(), accepted_by = ${userId}
    WHERE id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()`);
  return r.rowCount > 0;
}

/** An invited person's user row (the same columns the identities store writes for users). */
export const createInvitedUser = (db: Db, u: { orgId: string; name: string; email: string; role: Role; approverId: string | null; passwordHash: string; createdBy: string | null }) =>
  db.oneFirst(sql.type(z.object({ id: z.string() }))`
    WITH new_id AS (SELECT gen_random_uuid() AS id)
    INSERT INTO identities (id, org_id, kind, user_id, name, email, role, approver_id, password_hash, created_by)
    SELECT id, ${u.orgId}, 'user', id, ${u.name}, ${u.email}, ${u.role}, ${u.approverId}, ${u.passwordHash}, ${u.createdBy} FROM new_id
    RETURNING id`);

export const userByEmail = (db: Db, email: string) =>
  db.maybeOne(sql.type(z.object({ id: z.string(), org_id: z.string() }))`
    SELECT id, org_id FROM identities WHERE kind = 'user' AND lower(email) = lower(${email})`);

// Approval routing past the user ------------------------------------------------------------------

export const routableApproval = z.object({
  id: z.string(),
  org_id: z.string(),
  user_id: z.string(),
  requester_id: z.string(),
  call_id: z.string(),
  resolver_id: z.string(),
  status: z.string(),
  routed_to: z.enum(['chain', 'approver', 'admins']),
  permission_keys: z.array(z.string()),
  action_description: z.string(),
  risk: z.string(),
});

/**
 * Moves an open approval one stage up, only if it still sits where the caller saw it (a decision
 * or another bubble in between wins; then nothing changes and null is answered).
 */
export const routeApproval = (
  db: Db,
  r: { id: string; fromStage: string; fromResolver: string; toStage: 'approver' | 'admins'; toResolver: string; routedFrom: string },
) =>
  db.maybeOne(sql.type(routableApproval)`
    UPDATE approvals SET status = 'bubbled', routed_to = ${r.toStage}, resolver_id = ${r.toResolver}, routed_from = ${r.routedFrom},
      bubble_count = bubble_count + 1, updated_at = now()
    WHERE id = ${r.id} AND status IN ('pending', 'bubbled') AND routed_to = ${r.fromStage} AND resolver_id = ${r.fromResolver}
    RETURNING id, org_id, user_id, requester_id, call_id, resolver_id, status, routed_to, permission_keys, action_description, risk`);

/** The requester's chain ids (requester first), for the audit row of a routing step. */
export const chainIds = (db: Db, id: string) =>
  db.anyFirst(sql.type(z.object({ id: z.string() }))`
    WITH RECURSIVE chain AS (
      SELECT i.id, i.parent_id, 0 AS depth FROM identities i WHERE i.id = ${id}
      UNION ALL
      SELECT p.id, p.parent_id, c.depth + 1 FROM identities p JOIN chain c ON p.id = c.parent_id WHERE c.depth < 64
    ) SELECT id FROM chain ORDER BY depth`);

/** Open approvals routed to `personId` as an approver (of `forUserId`'s approvals only, when given). */
export const waitingOn = (db: Db, orgId: string, personId: string, forUserId?: string) =>
  db.any(sql.type(routableApproval)`
    SELECT id, org_id, user_id, requester_id, call_id, resolver_id, status, routed_to, permission_keys, action_description, risk
    FROM approvals WHERE org_id = ${orgId} AND routed_to = 'approver' AND resolver_id = ${personId} AND status IN ('pending', 'bubbled')
      ${forUserId === undefined ? sql.fragment`` : sql.fragment`AND user_id = ${forUserId}`}`);

/**
 * Whether `orgId`'s single sign-on holds the claim on `domain` (server/sso/store.ts claimDomains),
 * read under a share lock: the claim cannot move to another org before the caller's transaction ends.
 */
export const ownsDomain = async (db: Db, orgId: string, domain: string): Promise<boolean> =>
  (await db.maybeOneFirst(sql.type(z.object({ org_id: z.string() }))`
    SELECT org_id FROM sso_domain_claims WHERE domain = lower(${domain}) FOR SHARE`)) === orgId;

/** The org's earliest active admin (who a just-in-time join is recorded as created by). */
export const firstAdmin = (db: Db, orgId: string) =>
  db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM identities WHERE org_id = ${orgId} AND kind = 'user' AND role = 'admin' AND status = 'active' ORDER BY created_at LIMIT 1`);

/** One open approval (pending or bubbled) as routing reads it; null once decided or gone. */
export const openApproval = (db: Db, id: string) =>
  db.maybeOne(sql.type(routableApproval)`
    SELECT id, org_id, user_id, requester_id, call_id, resolver_id, status, routed_to, permission_keys, action_description, risk
    FROM approvals WHERE id = ${id} AND status IN ('pending', 'bubbled')`);
