// Response bodies of the connection routes: metadata only, never a token, verifier or state.
import { z } from 'zod';
import { nullableTimestamp, timestamp, uuid } from '../http/openapi/common.ts';

export const OAuthApp = z
  .strictObject({
    id: uuid,
    provider: z.string(),
    client_id: z.string(),
    token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post', 'none']),
    client_secret_id: uuid.nullable().describe('The vault secret holding the client secret; the value is never returned.'),
    authorization_url: z.string(),
    token_url: z.string(),
    revocation_url: z.string().nullable(),
    userinfo_url: z.string().nullable(),
    use_pkce: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'OAuthApp' });

export const Connection = z
  .strictObject({
    id: uuid,
    name: z.string(),
    provider: z.string(),
    template: z.string().nullable(),
    status: z.enum(['pending', 'active', 'reauth_required', 'revoked']),
    owner_id: uuid,
    requested_scopes: z.array(z.string()),
    granted_scopes: z.array(z.string()),
    account_id: z.string().nullable(),
    account_name: z.string().nullable(),
    token_expires_at: nullableTimestamp,
    refresh_count: z.int(),
    last_refreshed_at: nullableTimestamp,
    last_error: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Connection' });

export const OAuthAppList = z.strictObject({ oauth_apps: z.array(OAuthApp) });
export const OAuthAppResult = z.strictObject({ oauth_app: OAuthApp });
export const ConnectionList = z.strictObject({ connections: z.array(Connection) });
export const ConnectionResult = z.strictObject({ connection: Connection });
export const ConnectionWithAuthUrl = z.strictObject({
  connection: Connection,
  auth_url: z.string().describe('Open it in a browser to authorize the connection at the provider.'),
});
