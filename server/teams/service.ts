// The people of an org (issue 29): members, roles, each person's approver, deactivation, and
// invitations. Each method: authorize → load/validate → write. Everyone signed in to the org may
// list its people; only admins change them. Agents never reach this (server/auth/authority.ts).
import type { DatabasePool } from 'slonik';
import type { Role } from '../../core/permissions/routing.ts';
import { hashPassword, newPasswordProblem } from '../auth/passwords.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
// Accepting an invitation signs the new person in: the session row is auth's.
import { createSession } from '../auth/store.ts';
import { SESSION_TTL_SECONDS } from '../auth/service.ts';
import { hashToken, newToken, SESSION_PREFIX } from '../auth/tokens.ts';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import type { Logger } from '../logger.ts';
// Deactivation ends the OAuth grants of the person's agents in the same transaction.
import { revokeBindingsOfAgents } from '../oauth/store.ts';
import type { OrgReader } from '../orgs/readers.ts';
import { appendAudit } from '../audit/store.ts';
import type { AuditEntry } from '../audit/entry.ts';
import type { InvitationMailer } from './mailer.ts';
import * as store from './store.ts';

export const INVITATION_PREFIX = 'gwi_';
export const INVITATION_DEFAULT_DAYS = 7;
export const INVITATION_MAX_DAYS = 30;
/** Where a person lands after joining: their inbox. */
export const LANDING_PATH = '/approvals';
/** Stored for people who joined through SSO: not a scrypt hash, so no password ever matches it. */
export const SSO_ONLY_PASSWORD = 'sso-only';

export interface InviteInput {
  email: string;
  role: Role;
  approver_id?: string | null | undefined;
  expires_in_days?: number | undefined;
}

export interface MemberPatch {
  role?: Role | undefined;
  approver_id?: string | null | undefined;
}

export function publicMember(m: store.MemberRow) {
  return {
    id: m.id,
    name: m.name,
    email: m.email,
    role: m.role,
    approver_id: m.approver_id,
    status: m.status === 'active' ? ('active' as const) : ('deactivated' as const),
    last_sign_in_at: m.last_sign_in_at?.toISOString() ?? null,
    agent_count: m.agent_count,
    pending_approvals: m.pending_approvals,
    created_at: m.created_at.toISOString(),
    deactivated_at: m.deactivated_at?.toISOString() ?? null,
  };
}

function invitationState(i: store.InvitationRow): 'open' | 'accepted' | 'revoked' | 'expired' {
  if (i.accepted_at) return 'accepted';
  if (i.revoked_at) return 'revoked';
  return i.expires_at.getTime() <= Date.now() ? 'expired' : 'open';
}

