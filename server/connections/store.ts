// SQL for OAuth apps and connections. No authorization and no crypto here: the service decides
// who may do what and seals every token before it reaches this module.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { envelopeSchema } from '../vault/envelope-schema.ts';
import type { Envelope } from '../../core/vault/envelope.ts';

type Db = CommonQueryMethods;

const envelope = envelopeSchema satisfies z.ZodType<Envelope>;

export const authMethod = z.enum(['client_secret_basic', 'client_secret_post', 'none']);

export const oauthAppRow = z.object({
  id: z.string(),
  org_id: z.string(),
  provider: z.string(),
  client_id: z.string(),
  client_secret_id: z.string().nullable(),
  token_endpoint_auth_method: authMethod,
  authorization_url: z.string(),
  token_url: z.string(),
  revocation_url: z.string().nullable(),
  userinfo_url: z.string().nullable(),
  use_pkce: z.boolean(),
  /** RFC 8707 resource indicator sent with every authorization and token request (MCP upstreams). */
  resource: z.string().nullable(),
  created_by: z.string().nullable(),
  updated_by: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type OAuthAppRow = z.infer<typeof oauthAppRow>;

const APP_COLUMNS = sql.fragment`
  id, org_id, provider, client_id, client_secret_id, token_endpoint_auth_method, authorization_url,
  token_url, revocation_url, userinfo_url, use_pkce, resource, created_by, updated_by, created_at, updated_at`;

export const connectionStatus = z.enum(['pending', 'active', 'reauth_required', 'revoked']);
export type ConnectionStatus = z.infer<typeof connectionStatus>;

/** Everything but the state hash; envelopes stay sealed until the service opens one. */
export const connectionRow = z.object({
  id: z.string(),
  org_id: z.string(),
  owner_id: z.string(),
  name: z.string(),
  provider: z.string(),
  template: z.string().nullable(),
  status: connectionStatus,
  requested_scopes: z.array(z.string()),
  granted_scopes: z.array(z.string()),
  account_id: z.string().nullable(),
  account_name: z.string().nullable(),
  access_token: envelope.nullable(),
  refresh_token: envelope.nullable(),
  token_expires_at: z.date().nullable(),
  token_issued_at: z.date().nullable(),
  pkce_verifier: envelope.nullable(),
  state_expires_at: z.date().nullable(),
  redirect_after: z.string().nullable(),
  refresh_count: z.number(),
  last_refreshed_at: z.date().nullable(),
  last_error: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type ConnectionRow = z.infer<typeof connectionRow>;

const CONNECTION_COLUMNS = sql.fragment`
  id, org_id, owner_id, name, provider, template, status, requested_scopes, granted_scopes,
  account_id, account_name, access_token, refresh_token, token_expires_at, token_issued_at,
  pkce_verifier, state_expires_at, redirect_after, refresh_count, last_refreshed_at, last_error,
  created_at, updated_at`;

const json = (e: Envelope | null) => (e === null ? null : sql.jsonb(e as unknown as Parameters<typeof sql.jsonb>[0]));
const ts = (d: Date | null) => (d === null ? null : sql.timestamp(d));

// OAuth apps -----------------------------------------------------------------------------------

export interface UpsertOAuthApp {
  orgId: string;
  provider: string;
  clientId: string;
  /** Undefined keeps the stored reference (an update without a new secret). */
  clientSecretId: string | null | undefined;
  authMethod: z.infer<typeof authMethod>;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string | null;
  userinfoUrl: string | null;
  usePkce: boolean;
  /** Undefined keeps the stored one. */
  resource?: string | null | undefined;
  by: string;
}

export async function upsertOAuthApp(db: Db, a: UpsertOAuthApp): Promise<{ app: OAuthAppRow; created: boolean }> {
  const keepSecret = a.clientSecretId === undefined;
  const row = await db.one(sql.type(oauthAppRow.extend({ created: z.boolean() }))`
    INSERT INTO oauth_apps (org_id, provider, client_id, client_secret_id, token_endpoint_auth_method, authorization_url,
                            token_url, revocation_url, userinfo_url, use_pkce, resource, created_by, updated_by)
    VALUES (${a.orgId}, ${a.provider}, ${a.clientId}, ${a.clientSecretId ?? null}, ${a.authMethod}, ${a.authorizationUrl},
            ${a.tokenUrl}, ${a.revocationUrl}, ${a.userinfoUrl}, ${a.usePkce}, ${a.resource ?? null}, ${a.by}, ${a.by})
    ON CONFLICT (org_id, provider) DO UPDATE SET
      client_id = EXCLUDED.client_id,
      client_secret_id = ${keepSecret ? sql.fragment`oauth_apps.client_secret_id` : sql.fragment`EXCLUDED.client_secret_id`},
      token_endpoint_auth_method = EXCLUDED.token_endpoint_auth_method,
      authorization_url = EXCLUDED.authorization_url,
      token_url = EXCLUDED.token_url,
      revocation_url = EXCLUDED.revocation_url,
      userinfo_url = EXCLUDED.userinfo_url,
      use_pkce = EXCLUDED.use_pkce,
      resource = ${a.resource === undefined ? sql.fragment`oauth_apps.resource` : sql.fragment`EXCLUDED.resource`},
      updated_by = EXCLUDED.updated_by,
      updated_at = now()
    RETURNING ${APP_COLUMNS}, (xmax = 0) AS created`);
  const { created, ...app } = row;
  return { app, created };
}

export const getOAuthApp = (db: Db, orgId: string, provider: string) =>
  db.maybeOne(sql.type(oauthAppRow)`SELECT ${APP_COLUMNS} FROM oauth_apps WHERE org_id = ${orgId} AND provider = ${provider}`);

export const listOAuthApps = (db: Db, orgId: string) =>
  db.any(sql.type(oauthAppRow)`SELECT ${APP_COLUMNS} FROM oauth_apps WHERE org_id = ${orgId} ORDER BY provider`);

// Connections ----------------------------------------------------------------------------------

export interface InsertConnection {
  id: string;
  orgId: string;
  ownerId: string;
  name: string;
  provider: string;
  template: string | null;
  requestedScopes: readonly string[];
  stateHash: Buffer;
  pending: Envelope;
  stateExpiresAt: Date;
  redirectAfter: string | null;
}

/** Null when the name is taken by a live connection of the org. */
export const insertConnection = (db: Db, c: InsertConnection) =>
  db.maybeOne(sql.type(connectionRow)`
    INSERT INTO connections (id, org_id, owner_id, name, provider, template, status, requested_scopes,
                             state_hash, pkce_verifier, state_expires_at, redirect_after)
    VALUES (${c.id}, ${c.orgId}, ${c.ownerId}, ${c.name}, ${c.provider}, ${c.template}, 'pending',
            ${sql.array([...c.requestedScopes], 'text')}, ${sql.binary(c.stateHash)}, ${json(c.pending)},
            ${sql.timestamp(c.stateExpiresAt)}, ${c.redirectAfter})
    ON CONFLICT (org_id, name) WHERE status <> 'revoked' DO NOTHING
    RETURNING ${CONNECTION_COLUMNS}`);

/** Live names of the org starting with `prefix`, to pick a free default name. */
export const namesLike = (db: Db, orgId: string, prefix: string) =>
  db.anyFirst(sql.type(z.object({ name: z.string() }))`
    SELECT name FROM connections WHERE org_id = ${orgId} AND status <> 'revoked' AND starts_with(name, ${prefix})`);

export const getConnection = (db: Db, id: string) =>
  db.maybeOne(sql.type(connectionRow)`SELECT ${CONNECTION_COLUMNS} FROM connections WHERE id = ${id}`);

/** The live connection of that name (revoked ones free their name). */
export const getConnectionByName = (db: Db, orgId: string, name: string) =>
  db.maybeOne(sql.type(connectionRow)`
    SELECT ${CONNECTION_COLUMNS} FROM connections WHERE org_id = ${orgId} AND name = ${name} AND status <> 'revoked'`);

/** Row lock: waits for any refresh in flight on this connection, in any process. */
export const lockConnection = (db: Db, id: string) =>
  db.maybeOne(sql.type(connectionRow)`SELECT ${CONNECTION_COLUMNS} FROM connections WHERE id = ${id} FOR UPDATE`);

export const listConnections = (db: Db, orgId: string, ownerId: string | null) =>
  db.any(sql.type(connectionRow)`
    SELECT ${CONNECTION_COLUMNS} FROM connections
    WHERE org_id = ${orgId} ${ownerId === null ? sql.fragment`` : sql.fragment`AND owner_id = ${ownerId}`}
    ORDER BY created_at, id`);

/**
 * Consumes a pending authorization atomically: whoever presents the state first gets the row as it
 * was (with its sealed verifier); the state is cleared in the same statement, so a replay finds nothing.
 */
export const takeState = (db: Db, stateHash: Buffer) =>
  db.maybeOne(sql.type(connectionRow)`
    WITH taken AS (
      SELECT ${CONNECTION_COLUMNS} FROM connections WHERE state_hash = ${sql.binary(stateHash)} FOR UPDATE
    ), cleared AS (
      UPDATE connections c
      SET state_hash = NULL, pkce_verifier = NULL, state_expires_at = NULL, updated_at = now()
      FROM taken WHERE c.id = taken.id
    )
    SELECT * FROM taken`);

export async function setAuthorization(db: Db, id: string, a: { stateHash: Buffer; pending: Envelope; expiresAt: Date }): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE connections
    SET state_hash = ${sql.binary(a.stateHash)}, pkce_verifier = ${json(a.pending)}, state_expires_at = ${sql.timestamp(a.expiresAt)},
        updated_at = now()
    WHERE id = ${id}`);
}

/** A scope upgrade asks the provider for more: the next authorization requests these. */
export async function setRequestedScopes(db: Db, id: string, scopes: readonly string[]): Promise<void> {
  await db.query(sql.unsafe`UPDATE connections SET requested_scopes = ${sql.array(scopes, 'text')}, updated_at = now() WHERE id = ${id}`);
}

/** Where the callback sends the browser after the next authorization (a same-origin URL). */
export async function setRedirectAfter(db: Db, id: string, redirectAfter: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE connections SET redirect_after = ${redirectAfter}, updated_at = now() WHERE id = ${id}`);
}

export interface StoreTokens {
  accessToken: Envelope;
  /** Undefined keeps the stored refresh token (the provider did not rotate it). */
  refreshToken: Envelope | null | undefined;
  expiresAt: Date | null;
  grantedScopes: readonly string[];
  account?: { id: string | null; name: string | null } | undefined;
  /** A refresh (counts) rather than the first tokens of an authorization. */
  refreshed: boolean;
}

export const storeTokens = (db: Db, id: string, t: StoreTokens) =>
  db.maybeOne(sql.type(connectionRow)`
    UPDATE connections SET
      status = 'active',
      access_token = ${json(t.accessToken)},
      refresh_token = ${t.refreshToken === undefined ? sql.fragment`refresh_token` : json(t.refreshToken)},
      token_expires_at = ${ts(t.expiresAt)},
      token_issued_at = now(),
      granted_scopes = ${sql.array([...t.grantedScopes], 'text')},
      ${t.account ? sql.fragment`account_id = ${t.account.id}, account_name = ${t.account.name},` : sql.fragment``}
      ${t.refreshed ? sql.fragment`refresh_count = refresh_count + 1, last_refreshed_at = now(),` : sql.fragment``}
      last_error = NULL,
      updated_at = now()
    WHERE id = ${id} AND status <> 'revoked'
    RETURNING ${CONNECTION_COLUMNS}`);

export async function setLastError(db: Db, id: string, error: string, status?: 'reauth_required'): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE connections SET last_error = ${error.slice(0, 500)},
      ${status ? sql.fragment`status = ${status},` : sql.fragment``}
      updated_at = now()
    WHERE id = ${id} AND status <> 'revoked'`);
}

/** Revoked for good: every envelope and the pending authorization are wiped. */
export async function markRevoked(db: Db, id: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE connections SET status = 'revoked', access_token = NULL, refresh_token = NULL, pkce_verifier = NULL,
      state_hash = NULL, state_expires_at = NULL, token_expires_at = NULL, updated_at = now()
    WHERE id = ${id}`);
}
