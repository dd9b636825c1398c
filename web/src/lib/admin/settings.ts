// Data of the settings page over the typed client: the org's approval clocks, the OAuth clients
// registered against the gateway, and the org's people.
import { listIdentities } from '../api.ts';
import { api, unwrap, type components } from '../client.ts';

export type OrgSettings = components['schemas']['OrgSettings'];
export type OAuthClient = components['schemas']['OAuthClient'];

export const getSettings = () => unwrap(api.GET('/v1/org/settings'));
export const updateSettings = (body: { approval_ttl_seconds?: number; approval_auto_bubble_seconds?: number | null; max_pending_per_agent?: number }) =>
  unwrap(api.PATCH('/v1/org/settings', { body }));
export const listClients = async () => (await unwrap(api.GET('/v1/oauth/clients'))).clients;
export const revokeClient = (clientId: string) => unwrap(api.POST('/v1/oauth/clients/{clientId}/revoke', { params: { path: { clientId } } }));
export const listMembers = () => listIdentities({ kind: 'user' });

/** Seconds shown as whole minutes (the form edits minutes). */
export const toMinutes = (s: number) => Math.round(s / 60);