export function publicInvitation(i: store.InvitationRow) {
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    approver_id: i.approver_id,
    status: invitationState(i),
    created_by: i.created_by,
    created_at: i.created_at.toISOString(),
    expires_at: i.expires_at.toISOString(),
    accepted_at: i.accepted_at?.toISOString() ?? null,
    accepted_by: i.accepted_by,
    revoked_at: i.revoked_at?.toISOString() ?? null,
  };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function createTeamService(deps: {
  pool: DatabasePool;
  publicUrl: string;
  orgs: Pick<OrgReader, 'getOrg'>;
  mailer: InvitationMailer;
  logger: Pick<Logger, 'warn'>;
  /** Cancels the pending approvals raised by these identities, with `reason` (the calls' workflows). */
  closePendingOf: (requesterIds: string[], reason: string) => Promise<void>;
  /** Moves approvals waiting on a former approver (of `forUserId` only, when given) on to the org's admins. */
  rerouteFrom: (orgId: string, personId: string, forUserId?: string) => Promise<void>;
  /** False when the org signs in with SSO only: then nobody joins with a password either. */
  passwordSigninAllowed?: (orgId: string) => Promise<boolean>;
}) {
  const { pool } = deps;

  /** A people change in the audit log, on the person it concerns (never a token or a password). */
  const audit = (orgId: string, event: AuditEntry['event'], subjectId: string | null, actorId: string | null, details: Record<string, unknown>) =>
    appendAudit(pool, { orgId, event, userId: subjectId, actorId, identityChain: subjectId ? [subjectId] : [], details });

  function assertAdmin(p: Principal, what: string): void {
    if (p.type !== 'user') throw forbidden('only people signed in to the dashboard manage the org’s people');
    if (!isAdmin(p)) throw forbidden(`only admins may ${what}`);
  }

  async function loadMember(p: Principal, id: string): Promise<store.MemberRow> {
    const m = await store.getMember(pool, p.orgId, id);
    if (!m) throw notFound('member');
    return m;
  }

  /** The approver named for `forId`: an active admin or approver of the org, never the person themself. */
  async function checkApprover(p: Principal, approverId: string, forId: string | null): Promise<void> {
    if (approverId === forId) throw invalidRequest('a person cannot be their own approver', { field: 'approver_id' });
    const a = await store.getMember(pool, p.orgId, approverId);
    if (!a) throw invalidRequest('approver_id is not a person of this org', { field: 'approver_id' });
    if (a.status !== 'active') throw invalidRequest(`${a.name} is deactivated and cannot approve`, { field: 'approver_id' });
    if (a.role === 'member') throw invalidRequest(`${a.name} is a member: give them the approver (or admin) role first`, { field: 'approver_id' });
  }

  /** The last active admin stays: refuses a change that would leave none. Inside the caller's transaction, under the org lock. */
  async function guardLastAdmin(tx: Parameters<Parameters<DatabasePool['transaction']>[0]>[0], member: store.MemberRow): Promise<void> {
    // Read again under the org's people lock: the role the page saw may have changed since.
    const m = (await store.getMember(tx, member.org_id, member.id)) ?? member;
    if (m.role !== 'admin' || m.status !== 'active') return;
    if ((await store.activeAdminCount(tx, m.org_id)) <= 1) {
      throw new AppError('last_admin', `${m.name} is the org's last admin: make someone else an admin first`, { member_id: m.id });
    }
  }

  /** The open invitation a link's token names, or the refusal that says why it cannot be used. */
  async function openByToken(token: string): Promise<store.InvitationRow & { org_name: string }> {
    const i = token.startsWith(INVITATION_PREFIX) ? await store.invitationByToken(pool, hashToken(token)) : null;
    if (!i) throw notFound('invitation');
    const state = invitationState(i);
    if (state === 'open') return i;
    const why = { accepted: 'has already been used', revoked: 'was revoked by an admin', expired: 'has expired' }[state];
    throw new AppError('invitation_unusable', `this invitation ${why}: ask an admin for a new one`, { reason: state });
  }

  return {
    async list(p: Principal) {
      if (p.type !== 'user') throw forbidden('only people list the org’s people');
      return (await store.listMembers(pool, p.orgId)).map(publicMember);
    },

    async get(p: Principal, id: string) {
      if (p.type !== 'user') throw forbidden('only people list the org’s people');
      return publicMember(await loadMember(p, id));
    },

    /** Role and approver; the last admin cannot be demoted. */
    async update(p: Principal, id: string, patch: MemberPatch) {
      assertAdmin(p, 'change roles and approvers');
      const m = await loadMember(p, id);
      if (m.status !== 'active') throw conflict(`${m.name} is deactivated`);
      if (patch.approver_id) await checkApprover(p, patch.approver_id, m.id);
      await pool.transaction(async (tx) => {
        await store.lockOrgPeople(tx, p.orgId);
        if (patch.role !== undefined && patch.role !== m.role) {
          await guardLastAdmin(tx, m);
          await store.setRole(tx, m.id, patch.role);
        }
        if (patch.approver_id !== undefined) await store.setApprover(tx, m.id, patch.approver_id);
      });
      const after = await loadMember(p, id);
      await audit(p.orgId, 'member.updated', m.id, p.identityId, {
        ...(patch.role !== undefined ? { role: { from: m.role, to: after.role } } : {}),
        ...(patch.approver_id !== undefined ? { approver_id: { from: m.approver_id, to: after.approver_id } } : {}),
      });
      // No longer their approver: what waited on the former approver for them moves on, so it is
      // neither decided nor seen (in the inbox or the event stream) by someone who lost the right.
      if (m.approver_id !== null && after.approver_id !== m.approver_id) await deps.rerouteFrom(p.orgId, m.approver_id, m.id);
      return publicMember(after);
    },

    /**
     * Deactivation: sessions end at once (and with them open pages and streams, through the
     * credentials trigger of migration 0013), every key and OAuth grant of their agents stops,
     * their pending approvals are cancelled with a reason, approvals waiting on them as an
     * approver move on to the admins. Nothing is deleted.
     */
    async deactivate(p: Principal, id: string) {
      assertAdmin(p, 'deactivate people');
      const m = await loadMember(p, id);
      if (m.id === p.identityId) throw forbidden('you cannot deactivate yourself');
      if (m.status !== 'active') throw conflict(`${m.name} is already deactivated`);
      const ids = await pool.transaction(async (tx) => {
        await store.lockOrgPeople(tx, p.orgId);
        await guardLastAdmin(tx, m);
        const tree = await store.deactivate(tx, m.id, p.identityId);
        await revokeBindingsOfAgents(tx, tree.filter((t) => t !== m.id));
        return tree;
      });
      await audit(p.orgId, 'member.deactivated', m.id, p.identityId, { identities: ids.length });
      await deps.closePendingOf(ids, `${m.name} was deactivated`);
      await deps.rerouteFrom(p.orgId, m.id);
      return publicMember(await loadMember(p, id));
    },

    async invite(p: Principal, input: InviteInput) {
      assertAdmin(p, 'invite people');
      const email = input.email.trim();
      if (!EMAIL.test(email)) throw invalidRequest('email is not an email address', { field: 'email' });
      if (input.approver_id) await checkApprover(p, input.approver_id, null);
      // Someone of another org is invited like anyone else (the answer must not tell an admin the
      // address exists elsewhere); accepting then tells the invitee, who knows their own account.
      const existing = await store.userByEmail(pool, email);
      if (existing?.org_id === p.orgId) throw conflict(`${email} is already a member of this org`, { field: 'email' });
      if (await store.openInvitationFor(pool, p.orgId, email)) {
        throw conflict(`${email} already has an open invitation: revoke it to send a new one`, { field: 'email' });
      }
      const token = newToken(INVITATION_PREFIX);
      const days = input.expires_in_days ?? INVITATION_DEFAULT_DAYS;
      const row = await store.createInvitation(pool, {
        orgId: p.orgId,
        email,
        role: input.role,
        approverId: input.approver_id ?? null,
        tokenHash: hashToken(token),
        createdBy: p.identityId,
        ttlSeconds: days * 24 * 3600,
      });
      await audit(p.orgId, 'member.invited', null, p.identityId, { invitation_id: row.id, email, role: input.role });
      // The token travels in the fragment: browsers never send it to a server or a proxy's log.
      const link = `${deps.publicUrl}/invitation#token=${token}`;
      let emailSent = false;
      const emailConfigured = await deps.mailer.configured(p.orgId);
      if (emailConfigured) {
        const org = await deps.orgs.getOrg(p.orgId);
        const inviter = await store.getMember(pool, p.orgId, p.identityId);
        try {
          await deps.mailer.send(p.orgId, { to: email, orgName: org.name, invitedBy: inviter?.name ?? 'An admin', role: input.role, link, expiresAt: row.expires_at });
          emailSent = true;
        } catch (err) {
          deps.logger.warn({ invitation_id: row.id, err: (err as Error).message }, 'could not send the invitation email');
        }
      }
      return { invitation: publicInvitation(row), link, token, email_sent: emailSent, email_configured: emailConfigured };
    },

    async listInvitations(p: Principal) {
      assertAdmin(p, 'see invitations');
      return (await store.listInvitations(pool, p.orgId)).map(publicInvitation);
    },

    async revokeInvitation(p: Principal, id: string) {
      assertAdmin(p, 'revoke invitations');
      const i = await store.getInvitation(pool, p.orgId, id);
      if (!i) throw notFound('invitation');
      const revokedAt = await store.revokeInvitation(pool, id);
      if (!revokedAt) throw new AppError('invitation_unusable', `the invitation is already ${invitationState(i)}`, { reason: invitationState(i) });
      await audit(p.orgId, 'invitation.revoked', null, p.identityId, { invitation_id: i.id, email: i.email });
      return publicInvitation({ ...i, revoked_at: revokedAt });
    },

    /** What the accept page shows before the person chooses a password (no session needed). */
    async lookup(token: string) {
      const i = await openByToken(token);
      const passwordJoin = deps.passwordSigninAllowed ? await deps.passwordSigninAllowed(i.org_id) : true;
      return { email: i.email, role: i.role, org_id: i.org_id, org_name: i.org_name, expires_at: i.expires_at.toISOString(), password_join: passwordJoin };
    },

    /** An open invitation by id (an SSO sign-in started from an invitation link), or the refusal. */
    async openInvitation(token: string) {
      const i = await openByToken(token);
      return { id: i.id, orgId: i.org_id, email: i.email };
    },

    /**
     * Joins the org through SSO: with the invitation the sign-in started from (its email must be
     * the one the provider vouches for), or just in time as a `member` when the org allows it.
     * Such a person has no password (an unusable hash: password sign-in never matches it).
     */
    async joinWithSso(j: { orgId: string; email: string; name: string; invitationId: string | null; jit: boolean }): Promise<string> {
      return pool.transaction(async (tx) => {
        if (await store.userByEmail(tx, j.email)) throw conflict(`${j.email} already has an account`);
        const invitation = j.invitationId ? await store.getInvitation(tx, j.orgId, j.invitationId) : await store.openInvitationFor(tx, j.orgId, j.email);
        const usable = invitation && invitationState(invitation) === 'open' && invitation.email.toLowerCase() === j.email.toLowerCase() ? invitation : null;
        // Just in time only for a domain this org has claimed: no org takes in another's people.
        const jit = j.jit && (await store.ownsDomain(tx, j.orgId, j.email.split('@')[1] ?? ''));
        if (!usable && !jit) throw new AppError('forbidden', `${j.email} has no invitation to this org: ask an admin to invite you`);
        const userId = await store.createInvitedUser(tx, {
          orgId: j.orgId,
          name: j.name,
          email: j.email,
          role: usable?.role ?? 'member',
          approverId: usable?.approver_id ?? null,
          passwordHash: SSO_ONLY_PASSWORD,
          createdBy: usable?.created_by ?? (await store.firstAdmin(tx, j.orgId)),
        });
        if (usable && !(await store.claimInvitation(tx, usable.id, userId))) {
          throw new AppError('invitation_unusable', 'this invitation has just been used or is no longer valid', { reason: 'accepted' });
        }
        await appendAudit(tx, {
          orgId: j.orgId,
          event: 'member.joined',
          userId,
          actorId: userId,
          identityChain: [userId],
          details: { via: 'sso', ...(usable ? { invitation_id: usable.id, role: usable.role } : { just_in_time: true, role: 'member' }) },
        });
        return userId;
      });
    },

    /**
     * Joins the org with a password: takes the invitation (single use, even against a concurrent
     * accept), creates the person with the invited role and approver, and signs them in.
     */
    async acceptWithPassword(token: string, input: { name: string; password: string }) {
      const problem = newPasswordProblem(input.password);
      if (problem) throw invalidRequest(problem, { field: 'password' });
      const i = await openByToken(token);
      if (deps.passwordSigninAllowed && !(await deps.passwordSigninAllowed(i.org_id))) {
        throw forbidden('this organisation signs in with single sign-on only: join with its "Join with …" button');
      }
      const passwordHash = await hashPassword(input.password);
      const session = newToken(SESSION_PREFIX);
      const joined = await pool.transaction(async (tx) => {
        if (await store.userByEmail(tx, i.email)) throw conflict(`${i.email} already has an account`);
        const userId = await store.createInvitedUser(tx, {
          orgId: i.org_id,
          name: input.name,
          email: i.email,
          role: i.role,
          approverId: i.approver_id,
          passwordHash,
          createdBy: i.created_by,
        });
        if (!(await store.claimInvitation(tx, i.id, userId))) {
          throw new AppError('invitation_unusable', 'this invitation has just been used or is no longer valid', { reason: 'accepted' });
        }
        const s = await createSession(tx, userId, hashToken(session), SESSION_TTL_SECONDS);
        await appendAudit(tx, { orgId: i.org_id, event: 'member.joined', userId, actorId: userId, identityChain: [userId], details: { via: 'password', invitation_id: i.id, role: i.role } });
        return { userId, expiresAt: s.expires_at };
      });
      return { token: session, expiresAt: joined.expiresAt, member: publicMember((await store.getMember(pool, i.org_id, joined.userId))!), landing: LANDING_PATH };
    },
  };
}

export type TeamService = ReturnType<typeof createTeamService>;
