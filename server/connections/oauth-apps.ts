// OAuth apps: the provider apps an org admin registers (client id, endpoints, PKCE, client
// authentication; the client secret goes to the vault), and the client configuration the
// authorization flow and the token refresh talk to a provider with.
import type { Principal, UserPrincipal } from '../auth/principal.ts';
import { AppError, forbidden, invalidRequest } from '../errors.ts';
import type * as oauth from './oauth-client.ts';
import { requirePerson, type ConnectionServiceDeps } from './shared.ts';
import * as store from './store.ts';

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

export interface UpstreamAppInput {
  clientId: string;
  /** Null for a public client (PKCE only). */
  clientSecret: string | null;
  authMethod: oauth.ClientAuthMethod;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string | null;
  resource: string;
}

export const clientSecretName = (provider: string) => `oauth_app.${provider}.client_secret`;

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

export function createOAuthApps(deps: Pick<ConnectionServiceDeps, 'pool' | 'vault' | 'logger'>) {
  const { pool, vault, logger } = deps;

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
      resource: app.resource,
    };
  }

  /**
   * The app of an upstream MCP server's authorization server, as discovered and registered by the
   * gateway (server/mcp-servers/upstream-oauth.ts). The caller decided who may; a client secret
   * (configured, or issued by dynamic registration) goes to the vault like an admin's.
   */
  async function putUpstreamApp(p: UserPrincipal, provider: string, input: UpstreamAppInput): Promise<store.OAuthAppRow> {
    let clientSecretId: string | null = null;
    if (input.clientSecret !== null) {
      const put = await vault.put(p, { name: clientSecretName(provider), value: input.clientSecret, description: `OAuth client secret of the MCP upstream app ${provider}` });
      clientSecretId = put.secret.id;
    }
    const { app } = await store.upsertOAuthApp(pool, {
      orgId: p.orgId,
      provider,
      clientId: input.clientId,
      clientSecretId,
      authMethod: input.clientSecret === null ? 'none' : input.authMethod,
      authorizationUrl: input.authorizationUrl,
      tokenUrl: input.tokenUrl,
      revocationUrl: input.revocationUrl,
      userinfoUrl: null,
      usePkce: true,
      resource: input.resource,
      by: p.identityId,
    });
    logger.info({ provider, org_id: p.orgId }, 'OAuth app of an MCP upstream registered');
    return app;
  }

  return {
    requireApp,
    clientConfig,
    putUpstreamApp,

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
  };
}

export type OAuthApps = ReturnType<typeof createOAuthApps>;
