// OAuth connections: per-org OAuth app credentials, the authorization-code flow that creates a
// connection, and fresh access tokens for the executor. Each method: authorize → load/validate →
// transaction. Tokens live only as vault envelopes bound (AAD) to their row and column; no method
// that serves the REST API returns, logs or otherwise echoes one.
//
// Who may do what: org admins configure OAuth apps; every person may start connections, which
// they own; owners and org admins see, refresh and revoke them; agents may read the metadata of
// their own human's connections and use them through the executor, but not create or manage them.
//
// This module composes the three parts — oauth-apps.ts (the provider apps), authorization.ts (the
// flow that creates and re-authorizes a connection), tokens.ts (access tokens, refresh,
// revocation) — and serves the metadata reads, which belong to none of them.
import { isAdmin, type Principal } from '../auth/principal.ts';
import { notFound } from '../errors.ts';
import { createAuthorizationFlow } from './authorization.ts';
import { createOAuthApps } from './oauth-apps.ts';
import { loadVisible, publicConnection, type ConnectionServiceDeps } from './shared.ts';
import * as store from './store.ts';
import { createConnectionTokens } from './tokens.ts';

export { AUTHORIZATION_TTL_MS, CALLBACK_PATH, type CallbackInput, type CreateConnectionInput } from './authorization.ts';
export { clientSecretName, publicOAuthApp, type PutOAuthAppInput, type UpstreamAppInput } from './oauth-apps.ts';
export { publicConnection, type ConnectionServiceDeps, type PublicConnection } from './shared.ts';
export { DEFAULT_REFRESH_MARGIN_SECONDS, type ConnectionRef, type FreshAccessToken } from './tokens.ts';

export function createConnectionService(deps: ConnectionServiceDeps) {
  const { pool } = deps;
  const apps = createOAuthApps(deps);
  const authorization = createAuthorizationFlow(deps, apps);
  const tokens = createConnectionTokens(deps, apps, authorization);

  /** A connection the caller may reference by id or name, with what binds its token to hosts. */
  async function refOf(p: Principal, ref: string): Promise<{ id: string; name: string; provider: string; ownerId: string }> {
    const found = (await store.listConnections(pool, p.orgId, isAdmin(p) ? null : p.userId)).find((c) => c.id === ref || c.name === ref);
    if (!found) throw notFound(`connection "${ref}"`);
    return { id: found.id, name: found.name, provider: found.provider, ownerId: found.owner_id };
  }

  return {
    loadVisible: (p: Principal, id: string) => loadVisible(pool, p, id),

    putOAuthApp: apps.putOAuthApp,
    putUpstreamApp: apps.putUpstreamApp,
    getOAuthApp: (orgId: string, provider: string) => store.getOAuthApp(pool, orgId, provider),
    /** The person's connections to a provider (any status but revoked), oldest first. */
    async ownConnections(orgId: string, userId: string, provider: string) {
      return (await store.listConnections(pool, orgId, userId)).filter((c) => c.provider === provider && c.status !== 'revoked');
    },
    listOAuthApps: apps.listOAuthApps,

    create: authorization.create,
    startForHuman: authorization.startForHuman,
    credentialError: authorization.credentialError,
    authorize: authorization.authorize,
    completeAuthorization: authorization.completeAuthorization,

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
      return publicConnection(await loadVisible(pool, p, id));
    },

    refresh: tokens.refresh,
    remove: tokens.remove,
    getFreshAccessToken: tokens.getFreshAccessToken,
  };
}

export type ConnectionService = ReturnType<typeof createConnectionService>;
