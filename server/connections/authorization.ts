// The authorization-code flow that creates a connection: starting it for a person (a single-use
// state and, with PKCE, a verifier, sealed in the connection row), handing out or renewing the
// link of a pending connection, the provider's callback that exchanges the code for tokens, and
// the typed errors that give a caller an auth_url to open.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../auth/principal.ts';
import { AppError, conflict, invalidRequest } from '../errors.ts';
import type { OAuthApps } from './oauth-apps.ts';
import * as oauth from './oauth-client.ts';
import { connectionSecrets, expiryOf, loadVisible, publicConnection, requirePerson, type ConnectionServiceDeps, type PublicConnection } from './shared.ts';
import * as store from './store.ts';

/** A pending authorization (state + PKCE verifier) lives this long. */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
/** A pending authorization with less left than this is replaced rather than handed out again. */
const AUTHORIZATION_REUSE_MIN_MS = 60_000;
export const CALLBACK_PATH = '/v1/connections/callback';

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

const hashState = (state: string) => createHash('sha256').update(state, 'utf8').digest();
const STATE_FORMAT = /^[A-Za-z0-9_-]{43}$/;

interface PendingAuthorization {
  state: string;
  verifier: string | null;
}

export function createAuthorizationFlow(
  deps: Pick<ConnectionServiceDeps, 'pool' | 'keyring' | 'publicUrl' | 'logger' | 'oauthRequest'>,
  apps: Pick<OAuthApps, 'clientConfig'>,
) {
  const { pool, logger } = deps;
  const publicUrl = deps.publicUrl.replace(/\/+$/, '');
  const redirectUri = publicUrl + CALLBACK_PATH;
  const requestOpts = deps.oauthRequest ?? {};
  const { seal, open } = connectionSecrets(deps.keyring);

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
      { clientId: app.client_id, authorizationUrl: app.authorization_url, resource: app.resource },
      { redirectUri, scopes: row.requested_scopes, state: pending.state, codeVerifier: pending.verifier },
    );
  }

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

  /** The typed error for a connection that is not active: what its human must do, with an auth_url. */
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

  return {
    ensureAuthorization,
    notUsable,
    reauthRequired,

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
      const row = await loadVisible(pool, p, id);
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
        cfg = await apps.clientConfig(app);
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
  };
}

export type AuthorizationFlow = ReturnType<typeof createAuthorizationFlow>;
