// Data of the connections page over the typed client: connections (never a token), the OAuth
// apps per provider (the client secret is written, never read back) and the flows that send the
// browser to the provider and back to this page.
import { api, unwrap, type components, type paths } from '../client.ts';

export type Connection = components['schemas']['Connection'];
export type OAuthApp = components['schemas']['OAuthApp'];

/** An access token expiring within this window shows as "expiring" (tokens of an hour are common: not those). */
export const EXPIRING_WITHIN_MS = 15 * 60 * 1000;

export type ShownStatus = Connection['status'] | 'expiring' | 'expired';

/** The status a person reads: an active connection near (or past) its token expiry says so. */
export function shownStatus(c: Connection, now: number): ShownStatus {
  if (c.status !== 'active' || !c.token_expires_at) return c.status;
  const left = Date.parse(c.token_expires_at) - now;
  if (left <= 0) return 'expired';
  return left <= EXPIRING_WITHIN_MS ? 'expiring' : 'active';
}

export const listConnections = async () => (await unwrap(api.GET('/v1/connections'))).connections;
export const listOAuthApps = async () => (await unwrap(api.GET('/v1/oauth-apps'))).oauth_apps;

/** Where the provider's redirect lands the browser: back on this page, which reads the result. */
export const returnUrl = () => `${location.origin}/connections`;

export const startConnection = (body: { provider: string; name?: string; scopes?: string[] }) =>
  unwrap(api.POST('/v1/connections', { body: { ...body, redirect_after: returnUrl() } }));

/** Reconnect (no scopes) or add scopes: the auth_url to open. */
export const authorizeConnection = (id: string, scopes?: string[]) =>
  unwrap(api.POST('/v1/connections/{id}/authorize', { params: { path: { id } }, body: { ...(scopes ? { scopes } : {}), redirect_after: returnUrl() } }));

export const refreshConnection = (id: string) => unwrap(api.POST('/v1/connections/{id}/refresh', { params: { path: { id } } }));
export const deleteConnection = (id: string) => unwrap(api.DELETE('/v1/connections/{id}', { params: { path: { id } } }));

export type OAuthAppInput = NonNullable<paths['/v1/oauth-apps/{provider}']['put']['requestBody']>['content']['application/json'];

/** Writes the provider's app; a client secret given here is stored in the vault and never shown again. */
export const putOAuthApp = (provider: string, body: OAuthAppInput) =>
  unwrap(api.PUT('/v1/oauth-apps/{provider}', { params: { path: { provider } }, body }));

/** Space- or comma-separated scopes typed by a person. */
export const parseScopes = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];
