// A real OAuth 2 provider (node-oidc-provider) on loopback standing in for a third party, with a
// headless browser for its authorize step. It counts every token-endpoint outcome itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

/** The few parts of oidc-provider used here (the package ships no types). */
interface OidcProvider {
  callback(): http.RequestListener;
  on(event: 'grant.success' | 'grant.error', fn: (ctx: ProviderContext) => void): void;
  Grant: { find(id: string): Promise<{ destroy(): Promise<void> } | undefined> };
}
interface ProviderContext {
  oidc: { params: Record<string, unknown>; entities: Record<string, { jti?: string; grantId?: string } | undefined> };
  body: any;
}
const OIDC_PROVIDER_MODULE: string = 'oidc-provider';

/** One successful token-endpoint grant, as the provider issued it. */
export interface Issued {
  grantType: string;
  accessToken: string;
  refreshToken: string | undefined;
  grantId: string | undefined;
}

export interface TestProvider {
  issuer: string;
  /** The provider itself (e.g. `provider.Grant.find(id)` to revoke a grant behind the gateway's back). */
  provider: OidcProvider;
  /** A client authenticating with client_secret_basic; PKCE is required of it. */
  clientId: string;
  /** A client authenticating with client_secret_post, without PKCE (same secret). */
  postClientId: string;
  clientSecret: string;
  /** Every HTTP request the provider received, by `METHOD path`. */
  hits: Map<string, number>;
  /** Successful token-endpoint grants by grant type. */
  success: Map<string, number>;
  errors: Map<string, number>;
  /** Every successful grant, oldest first. */
  issued: Issued[];
  /** Requests to POST /token. */
  tokenHits(): number;
  lastAccessToken(): string | undefined;
  stop(): Promise<void>;
}

/** A counter of `m` (0 when never bumped). */
export const count = (m: Map<string, number>, k: string) => m.get(k) ?? 0;

export async function startOAuthProvider(redirectUri: string, accessTokenTtlS = 6): Promise<TestProvider> {
  const { default: Provider } = (await import(/* @vite-ignore */ OIDC_PROVIDER_MODULE)) as {
    default: new (issuer: string, config: Record<string, unknown>) => OidcProvider;
  };
  const hits = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string) => m.set(k, count(m, k) + 1);
  let handler: http.RequestListener = (_req, res) => res.end();
  const server = http.createServer((req, res) => {
    bump(hits, `${req.method} ${(req.url ?? '').split('?')[0]}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientSecret = 'provider-secret-' + randomBytes(8).toString('hex');
  const client = (id: string, method: string) => ({
    client_id: id,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: method,
  });
  const provider = new Provider(issuer, {
    clients: [client('gw-basic', 'client_secret_basic'), client('gw-post', 'client_secret_post')],
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id}@example.test`, name: `${id[0]!.toUpperCase()}${id.slice(1)} Example` }),
    }),
    claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
    scopes: ['openid', 'offline_access', 'profile', 'email'],
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    // A confidential client needs no PKCE by default; require it (but of the client_secret_post
    // one, which stands for an app configured without PKCE), so the gateway's S256 challenge is checked.
    pkce: { required: (_ctx: unknown, c: { clientId: string }) => c.clientId !== 'gw-post' },
    // Refresh tokens without the OIDC offline_access/prompt=consent dance: a plain OAuth client.
    issueRefreshToken: (_ctx: unknown, c: { grantTypeAllowed(t: string): boolean }) => c.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: { AccessToken: accessTokenTtlS, AuthorizationCode: 60, IdToken: 60, RefreshToken: 3600, Grant: 3600, Interaction: 600, Session: 3600 },
    cookies: { keys: [randomBytes(16).toString('hex')] },
  });
  const success = new Map<string, number>();
  const errors = new Map<string, number>();
  const issued: Issued[] = [];
  provider.on('grant.success', (ctx) => {
    const grantType = String(ctx.oidc.params.grant_type);
    bump(success, grantType);
    const e = ctx.oidc.entities;
    issued.push({
      grantType,
      accessToken: ctx.body.access_token,
      refreshToken: ctx.body.refresh_token,
      grantId: e.Grant?.jti ?? e.AuthorizationCode?.grantId ?? e.RefreshToken?.grantId,
    });
  });
  provider.on('grant.error', (ctx) => bump(errors, String(ctx.oidc.params.grant_type)));
  handler = provider.callback();
  return {
    issuer,
    provider,
    clientId: 'gw-basic',
    postClientId: 'gw-post',
    clientSecret,
    hits,
    success,
    errors,
    issued,
    tokenHits: () => count(hits, 'POST /token'),
    lastAccessToken: () => issued.at(-1)?.accessToken,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Follows the provider's authorize step as a browser would: signs in as `account`, consents (or,
 * with `abort`, refuses), and stops at the redirect to the gateway's callback (returned, not followed).
 */
export async function authorizeAtProvider(authUrl: string, account: string, callbackPrefix: string, opts: { abort?: boolean } = {}): Promise<string> {
  const jar = new Map<string, string>();
  let url = authUrl;
  let form: string | undefined;
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(callbackPrefix)) return url;
    const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method: form === undefined ? 'GET' : 'POST', headers, redirect: 'manual', ...(form !== undefined ? { body: form } : {}) });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(name);
      else jar.set(name, value);
    }
    form = undefined;
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).toString();
      continue;
    }
    const html = await res.text();
    const prompt = /name="prompt" value="(login|consent)"/.exec(html)?.[1];
    if (res.status !== 200 || !prompt) throw new Error(`unexpected provider answer ${res.status} at ${url}: ${html.slice(0, 300)}`);
    if (opts.abort) {
      url = `${url.replace(/\/$/, '')}/abort`;
      continue;
    }
    form = prompt === 'login' ? new URLSearchParams({ prompt, login: account, password: 'any' }).toString() : 'prompt=consent';
  }
  throw new Error('the authorization did not reach the callback');
}
