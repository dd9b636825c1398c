// OAuth connections: per-org OAuth app credentials, the authorization-code flow that creates a
// connection, and fresh access tokens for the executor. Each method: authorize → load/validate →
// transaction. Tokens live only as vault envelopes bound (AAD) to their row and column; no method
// that serves the REST API returns, logs or otherwise echoes one.
//
// Who may do what: org admins configure OAuth apps; every person may start connections, which
// they own; owners and org admins see, refresh and revoke them; agents may read the metadata of
// their own human's connections and use them through the executor, but not create or manage them.
//
// Refresh is single-flight per connection under a PostgreSQL row lock (`SELECT … FOR UPDATE`):
// the first caller refreshes, concurrent callers — in this process or any other — wait on the
// lock, re-check, and take the fresh token. Rotated refresh tokens are therefore never replayed
// (a replay makes a rotating provider revoke the whole grant).
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { Envelope } from '../../core/vault/envelope.ts';
import { isAdmin, type Principal, type UserPrincipal } from '../auth/principal.ts';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import type { VaultService } from '../vault/service.ts';
import * as oauth from './oauth-client.ts';
import * as store from './store.ts';

/** A pending authorization (state + PKCE verifier) lives this long. */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
/** A pending authorization with less left than this is replaced rather than handed out again. */
const AUTHORIZATION_REUSE_MIN_MS = 60_000;
/** Refresh when the token expires within this margin (capped at half the token's lifetime). */
export const DEFAULT_REFRESH_MARGIN_SECONDS = 60;
export const CALLBACK_PATH = '/v1/connections/callback';

export interface PutOAuthAppInput {
  client_id: string;
  client_secret?: string | undefined;
  authorization_url: string;
  token_url: string;
  revocation_url?: string | null | undefined;
  userinfo_url?: string | null | undefined;
  use_pkce?: boolean | undefined;
  token_endpoint_auth_method?: oauth.ClientAuthMethod | undefined;
}

export interface CreateConnectionInput {
  provider: string;
  name?: string | undefined;
  scopes?: string[] | undefined;
  template?: string | undefined;
  redirect_after?: string | undefined;
}

export interface CallbackInput {
  state?: string | undefined;
  code?: string | undefined;
  error?: string | undefined;
  error_description?: string | undefined;
}

/** Which connection the executor means: an id, or a name within an org. */
export type ConnectionRef = string | { orgId: string; id: string } | { orgId: string; name: string };

export interface FreshAccessToken {
  accessToken: string;
  grantedScopes: string[];
  connectionId: string;
  /** Null when the provider did not say. */
  expiresAt: Date | null;
}

export interface ConnectionServiceDeps {
  pool: DatabasePool;
  keyring: VaultKeyring;
  /** The OAuth app client secret lives in the vault as `oauth_app.<provider>.client_secret`. */
  vault: Pick<VaultService, 'put' | 'resolveSecretValue'>;
  /** The gateway's public base URL: the provider redirects the browser to `${publicUrl}/v1/connections/callback`. */
  publicUrl: string;
  logger: Logger;
  refreshMarginSeconds?: number;
  /** Timeouts and fetch for the provider requests (tests). */
  oauthRequest?: oauth.RequestOptions;
}

export const clientSecretName = (provider: string) => `oauth_app.${provider}.client_secret`;

const aad = (connectionId: string, column: 'access_token' | 'refresh_token' | 'pkce_verifier') => `connection:${connectionId}:${column}`;
const hashState = (state: string) => createHash('sha256').update(state, 'utf8').digest();
const STATE_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function publicOAuthApp(a: store.OAuthAppRow) {
  return {
    id: a.id,
    provider: a.provider,
    client_id: a.client_id,
    token_endpoint_auth_method: a.token_endpoint_auth_method,
    // A reference to the vault secret holding it; the value is never returned.
    client_secret_id: a.client_secret_id,
    authorization_url: a.authorization_url,
    token_url: a.token_url,
    revocation_url: a.revocation_url,
    userinfo_url: a.userinfo_url,
    use_pkce: a.use_pkce,
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
  };
}

