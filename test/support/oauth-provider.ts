// A real OAuth 2 provider (node-oidc-provider) on loopback standing in for a third party, with a
// headless browser for its authorize step. It counts every token-endpoint outcome itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

/** The few parts of oidc-provider used here (the package ships no types). */
interface OidcProvider {
  callback(): http.RequestListener;
  on(event: 'grant.success' | 'grant.error', fn: (ctx: { oidc: { params: Record<string, unknown> }; body: any }) => void): void;
}
const OIDC_PROVIDER_MODULE: string = 'oidc-provider';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Successful token-endpoint grants by grant type. */
  success: Map<string, number>;
  errors: Map<string, number>;
  /** Requests to POST /token. */
  tokenHits(): number;
  lastAccessToken(): string | undefined;
  stop(): Promise<void>;
}

export async function startOAuthProvider(redirectUri: string, accessTokenTtlS = 6): Promise<TestProvider> {
  const { default: Provider } = (await import(/* @vite-ignore */ OIDC_PROVIDER_MODULE)) as {
    default: new (issuer: string, config: Record<string, unknown>) => OidcProvider;
  };
  let tokenHits = 0;
  let handler: http.RequestListener = (_req, res) => res.end();
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && (req.url ?? '').split('?')[0] === '/token') tokenHits++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientSecret = 'provider-secret-' + randomBytes(8).toString('hex');
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'gw-cluster',
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id, email: `${id}@example.test` }) }),
    claims: { openid: ['sub'], email: ['email'] },
    scopes: ['openid', 'offline_access', 'email'],
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    issueRefreshToken: (_ctx: unknown, c: { grantTypeAllowed(t: string): boolean }) => c.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: { AccessToken: accessTokenTtlS, AuthorizationCode: 60, IdToken: 60, RefreshToken: 3600, Grant: 3600, Interaction: 600, Session: 3600 },
    cookies: { keys: [randomBytes(16).toString('hex')] },
  });
  const success = new Map<string, number>();
  const errors = new Map<string, number>();
  let last: string | undefined;
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  provider.on('grant.success', (ctx) => {
    bump(success, String(ctx.oidc.params.grant_type));
    last = ctx.body.access_token;
  });
  provider.on('grant.error', (ctx) => bump(errors, String(ctx.oidc.params.grant_type)));
  handler = provider.callback();
  return {
    issuer,
    clientId: 'gw-cluster',
    clientSecret,
    success,
    errors,
    tokenHits: () => tokenHits,
    lastAccessToken: () => last,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Follows the provider's authorize step as a browser would: signs in as `account`, consents, and
 * stops at the redirect to the gateway's callback (returned, not followed).
 */
export async function authorizeAtProvider(authUrl: string, account: string, callbackPrefix: string): Promise<string> {
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
    form = prompt === 'login' ? new URLSearchParams({ prompt, login: account, password: 'any' }).toString() : 'prompt=consent';
  }
  throw new Error('the authorization did not reach the callback');
}
