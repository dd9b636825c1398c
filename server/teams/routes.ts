// REST for the org's people (issue 29): members, roles, approvers, deactivation, invitations;
// and, before authentication, an invitation's lookup and acceptance (the link's token is the
// credential). Thin: the team service decides.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { sessionCookie } from '../auth/routes.ts';
import { SESSION_TTL_SECONDS } from '../auth/service.ts';
import { apiRouter } from '../http/api-router.ts';
import { nullableTimestamp, timestamp, uuid } from '../http/openapi/common.ts';
import { INVITATION_MAX_DAYS, type TeamService } from './service.ts';

const role = z.enum(['admin', 'member', 'approver']);
const params = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const invitationToken = z.string().min(10).max(200).describe('The `gwi_…` token of the invitation link (after `#token=`).');

export const Member = z
  .strictObject({
    id: uuid,
    name: z.string(),
    email: z.string(),
    role,
    approver_id: uuid.nullable().describe('Where "Bubble up" goes from this person; null: the org\'s admins.'),
    status: z.enum(['active', 'deactivated']),
    last_sign_in_at: nullableTimestamp,
    agent_count: z.int(),
    pending_approvals: z.int().describe('Open (pending or bubbled) approvals raised in this person\'s tree.'),
    created_at: timestamp,
    deactivated_at: nullableTimestamp,
  })
  .meta({ id: 'Member' });

export const Invitation = z
  .strictObject({
    id: uuid,
    email: z.string(),
    role,
    approver_id: uuid.nullable(),
    status: z.enum(['open', 'accepted', 'revoked', 'expired']),
    created_by: uuid,
    created_at: timestamp,
    expires_at: timestamp,
    accepted_at: nullableTimestamp,
    accepted_by: uuid.nullable(),
    revoked_at: nullableTimestamp,
  })
  .meta({ id: 'Invitation' });

const NewInvitation = z
  .strictObject({
    invitation: Invitation,
    link: z.string().describe('The single-use link. Shown once: only a hash of its token is stored.'),
    token: z.string().describe('The token inside the link (for `POST /v1/invitations/accept`).'),
    email_sent: z.boolean().describe('Whether the link was also sent by email.'),
    email_configured: z.boolean().describe('Whether this deployment sends invitation emails at all.'),
  })
  .meta({ id: 'NewInvitation' });

const inviteBody = z.strictObject({
  email: z.string().trim().min(3).max(320),
  role,
  approver_id: z.uuid().nullable().optional(),
  expires_in_days: z.int().min(1).max(INVITATION_MAX_DAYS).optional().describe('Default 7.'),
});

const memberPatch = z
  .strictObject({ role: role.optional(), approver_id: z.uuid().nullable().optional() })
  .refine((b) => Object.keys(b).length > 0, 'give role, approver_id or both');

const InvitationPreview = z
  .strictObject({
    email: z.string(),
    role,
    org_id: uuid,
    org_name: z.string(),
    expires_at: timestamp,
    password_join: z.boolean().describe('False when the org signs in with SSO only: join through its provider.'),
  })
  .meta({ id: 'InvitationPreview' });

const Joined = z
  .strictObject({
    token: z.string().describe('A `gws_…` session token (also set as the session cookie).'),
    token_type: z.literal('session'),
    expires_at: timestamp,
    member: Member,
    landing: z.string().describe('Where the dashboard goes next: the inbox.'),
  })
  .meta({ id: 'Joined' });

