// The gateway's own OAuth 2.1 authorization server: one node-oidc-provider configuration.
//
// - Paths: /oauth/authorize (+ /oauth/authorize/:uid to resume), /oauth/token, /oauth/register,
//   /oauth/revoke, /oauth/jwks; RFC 8414 metadata at /.well-known/oauth-authorization-server (and
//   the same document at /.well-known/openid-configuration). Issuer = PUBLIC_URL.
// - Public clients only (token_endpoint_auth_method "none", no client_secret ever), open dynamic
//   registration (RFC 7591) with a redirect-URI policy, PKCE S256 always required.
// - Access tokens: RS256 JWTs (typ at+jwt) for the one resource `${PUBLIC_URL}/mcp` (aud), 10 min,
//   `sub` = the bound agent, `client_id`, `scope`, and `gid` = the grant they were issued under.
// - Refresh tokens: opaque, single-use, rotated on every use; presenting a rotated one again
//   revokes the whole grant (oidc-provider's reuse detection, made race-free by the adapter).
// - Accounts: the provider's accountId is the *user* (the human who signs in); the agent bound to
//   (user, client) is put in the token's `sub` when the token is minted (formats.customizers.jwt).
//   Signing in is the dashboard's: a valid `gw_session` cookie is the login (see the extra login
//   check), and the sign-in form sets that cookie.
// - Storage: PostgreSQL only (adapter.ts, keys.ts): no process state two replicas could disagree on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { errors, interactionPolicy, type Account, type Client, type KoaContextWithOIDC, type Token } from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { SESSION_COOKIE } from '../auth/middleware.ts';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AuthService } from '../auth/service.ts';
import { SESSION_TTL_SECONDS } from '../auth/service.ts';
import type { Config } from '../config.ts';
import type { IdentityReader } from '../identities/readers.ts';
import type { Logger } from '../logger.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { createPostgresAdapter } from './adapter.ts';
import { grantForBinding, MCP_SCOPE, usableBinding } from './bindings.ts';
import { loadOrCreateKeys, SIGNING_ALG, type OAuthKeys } from './keys.ts';
import { findUnstorableText } from '../../core/text/storable.ts';
import { checkRedirectUri } from './redirect-uris.ts';
import { errorPage } from './html.ts';
import * as store from './store.ts';
import { GRANT_CLAIM, issuerFor, mcpResourceUrl, type AccessTokenVerifier } from './verify.ts';

export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  // Disabled features still need a path of ours, never one outside /oauth.
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/logout',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
} as const;

/** Every path the provider answers; everything else falls through to the rest of the app. */
export const PROVIDER_PATH =
  /^(?:\/oauth\/(?:authorize(?:\/[A-Za-z0-9_-]+)?|token|register|revoke|jwks)|\/\.well-known\/(?:oauth-authorization-server|openid-configuration))$/;

export const SCOPES_SUPPORTED = [MCP_SCOPE];
export const ACCESS_TOKEN_TTL_SECONDS = 10 * 60;
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;
/** Idle lifetime of a refresh token: each rotation starts a new period. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** Absolute lifetime of a grant (its refresh tokens die with it); the next authorization makes a new one. */
export const GRANT_TTL_SECONDS = 365 * 24 * 3600;
export const INTERACTION_TTL_SECONDS = 30 * 60;

export const SIGNIN_PATH = '/oauth/signin';
export const CONSENT_PATH = '/oauth/consent';

export const COOKIE_NAMES = { session: 'gw_oauth_session', interaction: 'gw_oauth_interaction', resume: 'gw_oauth_resume' };

export interface OAuthServerDeps {
  config: Pick<Config, 'publicUrl'>;
  pool: DatabasePool;
  keyring: VaultKeyring;
  auth: AuthService;
  verifier: AccessTokenVerifier;
  logger: Logger;
  /** The account behind a provider `sub`: the signed-in user. */
  identities: Pick<IdentityReader, 'getIdentity'>;
}

export interface OAuthRuntime {
  provider: Provider;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  keys: OAuthKeys;
}

/** The user a dashboard session token stands for, or null. Never throws. */
export async function sessionUser(auth: AuthService, token: string | undefined): Promise<UserPrincipal | null> {
  if (!token) return null;
  try {
    const { principal: p } = await auth.authenticate(token, { session: true, agentKey: false, oauth: false });
    return p.type === 'user' ? p : null;
  } catch {
    return null;
  }
}