/** Metadata only: never a token, a verifier or a state. */
export function publicConnection(c: store.ConnectionRow) {
  return {
    id: c.id,
    name: c.name,
    provider: c.provider,
    template: c.template,
    status: c.status,
    owner_id: c.owner_id,
    requested_scopes: c.requested_scopes,
    granted_scopes: c.granted_scopes,
    account_id: c.account_id,
    account_name: c.account_name,
    token_expires_at: c.token_expires_at?.toISOString() ?? null,
    refresh_count: c.refresh_count,
    last_refreshed_at: c.last_refreshed_at?.toISOString() ?? null,
    last_error: c.last_error,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
  };
}

export type PublicConnection = ReturnType<typeof publicConnection>;

interface PendingAuthorization {
  state: string;
  verifier: string | null;
}

type RefreshOutcome =
  | { kind: 'fresh' | 'refreshed'; row: store.ConnectionRow }
  | { kind: 'not_active'; row: store.ConnectionRow }
  | { kind: 'reauth'; row: store.ConnectionRow; message: string }
  | { kind: 'upstream'; row: store.ConnectionRow; error: oauth.OAuthError }
  | { kind: 'no_refresh_token'; row: store.ConnectionRow }
  | { kind: 'missing' };

export function createConnectionService(deps: ConnectionServiceDeps) {
  const { pool, keyring, vault, logger } = deps;
  const publicUrl = deps.publicUrl.replace(/\/+$/, '');
  const redirectUri = publicUrl + CALLBACK_PATH;
  const marginMs = (deps.refreshMarginSeconds ?? DEFAULT_REFRESH_MARGIN_SECONDS) * 1000;
  const requestOpts = deps.oauthRequest ?? {};

  // --- crypto helpers -------------------------------------------------------------------------

  const seal = (connectionId: string, column: Parameters<typeof aad>[1], value: string): Envelope =>
    keyring.encrypt(value, aad(connectionId, column));

  function open(connectionId: string, column: Parameters<typeof aad>[1], envelope: Envelope): string {
    const plaintext = keyring.decrypt(envelope, aad(connectionId, column));
    try {
      return plaintext.toString('utf8');
    } finally {
      plaintext.fill(0);
    }
  }

  function openPending(row: store.ConnectionRow): PendingAuthorization | null {
    if (!row.pkce_verifier) return null;
    const parsed = JSON.parse(open(row.id, 'pkce_verifier', row.pkce_verifier)) as Partial<PendingAuthorization>;
    if (typeof parsed.state !== 'string') return null;
    return { state: parsed.state, verifier: typeof parsed.verifier === 'string' ? parsed.verifier : null };
  }

  function newAuthorization(connectionId: string, usePkce: boolean) {
    const pending: PendingAuthorization = { state: oauth.randomToken(), verifier: usePkce ? oauth.randomToken() : null };
    return {
      pending,
      stateHash: hashState(pending.state),
      envelope: seal(connectionId, 'pkce_verifier', JSON.stringify(pending)),
      expiresAt: new Date(Date.now() + AUTHORIZATION_TTL_MS),
    };
  }

  function authUrl(app: store.OAuthAppRow, row: Pick<store.ConnectionRow, 'requested_scopes'>, pending: PendingAuthorization): string {
    return oauth.buildAuthorizationUrl(
      { clientId: app.client_id, authorizationUrl: app.authorization_url },
      { redirectUri, scopes: row.requested_scopes, state: pending.state, codeVerifier: pending.verifier },
    );
  }

  // --- OAuth apps -----------------------------------------------------------------------------

  async function requireApp(orgId: string, provider: string): Promise<store.OAuthAppRow> {
    const app = await store.getOAuthApp(pool, orgId, provider);
    if (!app) {
      throw new AppError('credential_missing', `no OAuth app is configured for provider "${provider}"; an org admin sets one with PUT /v1/oauth-apps/${provider}`, { provider });
    }
    return app;
  }

  /** The client configuration with its secret out of the vault. Read before any row lock is taken. */
  async function clientConfig(app: store.OAuthAppRow): Promise<oauth.OAuthClientConfig> {
    let clientSecret: string | null = null;
    if (app.token_endpoint_auth_method !== 'none') {
      clientSecret = await vault.resolveSecretValue(app.org_id, clientSecretName(app.provider));
      if (clientSecret === null) {
        throw new AppError('credential_missing', `the client secret of the OAuth app "${app.provider}" is missing from the vault (${clientSecretName(app.provider)})`, {
          provider: app.provider,
        });
      }
    }
    return {
      clientId: app.client_id,
      clientSecret,
      authMethod: app.token_endpoint_auth_method,
      authorizationUrl: app.authorization_url,
      tokenUrl: app.token_url,
      revocationUrl: app.revocation_url,
      userinfoUrl: app.userinfo_url,
    };
  }

  // --- visibility -----------------------------------------------------------------------------

  /** The connection if the principal may see it; 404 otherwise, so ids of others never leak. */
  async function loadVisible(p: Principal, id: string): Promise<store.ConnectionRow> {
    const row = await store.getConnection(pool, id);
    if (!row || row.org_id !== p.orgId) throw notFound('connection');
    if (isAdmin(p) || row.owner_id === p.userId) return row;
    throw notFound('connection');
  }

  function requirePerson(p: Principal, what: string): UserPrincipal {
    if (p.type !== 'user') throw forbidden(`agents cannot ${what}; a person signed in to the dashboard must`);
    return p;
  }

  // --- authorization (state + PKCE) -----------------------------------------------------------

  /**
   * An authorization URL for a pending or reauth_required connection: the current one while it has
   * time left (so a link the user already opened stays valid), else a fresh state and verifier.
   */
  async function ensureAuthorization(connectionId: string, scopes?: readonly string[]): Promise<string | null> {
    return pool.transaction(async (tx) => {
      let row = await store.lockConnection(tx, connectionId);
      if (!row || row.status === 'revoked') return null;
      const app = await store.getOAuthApp(tx, row.org_id, row.provider);
      if (!app) return null;
      const widen = scopes !== undefined && scopes.some((s) => !row!.requested_scopes.includes(s));
      if (widen) {
        // Ask for what the connection holds plus what is missing; the open link (if any) is replaced.
        const union = [...new Set([...row.requested_scopes, ...row.granted_scopes, ...scopes])];
        await store.setRequestedScopes(tx, row.id, union);
        row = { ...row, requested_scopes: union };
      } else if (row.state_expires_at && row.state_expires_at.getTime() - Date.now() > AUTHORIZATION_REUSE_MIN_MS) {
        const pending = openPending(row);
        if (pending) return authUrl(app, row, pending);
      }
      const auth = newAuthorization(row.id, app.use_pkce);
      await store.setAuthorization(tx, row.id, { stateHash: auth.stateHash, pending: auth.envelope, expiresAt: auth.expiresAt });
      return authUrl(app, row, auth.pending);
    });
  }

  async function needsAuthentication(row: store.ConnectionRow): Promise<AppError> {
    const url = await ensureAuthorization(row.id);
    return new AppError('needs_authentication', `connection "${row.name}" is not authorized yet: open auth_url to connect ${row.provider}`, {
      connection_id: row.id,
      provider: row.provider,
      ...(url ? { auth_url: url } : {}),
    });
  }

  async function reauthRequired(row: store.ConnectionRow, reason: string | null): Promise<AppError> {
    const url = await ensureAuthorization(row.id).catch(() => null);
    return new AppError('reauth_required', `connection "${row.name}" must be authorized again${reason ? ` (${reason})` : ''}: open auth_url`, {
      connection_id: row.id,
      provider: row.provider,
      ...(url ? { auth_url: url } : {}),
    });
  }

  /** Same-origin targets only, so the callback can never be turned into an open redirect. */
  function validateRedirectAfter(value: string): string {
    const bad = () => invalidRequest(`redirect_after must be a path or a URL on ${publicUrl}`, { field: 'redirect_after' });
    if (value.startsWith('//') || value.includes('\\')) throw bad();
    let url: URL;
    try {
      url = new URL(value, publicUrl + '/');
    } catch {
      throw bad();
    }
    if (url.origin !== new URL(publicUrl).origin) throw bad();
    return url.toString();
  }

  async function defaultName(orgId: string, provider: string): Promise<string> {
    const taken = new Set(await store.namesLike(pool, orgId, provider));
    if (!taken.has(provider)) return provider;
    for (let n = 2; ; n++) if (!taken.has(`${provider}-${n}`)) return `${provider}-${n}`;
  }

  async function startConnection(orgId: string, ownerId: string, input: CreateConnectionInput) {
    const app = await store.getOAuthApp(pool, orgId, input.provider);
    if (!app) throw invalidRequest(`no OAuth app is configured for provider "${input.provider}"`, { field: 'provider' });
    const redirectAfter = input.redirect_after === undefined ? null : validateRedirectAfter(input.redirect_after);
    const scopes = [...new Set(input.scopes ?? [])];
    const id = randomUUID();
    const auth = newAuthorization(id, app.use_pkce);
    const name = input.name ?? (await defaultName(orgId, input.provider));
    const row = await store.insertConnection(pool, {
      id,
      orgId,
      ownerId,
      name,
      provider: input.provider,
      template: input.template ?? null,
      requestedScopes: scopes,
      stateHash: auth.stateHash,
      pending: auth.envelope,
      stateExpiresAt: auth.expiresAt,
      redirectAfter,
    });
    if (!row) throw conflict(`a connection named "${name}" already exists`, { field: 'name' });
    return { connection: publicConnection(row), auth_url: authUrl(app, row, auth.pending) };
  }

  // --- tokens ---------------------------------------------------------------------------------

  const isExpired = (row: store.ConnectionRow, now = Date.now()) => row.token_expires_at !== null && row.token_expires_at.getTime() <= now;

  /** Expiring within the margin (at most half the token's lifetime), or of unknown expiry with a refresh token. */
  function needsRefresh(row: store.ConnectionRow, now = Date.now()): boolean {
    if (row.token_expires_at === null) return row.refresh_token !== null;
    const expires = row.token_expires_at.getTime();
    const lifetime = row.token_issued_at ? expires - row.token_issued_at.getTime() : Number.POSITIVE_INFINITY;
    return expires - now <= Math.min(marginMs, Math.max(0, lifetime) / 2);
  }

  function tokenOf(row: store.ConnectionRow): FreshAccessToken {
    if (!row.access_token) throw new AppError('credential_missing', `connection "${row.name}" holds no access token`, { connection_id: row.id });
    return {
      accessToken: open(row.id, 'access_token', row.access_token),
      grantedScopes: [...row.granted_scopes],
      connectionId: row.id,
      expiresAt: row.token_expires_at,
    };
  }

  const expiryOf = (t: oauth.TokenSet) => (t.expiresIn === null ? null : new Date(Date.now() + t.expiresIn * 1000));

  /**
   * The refresh itself, under the row lock. Without `force`, a token that is fresh by the time the
   * lock is ours — typically because the caller we waited for just refreshed it — is used as is.
   */
  async function refreshUnderLock(row: store.ConnectionRow, force: boolean): Promise<RefreshOutcome> {
    // Everything that needs the pool is read before the lock: a lock holder waiting for a pool
    // connection held by a lock waiter would deadlock.
    const cfg = await clientConfig(await requireApp(row.org_id, row.provider));
    const seenRefreshCount = row.refresh_count;
    return pool.transaction(async (tx): Promise<RefreshOutcome> => {
      const cur = await store.lockConnection(tx, row.id);
      if (!cur) return { kind: 'missing' };
      if (cur.status !== 'active') return { kind: 'not_active', row: cur };
      if (!force && (!needsRefresh(cur) || (cur.refresh_count !== seenRefreshCount && !isExpired(cur)))) {
        return { kind: 'fresh', row: cur };
      }
      if (!cur.refresh_token) {
        if (!isExpired(cur)) return force ? { kind: 'no_refresh_token', row: cur } : { kind: 'fresh', row: cur };
        const message = 'the access token expired and the provider issued no refresh token';
        await store.setLastError(tx, cur.id, message, 'reauth_required');
        return { kind: 'reauth', row: cur, message };
      }
      let tokens: oauth.TokenSet;
      try {
        tokens = await oauth.refreshTokens(cfg, open(cur.id, 'refresh_token', cur.refresh_token), requestOpts);
      } catch (err) {
        if (!(err instanceof oauth.OAuthError)) throw err;
        if (oauth.isInvalidGrant(err)) {
          const message = `the provider refused the refresh token (${err.message})`;
          await store.setLastError(tx, cur.id, message, 'reauth_required');
          return { kind: 'reauth', row: cur, message };
        }
        await store.setLastError(tx, cur.id, `refresh failed: ${err.message}`);
        return { kind: 'upstream', row: cur, error: err };
      }
      const stored = await store.storeTokens(tx, cur.id, {
        accessToken: seal(cur.id, 'access_token', tokens.accessToken),
        // A provider that does not rotate keeps the refresh token we already hold.
        refreshToken: tokens.refreshToken === null ? undefined : seal(cur.id, 'refresh_token', tokens.refreshToken),
        expiresAt: expiryOf(tokens),
        grantedScopes: tokens.scope ?? cur.granted_scopes,
        refreshed: true,
      });
      if (!stored) return { kind: 'missing' };
      logger.info({ connection_id: cur.id, provider: cur.provider, refresh_count: stored.refresh_count }, 'connection token refreshed');
      return { kind: 'refreshed', row: stored };
    });
  }

  async function notUsable(row: store.ConnectionRow): Promise<AppError> {
    switch (row.status) {
      case 'pending':
        return needsAuthentication(row);
      case 'reauth_required':
        return reauthRequired(row, row.last_error);
      default:
        return new AppError('credential_missing', `connection "${row.name}" was revoked`, { connection_id: row.id });
    }
  }

  async function loadRef(ref: ConnectionRef): Promise<store.ConnectionRow> {
    let row: store.ConnectionRow | null = null;
    if (typeof ref === 'string' || 'id' in ref) {
      const id = typeof ref === 'string' ? ref : ref.id;
      if (UUID.test(id)) row = await store.getConnection(pool, id);
    } else {
      row = await store.getConnectionByName(pool, ref.orgId, ref.name);
    }
    if (!row || (typeof ref !== 'string' && row.org_id !== ref.orgId)) {
      const what = typeof ref === 'string' ? ref : 'id' in ref ? ref.id : ref.name;
      throw new AppError('credential_missing', `no connection "${what}"`, { connection: what });
    }
    return row;
  }

  /** A connection the caller may reference by id or name, with what binds its token to hosts. */
  async function refOf(p: Principal, ref: string): Promise<{ id: string; name: string; provider: string; ownerId: string }> {
    const found = (await store.listConnections(pool, p.orgId, isAdmin(p) ? null : p.userId)).find((c) => c.id === ref || c.name === ref);
    if (!found) throw notFound(`connection "${ref}"`);
    return { id: found.id, name: found.name, provider: found.provider, ownerId: found.owner_id };
  }

  return {
    loadVisible,

    // OAuth apps -------------------------------------------------------------------------------

    async putOAuthApp(p: Principal, provider: string, input: PutOAuthAppInput) {
      const person = requirePerson(p, 'configure OAuth apps');
      if (person.role !== 'admin') throw forbidden('only org admins may configure OAuth apps');
      const method = input.token_endpoint_auth_method ?? 'client_secret_basic';
      const existing = await store.getOAuthApp(pool, p.orgId, provider);
      let clientSecretId: string | null | undefined;
      if (method === 'none') {
        if (input.client_secret !== undefined) throw invalidRequest('a public client (token_endpoint_auth_method "none") has no client_secret', { field: 'client_secret' });
        clientSecretId = null;
      } else if (input.client_secret !== undefined) {
        const put = await vault.put(person, {
          name: clientSecretName(provider),
          value: input.client_secret,
          description: `OAuth client secret of the ${provider} app`,
        });
        clientSecretId = put.secret.id;
      } else if (existing?.client_secret_id) {
        clientSecretId = undefined; // keep the stored one
      } else {
        throw invalidRequest('client_secret is required', { field: 'client_secret' });
      }
      const { app, created } = await store.upsertOAuthApp(pool, {
        orgId: p.orgId,
        provider,
        clientId: input.client_id,
        clientSecretId,
        authMethod: method,
        authorizationUrl: input.authorization_url,
        tokenUrl: input.token_url,
        revocationUrl: input.revocation_url ?? null,
        userinfoUrl: input.userinfo_url ?? null,
        usePkce: input.use_pkce ?? true,
        by: p.identityId,
      });
      logger.info({ provider, org_id: p.orgId, created }, 'OAuth app configured');
      return { created, oauth_app: publicOAuthApp(app) };
    },

    async listOAuthApps(p: Principal) {
      return (await store.listOAuthApps(pool, p.orgId)).map(publicOAuthApp);
    },

    // Connections ------------------------------------------------------------------------------

    /** Starts the authorization-code flow: a pending connection and the URL to send the user to. */
    async create(p: Principal, input: CreateConnectionInput) {
      const person = requirePerson(p, 'create connections');
      return startConnection(p.orgId, person.userId, input);
    },

    /**
     * For an agent (gateway_auth connect): a pending connection owned by the agent's human, and
     * the auth_url for the agent to show that human — as a needs_authentication error does.
     */
    async startForHuman(p: Principal, input: Pick<CreateConnectionInput, 'provider' | 'scopes'>) {
      return startConnection(p.orgId, p.userId, { provider: input.provider, scopes: input.scopes });
    },

    /**
     * The typed error for a call that cannot run because its connection is missing or not
     * authorized: `needs_authentication` / `reauth_required` with the connection id and an
     * auth_url for the caller's human (a pending connection is started when there is none), or
     * `credential_missing` when no OAuth app is configured for the provider.
     */
    async credentialError(p: Principal, gap: { provider: string; connectionId: string | null; requiredScopes: readonly string[]; orSecret?: string }): Promise<AppError> {
      if (gap.connectionId) {
        const row = await store.getConnection(pool, gap.connectionId);
        if (row && row.org_id === p.orgId && row.status !== 'active' && row.status !== 'revoked') return notUsable(row);
        if (!row || row.status === 'revoked') {
          return new AppError('credential_missing', `the ${gap.provider} connection bound to this service is gone: bind another one or connect again`, { connection_id: gap.connectionId, provider: gap.provider });
        }
      }
      const app = await store.getOAuthApp(pool, p.orgId, gap.provider);
      if (!app) {
        const orSecret = gap.orSecret ? `, or store the vault secret "${gap.orSecret}" (POST /v1/secrets)` : '';
        return new AppError(
          'credential_missing',
          `no ${gap.provider} connection, and no OAuth app is configured for "${gap.provider}": an org admin sets one with PUT /v1/oauth-apps/${gap.provider}${orSecret}`,
          { provider: gap.provider, ...(gap.orSecret ? { secret_name: gap.orSecret } : {}) },
        );
      }
      const started = await startConnection(p.orgId, p.userId, { provider: gap.provider, scopes: [...gap.requiredScopes] });
      return new AppError('needs_authentication', `no ${gap.provider} connection yet: open auth_url to connect ${gap.provider}, then call again`, {
        connection_id: started.connection.id,
        provider: gap.provider,
        auth_url: started.auth_url,
      });
    },

    /**
     * A new authorization URL for a pending or reauth_required connection, or, with `scopes` it
     * does not hold yet, the upgrade URL of an active one (the provider is asked for the union).
     */
    async authorize(p: Principal, id: string, opts: { scopes?: readonly string[] | undefined; redirect_after?: string | undefined } = {}) {
      requirePerson(p, 'authorize connections');
      const redirectAfter = opts.redirect_after === undefined ? null : validateRedirectAfter(opts.redirect_after);
      const row = await loadVisible(p, id);
      const widens = opts.scopes !== undefined && opts.scopes.some((s) => !row.granted_scopes.includes(s));
      if (row.status === 'revoked') throw conflict('the connection is revoked');
      if (row.status === 'active' && !widens) throw conflict('the connection is active; give scopes it does not hold yet to ask for more');
      if (redirectAfter !== null) await store.setRedirectAfter(pool, row.id, redirectAfter);
      const url = await ensureAuthorization(row.id, widens ? opts.scopes : undefined);
      if (!url) throw new AppError('credential_missing', `no OAuth app is configured for provider "${row.provider}"`, { provider: row.provider });
      return { connection: publicConnection((await store.getConnection(pool, id)) ?? row), auth_url: url };
    },

    /**
     * The provider's redirect back (public: the browser carries no gateway credential). The
     * single-use, hashed `state` is what authenticates it; it is consumed before anything else.
     */
    async completeAuthorization(input: CallbackInput): Promise<{ connection: PublicConnection; redirect: string | null }> {
      if (!input.state || !STATE_FORMAT.test(input.state)) throw invalidRequest('the state parameter is missing or malformed');
      const row = await store.takeState(pool, hashState(input.state));
      if (!row) throw invalidRequest('this authorization was already completed or is unknown; start the connection again');
      const pending = openPending(row);
      if (!pending || !timingSafeEqual(Buffer.from(pending.state), Buffer.from(input.state))) {
        throw invalidRequest('this authorization is unknown; start the connection again');
      }
      const fail = async (message: string, code: 'invalid_request' | 'upstream_error', details: Record<string, unknown> = {}) => {
        await store.setLastError(pool, row.id, message);
        return new AppError(code, message, { connection_id: row.id, ...details });
      };
      if (!row.state_expires_at || row.state_expires_at.getTime() <= Date.now()) {
        throw await fail('the authorization expired; start it again', 'invalid_request');
      }
      if (input.error !== undefined) {
        const description = input.error_description ? `: ${input.error_description.slice(0, 200)}` : '';
        throw await fail(`the provider did not authorize the connection: ${input.error.slice(0, 100)}${description}`, 'invalid_request', {
          provider_error: input.error.slice(0, 100),
        });
      }
      if (!input.code) throw await fail('the provider sent no authorization code', 'invalid_request');

      const app = await store.getOAuthApp(pool, row.org_id, row.provider);
      if (!app) throw await fail(`the OAuth app for "${row.provider}" was removed`, 'invalid_request');
      let cfg: oauth.OAuthClientConfig;
      try {
        cfg = await clientConfig(app);
      } catch (err) {
        if (err instanceof AppError) await store.setLastError(pool, row.id, err.message);
        throw err;
      }
      let tokens: oauth.TokenSet;
      try {
        tokens = await oauth.exchangeCode(cfg, { code: input.code, redirectUri, codeVerifier: pending.verifier }, requestOpts);
      } catch (err) {
        if (!(err instanceof oauth.OAuthError)) throw err;
        throw await fail(`the code exchange failed: ${err.message}`, 'upstream_error', err.error ? { provider_error: err.error } : {});
      }
      let account: { id: string | null; name: string | null } | undefined;
      if (cfg.userinfoUrl) {
        try {
          const who = await oauth.fetchUserinfo(cfg.userinfoUrl, tokens.accessToken, requestOpts);
          account = { id: who.accountId, name: who.accountName };
        } catch (err) {
          logger.warn({ connection_id: row.id, provider: row.provider, err: (err as Error).message }, 'userinfo lookup failed; connection stored without account identity');
        }
      }
      const stored = await store.storeTokens(pool, row.id, {
        accessToken: seal(row.id, 'access_token', tokens.accessToken),
        // The refresh token of this authorization, or none: an older one belongs to a dead grant.
        refreshToken: tokens.refreshToken === null ? null : seal(row.id, 'refresh_token', tokens.refreshToken),
        expiresAt: expiryOf(tokens),
        grantedScopes: tokens.scope ?? row.requested_scopes,
        account,
        refreshed: false,
      });
      if (!stored) throw invalidRequest('the connection was revoked while it was being authorized');
      logger.info({ connection_id: row.id, provider: row.provider, org_id: row.org_id }, 'connection authorized');
      let redirect: string | null = null;
      if (row.redirect_after) {
        const url = new URL(row.redirect_after);
        url.searchParams.set('connection_id', row.id);
        url.searchParams.set('status', stored.status);
        redirect = url.toString();
      }
    
  return { connection: publicConnection(stored), redirect };
    },

    async list(p: Principal) {
      const all = isAdmin(p);
      return (await store.listConnections(pool, p.orgId, all ? null : p.userId)).map(publicConnection);
    },

    /** The id of a connection the principal may see, named by id or name (POST /v1/actions/http). */
    async idOf(p: Principal, ref: string): Promise<string> {
      return (await refOf(p, ref)).id;
    },

    refOf,

    async get(p: Principal, id: string) {
      return publicConnection(await loadVisible(p, id));
    },

    /** Forces a refresh now (owner or admin). */
    async refresh(p: Principal, id: string) {
      requirePerson(p, 'refresh connections');
      const row = await loadVisible(p, id);
      if (row.status === 'revoked') throw conflict('the connection is revoked');
      if (row.status !== 'active') throw await notUsable(row);
      const out = await refreshUnderLock(row, true);
      switch (out.kind) {
        case 'missing':
          throw notFound('connection');
        case 'fresh':
        case 'refreshed':
          return publicConnection(out.row);
        case 'not_active':
          throw await notUsable(out.row);
        case 'no_refresh_token':
          throw conflict('the provider issued no refresh token for this connection; authorize it again to renew it', { connection_id: row.id });
        case 'reauth':
          throw await reauthRequired(out.row, out.message);
        case 'upstream':
          throw new AppError('upstream_error', out.error.message, { connection_id: row.id, ...(out.error.error ? { provider_error: out.error.error } : {}) });
      }
    },

    /** Revokes upstream (best effort), marks the connection revoked and wipes its tokens. */
    async remove(p: Principal, id: string): Promise<void> {
      requirePerson(p, 'revoke connections');
      const row = await loadVisible(p, id);
      if (row.status === 'revoked') return;
      let cfg: oauth.OAuthClientConfig | null = null;
      const app = await store.getOAuthApp(pool, row.org_id, row.provider);
      if (app?.revocation_url && (row.refresh_token || row.access_token)) {
        cfg = await clientConfig(app).catch((err: unknown) => {
          logger.warn({ connection_id: row.id, err: (err as Error).message }, 'cannot revoke upstream: no client credentials');
          return null;
        });
      }
      await pool.transaction(async (tx) => {
        const cur = await store.lockConnection(tx, row.id);
        if (!cur || cur.status === 'revoked') return;
        if (cfg) {
          // Revoking the refresh token ends the grant at most providers; else the access token.
          const [token, hint] = cur.refresh_token
            ? [open(cur.id, 'refresh_token', cur.refresh_token), 'refresh_token' as const]
            : cur.access_token
              ? [open(cur.id, 'access_token', cur.access_token), 'access_token' as const]
              : [null, null];
          if (token !== null) {
            await oauth.revokeToken(cfg, token, hint, requestOpts).catch((err: unknown) => {
              logger.warn({ connection_id: cur.id, provider: cur.provider, err: (err as Error).message }, 'upstream token revocation failed; revoking locally');
            });
          }
        }
        await store.markRevoked(tx, cur.id);
      });
      logger.info({ connection_id: row.id, provider: row.provider }, 'connection revoked');
    },

    /**
     * For the executor: a usable access token, refreshed first when it expires within the margin
     * (single-flight per connection across processes). Typed errors: `credential_missing` (no such
     * connection, or revoked), `needs_authentication` (pending; carries auth_url), `reauth_required`
     * (the provider refused the refresh token; carries auth_url), `missing_scopes`.
     */
    async getFreshAccessToken(ref: ConnectionRef, opts: { requiredScopes?: readonly string[] } = {}): Promise<FreshAccessToken> {
      let row = await loadRef(ref);
      if (row.status !== 'active') throw await notUsable(row);
      if (needsRefresh(row)) {
        const out = await refreshUnderLock(row, false);
        switch (out.kind) {
          case 'missing':
            throw new AppError('credential_missing', `connection "${row.name}" no longer exists`, { connection_id: row.id });
          case 'not_active':
            throw await notUsable(out.row);
          case 'reauth':
            throw await reauthRequired(out.row, out.message);
          case 'upstream':
            // A transient failure with a still-valid token: use it, the next call retries.
            if (!isExpired(out.row)) {
              logger.warn({ connection_id: row.id, err: out.error.message }, 'token refresh failed; using the current token until it expires');
              row = out.row;
              break;
            }
            throw new AppError('upstream_error', `the token of connection "${row.name}" expired and could not be refreshed: ${out.error.message}`, {
              connection_id: row.id,
            });
          default:
            row = out.row;
        }
      }
      const missing = (opts.requiredScopes ?? []).filter((s) => !row.granted_scopes.includes(s));
      if (missing.length > 0) {
        // The auth_url asks for the union of held and missing scopes, so granting it fixes the call.
        const url = await ensureAuthorization(row.id, [...row.granted_scopes, ...missing]).catch(() => null);
        throw new AppError('missing_scopes', `connection "${row.name}" was not granted ${missing.join(', ')}: open auth_url to grant them`, {
          connection_id: row.id,
          missing_scopes: missing,
          granted_scopes: row.granted_scopes,
          ...(url ? { auth_url: url } : {}),
        });
      }
      return tokenOf(row);
    },
  };
}

export type ConnectionService = ReturnType<typeof createConnectionService>;