export function teamRoutes(teams: TeamService): Router {
  const r = apiRouter({ tags: ['People'] });
  r.route({ method: 'get', path: '/org/members', operationId: 'listMembers', summary: 'The org’s people with role, approver, last sign-in, agents and pending approvals', auth: 'human', responses: { 200: z.strictObject({ members: z.array(Member) }) }, errors: ['forbidden'] }, async (req, res) => {
    res.json({ members: await teams.list(principalOf(req)) });
  });
  r.route({ method: 'get', path: '/org/members/{id}', operationId: 'getMember', summary: 'One person of the org', auth: 'human', params, responses: { 200: Member }, errors: ['forbidden', 'not_found'] }, async (req, res, { params }) => {
    res.json(await teams.get(principalOf(req), params.id));
  });
  r.route({
    method: 'patch',
    path: '/org/members/{id}',
    operationId: 'updateMember',
    summary: 'Change a person’s role or approver (admins; the last admin stays an admin)',
    auth: 'human',
    params,
    body: memberPatch,
    responses: { 200: Member },
    errors: ['forbidden', 'not_found', 'conflict', 'last_admin'],
  }, async (req, res, { params, body }) => {
    res.json(await teams.update(principalOf(req), params.id, body));
  });
  r.route({
    method: 'post',
    path: '/org/members/{id}/deactivate',
    operationId: 'deactivateMember',
    summary: 'Deactivate a person: sessions, agents’ keys and tokens end, pending approvals are cancelled; nothing is deleted (admins)',
    auth: 'human',
    params,
    responses: { 200: Member },
    errors: ['forbidden', 'not_found', 'conflict', 'last_admin'],
  }, async (req, res, { params }) => {
    res.json(await teams.deactivate(principalOf(req), params.id));
  });
  r.route({ method: 'get', path: '/org/invitations', operationId: 'listInvitations', summary: 'Invitations of the org, newest first (admins)', auth: 'human', responses: { 200: z.strictObject({ invitations: z.array(Invitation) }) }, errors: ['forbidden'] }, async (req, res) => {
    res.json({ invitations: await teams.listInvitations(principalOf(req)) });
  });
  r.route({
    method: 'post',
    path: '/org/invitations',
    operationId: 'createInvitation',
    summary: 'Invite a person by email with a role: a single-use link, shown once (admins)',
    auth: 'human',
    body: inviteBody,
    responses: { 201: NewInvitation },
    errors: ['forbidden', 'conflict'],
  }, async (req, res, { body }) => {
    res.status(201).json(await teams.invite(principalOf(req), body));
  });
  r.route({
    method: 'post',
    path: '/org/invitations/{id}/revoke',
    operationId: 'revokeInvitation',
    summary: 'Revoke an open invitation (admins)',
    auth: 'human',
    params,
    responses: { 200: Invitation },
    errors: ['forbidden', 'not_found', 'invitation_unusable'],
  }, async (req, res, { params }) => {
    res.json(await teams.revokeInvitation(principalOf(req), params.id));
  });
  return r.router;
}

/** Before authentication: the link's token is the credential. */
export function invitationAcceptRoutes(teams: TeamService, publicUrl: string): Router {
  const r = apiRouter({ tags: ['People'] });
  r.route({
    method: 'post',
    path: '/invitations/lookup',
    operationId: 'lookupInvitation',
    summary: 'What an invitation link is for (org, email, role), before choosing a password',
    auth: 'none',
    body: z.strictObject({ token: invitationToken }),
    responses: { 200: InvitationPreview },
    errors: ['not_found', 'invitation_unusable'],
  }, async (_req, res, { body }) => {
    res.json(await teams.lookup(body.token));
  });
  r.route({
    method: 'post',
    path: '/invitations/accept',
    operationId: 'acceptInvitation',
    summary: 'Join the org with a password (at least 12 characters); signs the person in',
    auth: 'none',
    body: z.strictObject({ token: invitationToken, name: z.string().trim().min(1).max(200), password: z.string().max(1024) }),
    responses: { 200: Joined },
    errors: ['not_found', 'invitation_unusable', 'conflict', 'forbidden'],
  }, async (req, res, { body }) => {
    const joined = await teams.acceptWithPassword(body.token, { name: body.name, password: body.password });
    res.setHeader('Set-Cookie', sessionCookie(req, joined.token, SESSION_TTL_SECONDS, publicUrl));
    res.json({ token: joined.token, token_type: 'session', expires_at: joined.expiresAt.toISOString(), member: joined.member, landing: joined.landing });
  });
  return r.router;
}