function ensureString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export async function buildProvider(deps: OAuthServerDeps): Promise<OAuthRuntime> {
  const { pool, auth, logger } = deps;
  const publicUrl = deps.config.publicUrl;
  const issuer = issuerFor(publicUrl);
  const mcpUrl = mcpResourceUrl(publicUrl);
  const resourceIndicators = new Set([mcpUrl, `${mcpUrl}/`]);
  const keys = await loadOrCreateKeys(pool, deps.keyring, logger);

  const policy = interactionPolicy.base();
  // Signing in is the dashboard's: the provider's session counts only while the browser holds a
  // valid gw_session of the same user (signing out of the dashboard signs out of here too).
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('gateway_session', 'a signed-in gateway session is required', async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId) return interactionPolicy.Check.REQUEST_PROMPT;
      const user = await sessionUser(auth, decodeCookie(ctx.cookies.get(SESSION_COOKIE, { signed: false })));
      return user?.userId === accountId ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
    }),
  );

  const configuration: Record<string, unknown> = {
    adapter: createPostgresAdapter(pool, { onPurgeError: (err) => logger.warn({ err }, 'purging expired OAuth rows failed') }),
    clients: [],
    jwks: keys.jwks,
    cookies: {
      names: COOKIE_NAMES,
      keys: keys.cookieKeys,
      // Secure whenever the public URL is https, whatever a proxy says (see the middleware below).
      long: { httpOnly: true, sameSite: 'lax', secure: publicUrl.startsWith('https://') },
      short: { httpOnly: true, sameSite: 'lax', secure: publicUrl.startsWith('https://') },
    },
    // Plain OAuth 2.1: no OpenID Connect claims; offline_access is tolerated, never needed.
    claims: {},
    scopes: ['offline_access'],
    responseTypes: ['code'],
    clientAuthMethods: ['none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: SIGNING_ALG,
    },
    pkce: { required: () => true },
    routes: OAUTH_ROUTES,
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      registrationManagement: { enabled: false },
      revocation: {
        enabled: true,
        // RFC 7009: a client may revoke only its own tokens; others are ignored (200, no effect).
        allowedPolicy: async (_ctx: KoaContextWithOIDC, client: Client, token: Token) => token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: KoaContextWithOIDC, _client: Client, oneOf?: string | string[]) => oneOf ?? mcpUrl,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: KoaContextWithOIDC, indicator: string) => {
          if (!resourceIndicators.has(indicator)) throw new errors.InvalidTarget(`the only resource is ${mcpUrl}`);
          return {
            scope: SCOPES_SUPPORTED.join(' '),
            audience: mcpUrl,
            accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: SIGNING_ALG } },
          };
        },
      },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      introspection: { enabled: false },
      claimsParameter: { enabled: false },
    },
    extraClientMetadata: {
      properties: ['software_id', 'software_version'],
      validator: validateClientMetadata,
    },
    interactions: {
      policy,
      url: async (_ctx: KoaContextWithOIDC, interaction: { uid: string; prompt: { name: string } }) =>
        `${interaction.prompt.name === 'login' ? SIGNIN_PATH : CONSENT_PATH}/${interaction.uid}`,
    },

    /** accountId is the user; tokens need a usable binding of (user, client) too. */
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string, token?: Token): Promise<Account | undefined> => {
      if (!/^[0-9a-f-]{36}$/i.test(sub)) return undefined;
      const user = await deps.identities.getIdentity(sub);
      if (!user || user.kind !== 'user' || user.status !== 'active') return undefined;
      if (token?.clientId && !(await usableBinding(pool, sub, token.clientId))) return undefined;
      return { accountId: sub, claims: () => ({ sub }) };
    },

    /**
     * The grant of a bound pair covers any authorization of it (consent skipped). An unbound pair,
     * or one whose agent is gone, gets no grant here, so the consent prompt runs.
     */
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { oidc } = ctx;
      const consented = oidc.result?.consent?.grantId;
      if (consented) return oidc.provider.Grant.find(consented);
      const accountId = oidc.session?.accountId;
      const clientId = oidc.client?.clientId;
      if (!accountId || !clientId) return undefined;
      const binding = await usableBinding(pool, accountId, clientId);
      if (!binding) return undefined;
      return grantForBinding(oidc.provider, pool, binding, {
        resources: Object.keys(oidc.resourceServers),
        oidcScopes: [...oidc.requestParamOIDCScopes],
      });
    },

    issueRefreshToken: async (_ctx: KoaContextWithOIDC, client: Client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    formats: {
      customizers: {
        /** `sub` is the agent the pair is bound to; `gid` lets verification see revoked grants. */
        jwt: async (_ctx: KoaContextWithOIDC, token: Token, jwt: { payload: Record<string, unknown> }) => {
          const binding = await usableBinding(pool, token.accountId, token.clientId);
          if (!binding) throw new errors.InvalidGrant('the application is no longer bound to an agent');
          jwt.payload.sub = binding.agent_id;
          jwt.payload[GRANT_CLAIM] = token.grantId;
        },
      },
    },
    ttl: {
      AccessToken: (_ctx: unknown, token: Token & { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? ACCESS_TOKEN_TTL_SECONDS,
      AuthorizationCode: AUTHORIZATION_CODE_TTL_SECONDS,
      RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
      Grant: GRANT_TTL_SECONDS,
      Interaction: INTERACTION_TTL_SECONDS,
      Session: SESSION_TTL_SECONDS,
      IdToken: ACCESS_TOKEN_TTL_SECONDS,
    },
    /** Browser-based public clients may call the token and revocation endpoints from their redirect origin. */
    clientBasedCORS: (_ctx: KoaContextWithOIDC, origin: string, client: Client) =>
      origin !== 'null' && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
    renderError: async (ctx: KoaContextWithOIDC, out: Record<string, unknown>) => {
      ctx.type = 'html';
      ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      ctx.body = errorPage('The authorization request cannot continue', ensureString(out.error_description) ?? ensureString(out.error) ?? 'unknown error');
    },
  };

  const provider = new Provider(issuer, configuration);
  // Behind a TLS-terminating proxy (an https PUBLIC_URL), X-Forwarded-Proto/Host name the request.
  provider.proxy = publicUrl.startsWith('https://');
  provider.on('server_error', (ctx, err) => logger.error({ err, route: ctx.oidc?.route }, 'OAuth server error'));

  // An https PUBLIC_URL means the browser talks TLS even when no proxy header says so: the cookie
  // library then sets Secure cookies instead of refusing them over an "unencrypted" hop.
  if (publicUrl.startsWith('https://')) {
    provider.use(async (ctx, next) => {
      (ctx.cookies as unknown as { secure: boolean }).secure = true;
      await next();
    });
  }
  provider.use(async (ctx, next) => {
    await next();
    const route = ctx.oidc?.route; // undefined for paths the provider has no route for
    if (route === 'discovery' && ctx.status === 200 && isRecord(ctx.body)) {
      // Resource scopes are not among the provider's own (OIDC) scopes: advertise ours.
      ctx.body.scopes_supported = SCOPES_SUPPORTED;
      ctx.body.revocation_endpoint_auth_methods_supported = ['none'];
      for (const oidcOnly of ['claims_supported', 'claim_types_supported', 'claims_parameter_supported', 'subject_types_supported', 'id_token_signing_alg_values_supported', 'request_uri_parameter_supported', 'token_endpoint_auth_signing_alg_values_supported']) {
        delete ctx.body[oidcOnly];
      }
    }
    if (route === 'revocation' && ctx.status === 400 && isRecord(ctx.body) && ctx.body.error === 'unsupported_token_type') {
      // oidc-provider refuses to revoke JWT access tokens (they are not stored). We can: record
      // the jti until the token expires, and verification refuses it from then on (RFC 7009 §2.2:
      // 200 whatever the outcome, including a token that is not ours or not the client's).
      const token = ensureString(ctx.oidc.params?.token);
      const claims = token ? await deps.verifier.claims(token) : null;
      if (claims && claims.client_id === ctx.oidc.client?.clientId) {
        await store.revokeAccessToken(pool, { jti: claims.jti, clientId: claims.client_id, expiresAt: new Date(claims.exp * 1000) });
      }
      ctx.status = 200;
      ctx.body = '';
    }
  });

  return { provider, handler: provider.callback(), keys };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decodeCookie(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  try {
    return decodeURIComponent(v);
  } catch {
    return undefined;
  }
}

/**
 * Registration policy, run once per client (oidc-provider calls the validator for each extra
 * property, before its own checks): every redirect URI must pass checkRedirectUri, else
 * `invalid_redirect_uri`. A client with a private-use scheme URI is a native app. No secret, ever.
 */
function validateClientMetadata(_ctx: unknown, key: string, value: unknown, metadata: Record<string, unknown>): void {
  // PostgreSQL cannot store NUL or a lone surrogate (the metadata is a jsonb column).
  const unstorable = findUnstorableText(metadata);
  if (unstorable !== undefined) throw new errors.InvalidClientMetadata(`${unstorable || 'a property name'} must not contain NUL characters or unpaired surrogates`);
  if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 255)) {
    throw new errors.InvalidClientMetadata(`${key} must be a non-empty string of at most 255 characters`);
  }
  if (key !== 'software_id') return;
  // Said plainly, before oidc-provider's generic "must be one of" (issue 32).
  const method = metadata.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') {
    throw new errors.InvalidClientMetadata(
      `only public clients are registered here: token_endpoint_auth_method must be "none" (got ${JSON.stringify(method)}); no client secret is ever issued, the authorization code flow uses PKCE`,
    );
  }
  // Public clients only: oidc-provider mints a secret when the body omits
  // token_endpoint_auth_method (the default here is "none"); drop it before the client is stored.
  delete metadata.client_secret;
  delete metadata.client_secret_expires_at;
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new errors.InvalidClientMetadata('redirect_uris must contain members');
  let native = false;
  for (const uri of uris) {
    const verdict = checkRedirectUri(uri);
    if (!verdict.ok) throw new errors.InvalidClientMetadata(`redirect_uris ${verdict.reason}`);
    native ||= verdict.kind === 'private-use';
  }
  if (native) metadata.application_type = 'native';
}
