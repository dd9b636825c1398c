// Data of the People page (Settings → People) and the invitation page, over the typed client.
import { api, unwrap, type components } from '../client.ts';

export type Member = components['schemas']['Member'];
export type Invitation = components['schemas']['Invitation'];
export type NewInvitation = components['schemas']['NewInvitation'];
export type Role = Member['role'];

export const ROLES: { value: Role; label: string; about: string }[] = [
  { value: 'member', label: 'Member', about: 'their own agents; approves for them' },
  { value: 'approver', label: 'Approver', about: 'a member who also decides what people who name them bubble up' },
  { value: 'admin', label: 'Admin', about: 'everything in the org' },
];

export const listMembers = async () => (await unwrap(api.GET('/v1/org/members'))).members;
export const updateMember = (id: string, body: { role?: Role; approver_id?: string | null }) =>
  unwrap(api.PATCH('/v1/org/members/{id}', { params: { path: { id } }, body }));
export const deactivateMember = (id: string) => unwrap(api.POST('/v1/org/members/{id}/deactivate', { params: { path: { id } } }));
export const listInvitations = async () => (await unwrap(api.GET('/v1/org/invitations'))).invitations;
export const invite = (body: { email: string; role: Role; approver_id?: string | null }) => unwrap(api.POST('/v1/org/invitations', { body }));
export const revokeInvitation = (id: string) => unwrap(api.POST('/v1/org/invitations/{id}/revoke', { params: { path: { id } } }));

export const lookupInvitation = (token: string) => unwrap(api.POST('/v1/invitations/lookup', { body: { token } }));
export const acceptInvitation = (token: string, name: string, password: string) => unwrap(api.POST('/v1/invitations/accept', { body: { token, name, password } }));
export const ssoProviders = async () => (await unwrap(api.GET('/v1/auth/sso'))).providers;
export const startSso = (orgId: string, invitationToken?: string) =>
  unwrap(api.POST('/v1/auth/sso/start', { body: { org_id: orgId, ...(invitationToken ? { invitation_token: invitationToken } : {}) } }));

export type SsoConfig = components['schemas']['SsoConfig'];
/** The org's single sign-on, or null before an admin configured it. */
export const getSso = () =>
  unwrap(api.GET('/v1/org/sso')).catch((err: unknown) => {
    if ((err as { status?: number }).status === 404) return null;
    throw err;
  });
export const putSso = (body: { issuer: string; client_id: string; client_secret?: string; allowed_domains: string[]; jit: boolean; display_name: string; password_signin?: boolean }) =>
  unwrap(api.PUT('/v1/org/sso', { body }));
