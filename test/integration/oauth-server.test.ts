// The gateway's own OAuth 2.1 authorization server, driven headlessly over HTTP the way an MCP
// client and a browser would: discovery, dynamic registration, authorization code + PKCE through
// the sign-in and consent pages (fetch + a cookie jar), tokens, refresh rotation and reuse
// detection, revocation, the (user, client) → agent binding, and the admin and binding REST.
import { createHash, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAuthService } from '../../server/auth/service.ts';
import { createIdentityReader } from '../../server/identities/readers.ts';
import { keyAad, rotateOAuthKeys } from '../../server/oauth/keys.ts';
import { isSelfApproveEnabled } from '../../server/oauth/service.ts';
import { createAccessTokenVerifier } from '../../server/oauth/verify.ts';
import { envelopeSchema } from '../../server/vault/envelope-schema.ts';
import { createVaultKeyring } from '../../server/vault/keyring.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';
import { Browser, csrfOf, pageOf, redirectOf } from '../support/oauth-browser.ts';

// --- a browser: a path-aware cookie jar and manual redirects ----------------------------------------

// --- OAuth client side ----------------------------------------------------------------------------

const REDIRECT_URI = 'http://127.0.0.1:9/callback';

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

describe('the OAuth 2.1 authorization server', () => {
  let gw: TestGateway;
  let mcpUrl: string;
  let member: SeededUser;
  let memberToken: string;
  let clientId: string;
  const CLIENT_NAME = 'Test MCP Client';

  const form = (path: string, fields: Record<string, string>, base = gw.url) =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

  const register = (body: Record<string, unknown>) => gw.request('POST', '/oauth/register', { body });

  function authorizeUrl(o: { client?: string; challenge?: string | null; state?: string; redirectUri?: string; extra?: Record<string, string> } = {}) {
    const params = new URLSearchParams({ response_type: 'code', client_id: o.client ?? clientId, redirect_uri: o.redirectUri ?? REDIRECT_URI, state: o.state ?? 'st-' + randomBytes(4).toString('hex'), ...o.extra });
    if (o.challenge !== null) {
      params.set('code_challenge', o.challenge ?? pkce().challenge);
      params.set('code_challenge_method', 'S256');
    }
    return `/oauth/authorize?${params}`;
  }

  async function exchange(code: string, verifier: string, client = clientId, redirectUri = REDIRECT_URI, base = gw.url) {
    const res = await form('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: client, code_verifier: verifier }, base);
    return { status: res.status, body: (await res.json()) as any };
  }

  async function refresh(refreshToken: string, client = clientId) {
    const res = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client });
    return { status: res.status, body: (await res.json()) as any };
  }

  /** The whole flow for an already signed-in browser whose pair is bound: straight to a code. */
  async function authorizeBound(browser: Browser, client = clientId, base = gw.url): Promise<Tokens> {
    const { verifier, challenge } = pkce();
    const back = redirectOf(await browser.follow(authorizeUrl({ client, challenge })));
    const code = back.searchParams.get('code');
    expect(code, back.href).toBeTruthy();
    const tokens = await exchange(code!, verifier, client, REDIRECT_URI, base);
    expect(tokens.status).toBe(200);
    return tokens.body as Tokens;
  }

  const me = (token: string) => gw.as(token)('GET', '/v1/identities/me');

  beforeAll(async () => {
    gw = await startTestGateway({ realPublicUrl: true });
    mcpUrl = `${gw.url}/mcp`;
    const adminMe = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body;
    member = await seedUser(gw.databaseUrl, { orgId: adminMe.org.id, email: 'oauth-member@example.test' });
    memberToken = await gw.login(member.email, member.password);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  describe('discovery', () => {
    it('serves RFC 8414 authorization server metadata', async () => {
      const res = await gw.request('GET', '/.well-known/oauth-authorization-server');
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.body).toMatchObject({
        issuer: gw.url,
        authorization_endpoint: `${gw.url}/oauth/authorize`,
        token_endpoint: `${gw.url}/oauth/token`,
        registration_endpoint: `${gw.url}/oauth/register`,
        revocation_endpoint: `${gw.url}/oauth/revoke`,
        jwks_uri: `${gw.url}/oauth/jwks`,
        scopes_supported: ['mcp'],
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
      expect([...res.body.grant_types_supported].sort()).toEqual(['authorization_code', 'refresh_token']);
      const oidc = await gw.request('GET', '/.well-known/openid-configuration');
      expect(oidc.body.issuer).toBe(gw.url);
    });

    it.each(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'])('serves RFC 9728 metadata at %s', async (path) => {
      const res = await gw.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        resource: mcpUrl,
        authorization_servers: [gw.url],
        bearer_methods_supported: ['header'],
        scopes_supported: ['mcp'],
        resource_name: 'Agent Action Gateway',
      });
    });

    it('publishes public signing keys only', async () => {
      const res = await gw.request('GET', '/oauth/jwks');
      expect(res.status).toBe(200);
      expect(res.body.keys.length).toBeGreaterThanOrEqual(1);
      for (const key of res.body.keys) {
        expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
        expect(key.d).toBeUndefined();
        expect(key.p).toBeUndefined();
      }
    });
  });

  describe('dynamic client registration', () => {
    it('registers a public client without a secret', async () => {
      const res = await register({ redirect_uris: [REDIRECT_URI], client_name: CLIENT_NAME, software_id: 'test-mcp-client', software_version: '1.0.0' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ client_name: CLIENT_NAME, software_id: 'test-mcp-client', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT_URI] });
      expect(res.body.client_id).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(res.body.client_secret).toBeUndefined();
      expect(res.body.registration_access_token).toBeUndefined();
      expect([...res.body.grant_types].sort()).toEqual(['authorization_code', 'refresh_token']);
      clientId = res.body.client_id;
    });

    it('says that only public clients are registered when a confidential one is asked for', async () => {
      for (const method of ['client_secret_basic', 'client_secret_post', 'private_key_jwt']) {
        const res = await register({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: method });
        expect(res.status, method).toBe(400);
        expect(res.body.error).toBe('invalid_client_metadata');
        expect(res.body.error_description).toContain('only public clients are registered');
        expect(res.body.error_description).toContain(method);
      }
    });

    it('never issues a client secret, whatever is asked', async () => {
      const res = await register({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_basic' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
    });

    it.each([
      ['https', 'https://app.example/oauth/callback', 'web'],
      ['loopback 127.0.0.1', 'http://127.0.0.1:33418/cb', 'web'],
      ['loopback [::1]', 'http://[::1]:8080/cb', 'web'],
      ['localhost', 'http://localhost:6274/oauth/callback', 'web'],
      ['a private-use scheme', 'com.example.app:/cb', 'native'],
    ])('accepts %s redirect URIs', async (_name, uri, applicationType) => {
      const res = await register({ redirect_uris: [uri], client_name: 'ok' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.application_type).toBe(applicationType);
    });

    it.each([
      ['http on a non-loopback host', 'http://app.example/cb'],
      ['http on a private address', 'http://192.168.1.10/cb'],
      ['javascript:', 'javascript:alert(1)'],
      ['data:', 'data:text/html,hi'],
      ['a fragment', 'https://app.example/cb#frag'],
      ['credentials', 'https://user:pw@app.example/cb'],
      ['not a URI', 'not a uri'],
    ])('rejects %s with invalid_redirect_uri', async (_name, uri) => {
      const res = await register({ redirect_uris: [uri], client_name: 'bad' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_redirect_uri');
    });

    it('rejects a registration without redirect URIs', async () => {
      const res = await register({ client_name: 'none' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_redirect_uri');
    });
  });

  describe('authorization code + PKCE through sign-in and consent', () => {
    let browser: Browser;
    let tokens: Tokens;
    let agentId: string;

    it('signs in, creates an agent named after the client at consent, and issues tokens for /mcp', async () => {
      browser = new Browser(gw.url);
      const { verifier, challenge } = pkce();
      const state = 'state-' + randomBytes(6).toString('hex');
      const signIn = pageOf(await browser.follow(authorizeUrl({ challenge, state, extra: { resource: mcpUrl, scope: 'mcp' } })));
      expect(signIn.url.pathname).toMatch(/^\/oauth\/signin\/[\w-]+$/);
      expect(signIn.status).toBe(200);
      expect(signIn.html).toContain(CLIENT_NAME);
      expect(csrfOf(signIn)).not.toBe('');

      const wrong = pageOf(await browser.submit(signIn, { email: member.email, password: 'not the password' }));
      expect(wrong.status).toBe(401);
      expect(wrong.html).toContain('Wrong email or password');

      const consent = pageOf(await browser.submit(wrong, { email: member.email, password: member.password }));
      expect(consent.url.pathname).toMatch(/^\/oauth\/consent\/[\w-]+$/);
      expect(consent.status).toBe(200);
      expect(consent.html).toContain(`value="${CLIENT_NAME}"`);
      expect(browser.cookie('gw_session')).toMatch(/^gws_/);

      const back = redirectOf(await browser.submit(consent, { decision: 'allow', agent: 'new', name: CLIENT_NAME }));
      expect(back.origin + back.pathname).toBe(REDIRECT_URI);
      expect(back.searchParams.get('state')).toBe(state);
      expect(back.searchParams.get('iss')).toBe(gw.url);
      const code = back.searchParams.get('code')!;
      expect(code).toBeTruthy();

      const res = await exchange(code, verifier);
      expect(res.status).toBe(200);
      tokens = res.body;
      expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'mcp' });
      expect(tokens.refresh_token).toBeTruthy();

      expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
      const claims = decodeJwt(tokens.access_token);
      expect(claims).toMatchObject({ iss: gw.url, aud: mcpUrl, client_id: clientId, scope: 'mcp' });
      expect(claims.exp! - claims.iat!).toBe(600);
      agentId = claims.sub!;

      const agents = (await gw.as(memberToken)('GET', '/v1/identities?kind=agent')).body.identities;
      expect(agents).toEqual([expect.objectContaining({ id: agentId, name: CLIENT_NAME, parent_id: member.userId, status: 'active' })]);
    });

    it('authenticates /v1 as the bound agent', async () => {
      const res = await me(tokens.access_token);
      expect(res.status).toBe(200);
      expect(res.body.authenticated_via).toBe('oauth');
      expect(res.body.identity).toMatchObject({ id: agentId, kind: 'agent', name: CLIENT_NAME });
      expect(res.body.chain.map((c: any) => c.id)).toEqual([agentId, member.userId]);
    });

    it('refuses to exchange a code twice, and the replay revokes what the code produced', async () => {
      const { verifier, challenge } = pkce();
      const code = redirectOf(await browser.follow(authorizeUrl({ challenge }))).searchParams.get('code')!;
      const first = await exchange(code, verifier);
      expect(first.status).toBe(200);
      const replay = await exchange(code, verifier);
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');
      expect((await refresh(first.body.refresh_token)).body.error).toBe('invalid_grant');
      expect((await me(first.body.access_token)).status).toBe(401);
    });

    it('refuses a code with the wrong PKCE verifier', async () => {
      const { challenge } = pkce();
      const code = redirectOf(await browser.follow(authorizeUrl({ challenge }))).searchParams.get('code')!;
      const res = await exchange(code, pkce().verifier);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    });

    it('skips consent for a bound pair, in this browser and in a fresh one after sign-in', async () => {
      const again = await authorizeBound(browser);
      expect(decodeJwt(again.access_token).sub).toBe(agentId);

      const fresh = new Browser(gw.url);
      const { verifier, challenge } = pkce();
      const signIn = pageOf(await fresh.follow(authorizeUrl({ challenge })));
      expect(signIn.url.pathname).toMatch(/^\/oauth\/signin\//);
      const back = redirectOf(await fresh.submit(signIn, { email: member.email, password: member.password }));
      const res = await exchange(back.searchParams.get('code')!, verifier);
      expect(decodeJwt(res.body.access_token).sub).toBe(agentId);
    });

    it.each([
      ['no scope at all', {}],
      ['openid alongside', { scope: 'openid mcp' }],
      ['offline_access alongside', { scope: 'mcp offline_access' }],
      ['the resource with a trailing slash', { resource: 'RESOURCE/' }],
    ])('issues the same kind of token for a bound pair with %s', async (_name, extra: Record<string, string>) => {
      const { verifier, challenge } = pkce();
      const params = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v.replace('RESOURCE', mcpUrl)]));
      const back = redirectOf(await browser.follow(authorizeUrl({ challenge, extra: params })));
      const res = await exchange(back.searchParams.get('code')!, verifier);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.scope).toBe('mcp');
      expect(res.body.id_token).toBeUndefined();
      expect(decodeJwt(res.body.access_token)).toMatchObject({ aud: mcpUrl, sub: agentId, scope: 'mcp' });
    });

    it('binds a native client (private-use scheme) once; later authorizations pass consent without a page', async () => {
      const nativeUri = 'com.example.gateway-test:/oauth/callback';
      const reg = await register({ redirect_uris: [nativeUri], client_name: 'Native App', token_endpoint_auth_method: 'none' });
      expect(reg.body.application_type).toBe('native');
      const native = reg.body.client_id;
      const first = pkce();
      const consent = pageOf(await browser.follow(authorizeUrl({ client: native, challenge: first.challenge, redirectUri: nativeUri })));
      expect(consent.url.pathname).toMatch(/^\/oauth\/consent\//);
      const back = redirectOf(await browser.submit(consent, { decision: 'allow', agent: agentId }));
      expect(back.protocol).toBe('com.example.gateway-test:');
      const t1 = await exchange(back.searchParams.get('code')!, first.verifier, native, nativeUri);
      expect(decodeJwt(t1.body.access_token).sub).toBe(agentId);

      const second = pkce();
      const again = redirectOf(await browser.follow(authorizeUrl({ client: native, challenge: second.challenge, redirectUri: nativeUri })));
      const t2 = await exchange(again.searchParams.get('code')!, second.verifier, native, nativeUri);
      expect(t2.status).toBe(200);
      expect(decodeJwt(t2.body.access_token)).toMatchObject({ sub: agentId, client_id: native });
      // One agent, two clients: each pair has its own binding.
      const bindings = (await gw.as(memberToken)('GET', '/v1/oauth/bindings')).body.bindings;
      expect(bindings.map((b: any) => b.client_id).sort()).toEqual([clientId, native].sort());
      const revoked = await gw.as(memberToken)('POST', `/v1/oauth/bindings/${bindings.find((b: any) => b.client_id === native).id}/revoke`);
      expect(revoked.status).toBe(200);
      expect((await me(t2.body.access_token)).status).toBe(401);
    });

    it('honours a dashboard session already in the browser and follows it when it changes', async () => {
      const b = new Browser(gw.url);
      const login = await b.fetch('/v1/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: member.email, password: member.password }),
      });
      expect(login.status).toBe(200);
      const t = await authorizeBound(b);
      expect(decodeJwt(t.access_token).sub).toBe(agentId);
      // Signing out of the dashboard signs out of the authorization server too (as the dashboard
      // does it: same origin, JSON; a cookie request from anywhere else is refused).
      expect((await b.fetch('/v1/auth/logout', { method: 'POST', headers: { 'content-type': 'application/json', origin: new URL(gw.url).origin } })).status).toBe(204);
      const step = pageOf(await b.follow(authorizeUrl()));
      expect(step.url.pathname).toMatch(/^\/oauth\/signin\//);
    });

    it('refuses consent and sign-in posts without the interaction token', async () => {
      const b = new Browser(gw.url);
      const signIn = pageOf(await b.follow(authorizeUrl()));
      const forged = await b.fetch(signIn.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: member.email, password: member.password, csrf: 'forged' }).toString(),
      });
      expect(forged.status).toBe(403);
      const crossSite = await b.fetch(signIn.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
        body: new URLSearchParams({ email: member.email, password: member.password, csrf: csrfOf(signIn) }).toString(),
      });
      expect(crossSite.status).toBe(403);
      // Another browser (no interaction cookie) cannot use the page at all.
      const other = await fetch(signIn.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: member.email, password: member.password, csrf: csrfOf(signIn) }).toString(),
        redirect: 'manual',
      });
      expect(other.status).toBe(400);
      expect(forged.headers.get('x-frame-options')).toBe('DENY');
      // `Origin: null` (privacy settings, a no-referrer page) proves nothing: without the token it is
      // refused, with the interaction's token it goes through.
      const opaqueForged = await b.fetch(signIn.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'null' },
        body: new URLSearchParams({ email: member.email, password: member.password, csrf: 'forged' }).toString(),
      });
      expect(opaqueForged.status).toBe(403);
      const opaque = await b.fetch(signIn.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'null' },
        body: new URLSearchParams({ email: member.email, password: member.password, csrf: csrfOf(signIn) }).toString(),
      });
      expect(opaque.status).toBe(303);
      expect(forged.headers.get('referrer-policy')).toBe('same-origin');
    });

    it('refuses an authorization request without PKCE, or with the plain method', async () => {
      const noPkce = redirectOf(await browser.follow(authorizeUrl({ challenge: null })));
      expect(noPkce.searchParams.get('error')).toBe('invalid_request');
      expect(noPkce.searchParams.get('code')).toBeNull();
      const plain = redirectOf(await browser.follow(authorizeUrl({ challenge: null, extra: { code_challenge: pkce().challenge, code_challenge_method: 'plain' } })));
      expect(plain.searchParams.get('code')).toBeNull();
      expect(plain.searchParams.get('error')).toBeTruthy();
    });

    it('never redirects to an unregistered redirect_uri, and refuses a foreign resource', async () => {
      const res = await browser.fetch(authorizeUrl().replace(encodeURIComponent(REDIRECT_URI), encodeURIComponent('http://127.0.0.1:9/elsewhere')));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      const foreign = redirectOf(await browser.follow(authorizeUrl({ extra: { resource: 'https://other.example/api' } })));
      expect(foreign.searchParams.get('error')).toBe('invalid_target');
    });

    describe('refresh tokens', () => {
      it('rotate: each refresh token works once and yields a new pair', async () => {
        const t = await authorizeBound(browser);
        const r1 = await refresh(t.refresh_token);
        expect(r1.status).toBe(200);
        expect(r1.body.refresh_token).not.toBe(t.refresh_token);
        expect(decodeJwt(r1.body.access_token).sub).toBe(agentId);
        expect((await me(r1.body.access_token)).status).toBe(200);
        const r2 = await refresh(r1.body.refresh_token);
        expect(r2.status).toBe(200);
      });

      it('reusing a rotated refresh token revokes the whole chain', async () => {
        const t = await authorizeBound(browser);
        const rotated = await refresh(t.refresh_token);
        expect(rotated.status).toBe(200);
        expect((await me(rotated.body.access_token)).status).toBe(200);

        const reuse = await refresh(t.refresh_token);
        expect(reuse.status).toBe(400);
        expect(reuse.body.error).toBe('invalid_grant');
        // The newer refresh token and the access tokens of the grant stop working too.
        const newer = await refresh(rotated.body.refresh_token);
        expect(newer.status).toBe(400);
        expect(newer.body.error).toBe('invalid_grant');
        expect((await me(rotated.body.access_token)).status).toBe(401);
        expect((await me(t.access_token)).status).toBe(401);
        // The binding itself survives: the next authorization skips consent again.
        expect(decodeJwt((await authorizeBound(browser)).access_token).sub).toBe(agentId);
      });

      it('two concurrent uses of one refresh token: one wins, the replay revokes the chain', async () => {
        const t = await authorizeBound(browser);
        const [a, b] = await Promise.all([refresh(t.refresh_token), refresh(t.refresh_token)]);
        expect([a.status, b.status].sort()).toEqual([200, 400]);
        const winner = a.status === 200 ? a : b;
        expect((await refresh(winner.body.refresh_token)).status).toBe(400);
      });

      it('refuses a refresh token presented by another client', async () => {
        const t = await authorizeBound(browser);
        const other = (await register({ redirect_uris: [REDIRECT_URI], client_name: 'other' })).body.client_id;
        const res = await refresh(t.refresh_token, other);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_grant');
      });
    });

    describe('revocation (RFC 7009)', () => {
      it('revokes a refresh token, and with it the grant', async () => {
        const t = await authorizeBound(browser);
        const res = await form('/oauth/revoke', { token: t.refresh_token, token_type_hint: 'refresh_token', client_id: clientId });
        expect(res.status).toBe(200);
        expect((await refresh(t.refresh_token)).body.error).toBe('invalid_grant');
        expect((await me(t.access_token)).status).toBe(401);
      });

      it('revokes an access token at once, leaving its refresh token usable', async () => {
        const t = await authorizeBound(browser);
        expect((await me(t.access_token)).status).toBe(200);
        const res = await form('/oauth/revoke', { token: t.access_token, client_id: clientId });
        expect(res.status).toBe(200);
        expect((await me(t.access_token)).status).toBe(401);
        expect((await refresh(t.refresh_token)).status).toBe(200);
      });

      it("ignores another client's tokens and unknown tokens (200, no effect)", async () => {
        const t = await authorizeBound(browser);
        const other = (await register({ redirect_uris: [REDIRECT_URI], client_name: 'other' })).body.client_id;
        expect((await form('/oauth/revoke', { token: t.access_token, client_id: other })).status).toBe(200);
        expect((await form('/oauth/revoke', { token: t.refresh_token, client_id: other })).status).toBe(200);
        expect((await form('/oauth/revoke', { token: 'nonsense', client_id: clientId })).status).toBe(200);
        expect((await me(t.access_token)).status).toBe(200);
        expect((await refresh(t.refresh_token)).status).toBe(200);
      });
    });

    describe('which tokens are accepted where', () => {
      let signingKey: { kid: string; key: Awaited<ReturnType<typeof importJWK>> };
      let good: Record<string, unknown>;

      beforeAll(async () => {
        const row = await gw.pool.one(sql.type(z.object({ id: z.string(), envelope: z.unknown() }))`
          SELECT id, envelope FROM oauth_keys WHERE use = 'sig' AND retired_at IS NULL ORDER BY created_at DESC LIMIT 1`);
        const keyring = createVaultKeyring(gw.config.masterKey!);
        const jwk = JSON.parse(keyring.decrypt(envelopeSchema.parse(row.envelope), keyAad(row.id)).toString('utf8')) as JWK;
        signingKey = { kid: row.id, key: await importJWK(jwk, 'RS256') };
        good = decodeJwt((await authorizeBound(browser)).access_token);
      });

      const sign = (claims: Record<string, unknown>, key = signingKey.key, kid = signingKey.kid) =>
        new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid }).sign(key);

      it('accepts a token signed with the persisted key for the right audience (control)', async () => {
        const now = Math.floor(Date.now() / 1000);
        expect((await me(await sign({ ...good, iat: now, exp: now + 60 }))).status).toBe(200);
      });

      it('refuses a token for another audience, even signed with the right key', async () => {
        const now = Math.floor(Date.now() / 1000);
        expect((await me(await sign({ ...good, aud: 'https://other.example/api', iat: now, exp: now + 60 }))).status).toBe(401);
        expect((await me(await sign({ ...good, aud: gw.url, iat: now, exp: now + 60 }))).status).toBe(401);
      });

      it('refuses an expired token, another issuer, and a token signed by another key', async () => {
        const now = Math.floor(Date.now() / 1000);
        expect((await me(await sign({ ...good, iat: now - 700, exp: now - 100 }))).status).toBe(401);
        expect((await me(await sign({ ...good, iss: 'https://evil.example', iat: now, exp: now + 60 }))).status).toBe(401);
        const foreign = await generateKeyPair('RS256', { extractable: true });
        const posingAsOurs = await me(await sign({ ...good, iat: now, exp: now + 60 }, foreign.privateKey));
        expect(posingAsOurs.status).toBe(401);
        expect(posingAsOurs.body.error.code).toBe('unauthenticated');
        const foreignKid = await calculateJwkThumbprint(await exportJWK(foreign.publicKey));
        expect((await me(await sign({ ...good, iat: now, exp: now + 60 }, foreign.privateKey, foreignKid))).status).toBe(401);
      });

      it('keeps dashboard sessions and access tokens apart', async () => {
        const auth = createAuthService({
          pool: gw.pool,
          identities: createIdentityReader(gw.pool),
          verifyAccessToken: createAccessTokenVerifier({ pool: gw.pool, publicUrl: gw.url }).verify,
        });
        const at = (await authorizeBound(browser)).access_token;
        await expect(auth.authenticate(memberToken, { session: false, agentKey: true, oauth: true })).rejects.toMatchObject({ code: 'unauthenticated' });
        await expect(auth.authenticate(at, { session: true, agentKey: false, oauth: false })).rejects.toMatchObject({ code: 'unauthenticated' });
        await expect(auth.authenticate(at, { session: false, agentKey: true, oauth: true })).resolves.toMatchObject({ principal: { type: 'agent', identityId: agentId, via: 'oauth', credentialId: clientId } });
        // The access token cannot sign the user out or act as the dashboard.
        expect((await gw.as(at)('POST', '/v1/auth/logout')).status).toBe(403);
      });
    });

    describe('bindings', () => {
      let bindingId: string;

      it('lists the caller its own bindings', async () => {
        const res = await gw.as(memberToken)('GET', '/v1/oauth/bindings');
        expect(res.status).toBe(200);
        expect(res.body.bindings).toEqual([
          expect.objectContaining({ client_id: clientId, client_name: CLIENT_NAME, agent_id: agentId, self_approve_enabled: false, revoked_at: null }),
        ]);
        bindingId = res.body.bindings[0].id;
        const adminView = await gw.as(gw.adminToken)('GET', '/v1/oauth/bindings');
        expect(adminView.body.bindings).toEqual([]);
        const t = await authorizeBound(browser);
        const agentView = await gw.as(t.access_token)('GET', '/v1/oauth/bindings');
        expect(agentView.body.bindings.map((b: any) => b.id)).toEqual([bindingId]);
      });

      it('lets only the human toggle self-approval, re-read on every check', async () => {
        expect(await isSelfApproveEnabled(gw.pool, { userId: member.userId, clientId })).toBe(false);
        const on = await gw.as(memberToken)('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: true });
        expect(on.status).toBe(200);
        expect(on.body.self_approve_enabled).toBe(true);
        expect(await isSelfApproveEnabled(gw.pool, { userId: member.userId, clientId })).toBe(true);
        expect(await isSelfApproveEnabled(gw.pool, { userId: member.userId, clientId, agentId })).toBe(true);

        const t = await authorizeBound(browser);
        const byAgent = await gw.as(t.access_token)('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: false });
        expect(byAgent.status).toBe(403);
        const byAdmin = await gw.as(gw.adminToken)('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: false });
        expect(byAdmin.status).toBe(404);
        expect((await gw.as(memberToken)('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: 'yes' })).status).toBe(400);

        const off = await gw.as(memberToken)('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: false });
        expect(off.body.self_approve_enabled).toBe(false);
        expect(await isSelfApproveEnabled(gw.pool, { userId: member.userId, clientId })).toBe(false);
      });

      it('archiving the bound agent unbinds the pair: its tokens stop, and consent comes back', async () => {
        const t = await authorizeBound(browser);
        const archived = await gw.as(memberToken)('POST', `/v1/identities/${agentId}/archive`);
        expect(archived.status).toBe(200);
        expect((await me(t.access_token)).status).toBe(401);
        expect((await refresh(t.refresh_token)).body.error).toBe('invalid_grant');

        const { verifier, challenge } = pkce();
        const consent = pageOf(await browser.follow(authorizeUrl({ challenge })));
        expect(consent.url.pathname).toMatch(/^\/oauth\/consent\//);
        expect(consent.html).not.toContain(agentId); // archived agents cannot be picked
        const back = redirectOf(await browser.submit(consent, { decision: 'allow', agent: 'new', name: 'Second agent' }));
        const res = await exchange(back.searchParams.get('code')!, verifier);
        const newAgent = decodeJwt(res.body.access_token).sub!;
        expect(newAgent).not.toBe(agentId);
        expect((await me(res.body.access_token)).body.identity).toMatchObject({ id: newAgent, name: 'Second agent' });
        agentId = newAgent;

        const list = (await gw.as(memberToken)('GET', '/v1/oauth/bindings?include_revoked=true')).body.bindings.filter((b: any) => b.client_id === clientId);
        expect(list.map((b: any) => [b.agent_id === agentId, b.revoked_at === null])).toEqual([
          [false, false],
          [true, true],
        ]);
        expect(list[0].agent).toMatchObject({ status: 'archived' });
        bindingId = list[1].id;
      });

      it('revoking a binding stops its tokens; the next authorization can pick an existing agent', async () => {
        const t = await authorizeBound(browser);
        const res = await gw.as(memberToken)('POST', `/v1/oauth/bindings/${bindingId}/revoke`);
        expect(res.status).toBe(200);
        expect(res.body.revoked_at).not.toBeNull();
        expect((await me(t.access_token)).status).toBe(401);
        expect((await refresh(t.refresh_token)).body.error).toBe('invalid_grant');

        const { verifier, challenge } = pkce();
        const consent = pageOf(await browser.follow(authorizeUrl({ challenge })));
        expect(consent.html).toContain(`value="${agentId}"`);
        const back = redirectOf(await browser.submit(consent, { decision: 'allow', agent: agentId }));
        const tokens = (await exchange(back.searchParams.get('code')!, verifier)).body;
        expect(decodeJwt(tokens.access_token).sub).toBe(agentId);
      });

      it('denying consent sends the client access_denied', async () => {
        const otherClient = (await register({ redirect_uris: [REDIRECT_URI], client_name: 'Denied client' })).body.client_id;
        const consent = pageOf(await browser.follow(authorizeUrl({ client: otherClient })));
        const back = redirectOf(await browser.submit(consent, { decision: 'deny' }));
        expect(back.searchParams.get('error')).toBe('access_denied');
        expect(back.searchParams.get('code')).toBeNull();
      });
    });

    describe('admin client management', () => {
      it('lists the clients bound by the org, to admins only', async () => {
        expect((await gw.as(memberToken)('GET', '/v1/oauth/clients')).status).toBe(403);
        const res = await gw.as(gw.adminToken)('GET', '/v1/oauth/clients');
        expect(res.status).toBe(200);
        const mine = res.body.clients.find((c: any) => c.client_id === clientId);
        expect(mine).toMatchObject({
          client_name: CLIENT_NAME,
          software_id: 'test-mcp-client',
          redirect_uris: [REDIRECT_URI],
          live_bindings: 1,
          revoked: false,
        });
        expect(Date.parse(mine.created_at)).toBeGreaterThan(0);
      });

      it('revoking a client stops its tokens at once and blocks new authorizations in the org', async () => {
        const t = await authorizeBound(browser);
        expect((await me(t.access_token)).status).toBe(200);
        expect((await gw.as(memberToken)('POST', `/v1/oauth/clients/${clientId}/revoke`)).status).toBe(403);
        const res = await gw.as(gw.adminToken)('POST', `/v1/oauth/clients/${clientId}/revoke`);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ client_id: clientId, revoked: true, revoked_bindings: 1 });
        expect((await me(t.access_token)).status).toBe(401);
        expect((await refresh(t.refresh_token)).body.error).toBe('invalid_grant');
        const again = redirectOf(await browser.follow(authorizeUrl()));
        expect(again.searchParams.get('error')).toBe('access_denied');
        const listed = (await gw.as(gw.adminToken)('GET', '/v1/oauth/clients')).body.clients.find((c: any) => c.client_id === clientId);
        expect(listed).toMatchObject({ revoked: true, live_bindings: 0 });
        expect((await gw.as(gw.adminToken)('POST', '/v1/oauth/clients/no-such-client/revoke')).status).toBe(404);
      });

      it('a revocation in one org leaves other orgs alone', async () => {
        const outsider = await seedUser(gw.databaseUrl, { email: 'oauth-outsider@example.test' });
        const b = new Browser(gw.url);
        const { verifier, challenge } = pkce();
        const signIn = pageOf(await b.follow(authorizeUrl({ challenge })));
        const consent = pageOf(await b.submit(signIn, { email: outsider.email, password: outsider.password }));
        const back = redirectOf(await b.submit(consent, { decision: 'allow', agent: 'new', name: 'outsider agent' }));
        const tokens = (await exchange(back.searchParams.get('code')!, verifier)).body;
        const res = await me(tokens.access_token);
        expect(res.status).toBe(200);
        expect(res.body.org.id).toBe(outsider.orgId);
      });
    });
  });

  describe('two replicas on one database, and key rotation', () => {
    let replica: TestGateway;
    let replicaClient: string;

    beforeAll(async () => {
      // A second process of the same deployment: same database, master key and public URL.
      replica = await startTestGateway({
        databaseUrl: gw.databaseUrl,
        env: { PUBLIC_URL: gw.url, GATEWAY_MASTER_KEY: gw.config.masterKey!.toString('base64') },
      });
      replicaClient = (await register({ redirect_uris: [REDIRECT_URI], client_name: 'Replica client' })).body.client_id;
    });
    afterAll(async () => {
      await replica?.stop();
    });

    it('an authorization started on one replica finishes on the other', async () => {
      const one = new Browser(gw.url);
      const { verifier, challenge } = pkce();
      const signIn = pageOf(await one.follow(authorizeUrl({ client: replicaClient, challenge })));
      // The sign-in and consent forms are posted to the replica (their interaction lives in the
      // database, their cookies are signed with the shared keys); redirects may land on either.
      const two = one.at(replica.url);
      const consent = pageOf(await two.submit(signIn, { email: member.email, password: member.password }));
      expect(consent.url.pathname).toMatch(/^\/oauth\/consent\//);
      const back = redirectOf(await two.submit(consent, { decision: 'allow', agent: 'new', name: 'Replica agent' }));
      const res = await exchange(back.searchParams.get('code')!, verifier, replicaClient);
      expect(res.status).toBe(200);
      expect((await me(res.body.access_token)).status).toBe(200);
      expect((await replica.as(res.body.access_token)('GET', '/v1/identities/me')).status).toBe(200);
    });

    it('after a rotation, a restarted replica signs with the new key and both verify both', async () => {
      const oldToken = (await authorizeBound(await signedIn(gw.url), replicaClient)).access_token;
      const oldKid = decodeProtectedHeader(oldToken).kid;

      const { kid: newKid } = await rotateOAuthKeys(gw.pool, createVaultKeyring(gw.config.masterKey!));
      expect(newKid).not.toBe(oldKid);
      const restarted = await startTestGateway({
        databaseUrl: gw.databaseUrl,
        env: { PUBLIC_URL: gw.url, GATEWAY_MASTER_KEY: gw.config.masterKey!.toString('base64') },
      });
      try {
        const jwks = (await restarted.request('GET', '/oauth/jwks')).body.keys;
        expect(jwks[0]).toMatchObject({ kid: newKid });
        expect(jwks[0].key_ops).toBeUndefined();
        expect(jwks.find((k: any) => k.kid === oldKid)).toMatchObject({ key_ops: ['verify'] });

        const b = await signedIn(restarted.url);
        const newToken = (await authorizeBound(b, replicaClient, restarted.url)).access_token;
        expect(decodeProtectedHeader(newToken).kid).toBe(newKid);
        // The running replica has never seen the new key: it loads it on first sight.
        expect((await me(newToken)).status).toBe(200);
        expect((await restarted.as(oldToken)('GET', '/v1/identities/me')).status).toBe(200);
      } finally {
        await restarted.stop();
      }
    });

    async function signedIn(origin: string): Promise<Browser> {
      const b = new Browser(origin);
      const res = await b.fetch('/v1/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: member.email, password: member.password }),
      });
      expect(res.status).toBe(200);
      return b;
    }

  });

  it('never logs a token, a code or a password, and logged no OAuth errors', () => {
    const logs = gw.logs.join('\n');
    expect(logs).not.toContain(member.password);
    expect(logs).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}/); // no JWT
    expect(logs).not.toMatch(/[?&]code=/);
    expect(logs).not.toContain('OAuth server error');
    expect(logs).not.toContain('OAuth interaction failed');
  });

  it('keeps every piece of OAuth state in PostgreSQL', async () => {
    const counts = await gw.pool.any(sql.type(z.object({ type: z.string(), n: z.number() }))`
      SELECT type, count(*)::int AS n FROM oidc_payloads GROUP BY type ORDER BY type`);
    const types = counts.map((c) => c.type);
    for (const t of ['Client', 'Grant', 'Session', 'RefreshToken', 'AuthorizationCode']) expect(types).toContain(t);
  });
});
