// A connection's tokens: a usable access token for a call (refreshed first when it is about to
// expire), a refresh forced by its owner or an admin, and revocation, upstream and local.
//
// Refresh is single-flight per connection under a PostgreSQL row lock (`SELECT … FOR UPDATE`):
// the first caller refreshes, concurrent callers — in this process or any other — wait on the
// lock, re-check, and take the fresh token. Rotated refresh tokens are therefore never replayed
// (a replay makes a rotating provider revoke the whole grant).
import type { Principal } from '../auth/principal.ts';
import { AppError, conflict, notFound } from '../errors.ts';
import type { AuthorizationFlow } from './authorization.ts';
import type { OAuthApps } from './oauth-apps.ts';
import * as oauth from './oauth-client.ts';
import { connectionSecrets, expiryOf, loadVisible, publicConnection, requirePerson, type ConnectionServiceDeps } from './shared.ts';
import * as store from './store.ts';

/** Refresh when the token expires within this margin (capped at half the token's lifetime). */
export const DEFAULT_REFRESH_MARGIN_SECONDS = 60;

/** Which connection the executor means: an id, or a name within an org. */
export type ConnectionRef = string | { orgId: string; id: string } | { orgId: string; name: string };

export interface FreshAccessToken {
  accessToken: string;
  grantedScopes: string[];
  connectionId: string;
  /** Null when the provider did not say. */
  expiresAt: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type RefreshOutcome =
  | { kind: 'fresh' | 'refreshed'; row: store.ConnectionRow }
  | { kind: 'not_active'; row: store.ConnectionRow }
  | { kind: 'reauth'; row: store.ConnectionRow; message: string }
  | { kind: 'upstream'; row: store.ConnectionRow; error: oauth.OAuthError }
  | { kind: 'no_refresh_token'; row: store.ConnectionRow }
  | { kind: 'missing' };

export function createConnectionTokens(
  deps: Pick<ConnectionServiceDeps, 'pool' | 'keyring' | 'logger' | 'refreshMarginSeconds' | 'oauthRequest'>,
  apps: Pick<OAuthApps, 'requireApp' | 'clientConfig'>,
  authorization: Pick<AuthorizationFlow, 'ensureAuthorization' | 'notUsable' | 'reauthRequired'>,
) {
  const { pool, logger } = deps;
  const { ensureAuthorization, notUsable, reauthRequired } = authorization;
  const marginMs = (deps.refreshMarginSeconds ?? DEFAULT_REFRESH_MARGIN_SECONDS) * 1000;
  const requestOpts = deps.oauthRequest ?? {};
  const { seal, open } = connectionSecrets(deps.keyring);

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

  /**
   * The refresh itself, under the row lock. Without `force`, a token that is fresh by the time the
   * lock is ours — typically because the caller we waited for just refreshed it — is used as is.
   */
  async function refreshUnderLock(row: store.ConnectionRow, force: boolean): Promise<RefreshOutcome> {
    // Everything that needs the pool is read before the lock: a lock holder waiting for a pool
    // connection held by a lock waiter would deadlock.
    const cfg = await apps.clientConfig(await apps.requireApp(row.org_id, row.provider));
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

  return {
    /** Forces a refresh now (owner or admin). */
    async refresh(p: Principal, id: string) {
      requirePerson(p, 'refresh connections');
      const row = await loadVisible(pool, p, id);
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
      const row = await loadVisible(pool, p, id);
      if (row.status === 'revoked') return;
      let cfg: oauth.OAuthClientConfig | null = null;
      const app = await store.getOAuthApp(pool, row.org_id, row.provider);
      if (app?.revocation_url && (row.refresh_token || row.access_token)) {
        cfg = await apps.clientConfig(app).catch((err: unknown) => {
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
