// OAuth connections against a real OAuth 2 / OpenID provider (node-oidc-provider) on loopback:
// authorization code + PKCE driven headlessly over HTTP, encrypted token storage, refresh, single-
// flight refresh under a PostgreSQL row lock (one process and two gateways on one database),
// invalid_grant → reauth_required, and the REST surface's authorization rules.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnectionService, type ConnectionService } from '../../server/connections/service.ts';
import { AppError } from '../../server/errors.ts';
import { createVaultKeyring } from '../../server/vault/keyring.ts';
import { createVaultService } from '../../server/vault/service.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { authorizeAtProvider, count, startOAuthProvider, type TestProvider } from '../support/oauth-provider.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const ACCESS_TOKEN_TTL_S = 6;
const REFRESH_CHILD = path.resolve(import.meta.dirname, '..', 'support', 'refresh-child.ts');

// --- the tests -----------------------------------------------------------------------------------

const connectionText = z.object({ t: z.string() });

describe('OAuth connections (real provider on loopback, real PostgreSQL)', () => {
  const masterKey = randomBytes(32);
  let gw: TestGateway;
  let gwB: TestGateway;
  let op: TestProvider;
  let admin: ReturnType<TestGateway['as']>;
  let svcA: ConnectionService;
  let svcB: ConnectionService;
  let orgId: string;
  let callbackPrefix: string;

  /** The test gateway listens on a random port behind a fixed PUBLIC_URL: map it, as a reverse proxy would. */
  const viaGateway = (target: TestGateway, publicCallbackUrl: string) => target.url + publicCallbackUrl.slice(target.config.publicUrl.length);

  const serviceFor = (g: TestGateway) => {
    const keyring = createVaultKeyring(masterKey);
    return createConnectionService({
      pool: g.pool,
      keyring,
      vault: createVaultService({ pool: g.pool, keyring }),
      publicUrl: g.config.publicUrl,
      logger: g.logger,
    });
  };

  const rowText = async (id: string) =>
    (await gw.pool.one(sql.type(connectionText)`SELECT row_to_json(c)::text AS t FROM connections c WHERE id = ${id}`)).t;

  async function connect(body: Record<string, unknown>, account = 'alice') {
    const created = await admin('POST', '/v1/connections', body);
    expect(created.status).toBe(201);
    const callback = await authorizeAtProvider(created.body.auth_url, account, callbackPrefix);
    const done = await gw.request('GET', viaGateway(gw, callback).slice(gw.url.length), { headers: { accept: 'text/html' } });
    return { created, callback, done, id: created.body.connection.id as string };
  }

  const expireNow = (id: string) =>
    gw.pool.query(sql.unsafe`UPDATE connections SET token_expires_at = now() - interval '1 second' WHERE id = ${id}`);

  async function appError(p: Promise<unknown>): Promise<AppError> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }

  beforeAll(async () => {
    // The provider runs on loopback: raw HTTP through a connection may reach it.
    const env = { GATEWAY_MASTER_KEY: masterKey.toString('base64'), OUTBOUND_ALLOWLIST: '127.0.0.1,localhost' };
    gw = await startTestGateway({ env });
    gwB = await startTestGateway({ env, databaseUrl: gw.databaseUrl });
    callbackPrefix = `${gw.config.publicUrl}/v1/connections/callback`;
    op = await startOAuthProvider(callbackPrefix, ACCESS_TOKEN_TTL_S);
    admin = gw.as(gw.adminToken);
    orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    svcA = serviceFor(gw);
    svcB = serviceFor(gwB);
  });
  afterAll(async () => {
    await gwB?.stop();
    await gw?.stop();
    await op?.stop();
  });

  const appBody = () => ({
    client_id: op.clientId,
    client_secret: op.clientSecret,
    authorization_url: `${op.issuer}/auth`,
    token_url: `${op.issuer}/token`,
    revocation_url: `${op.issuer}/token/revocation`,
    userinfo_url: `${op.issuer}/me`,
  });

  describe('OAuth apps', () => {
    it('validate the body strictly', async () => {
      const notUrl = await admin('PUT', '/v1/oauth-apps/acme', { ...appBody(), token_url: 'ftp://example.test/token' });
      expect(notUrl.status).toBe(400);
      expect(notUrl.body.error.code).toBe('invalid_request');
      expect((await admin('PUT', '/v1/oauth-apps/acme', { ...appBody(), token_url: '/token' })).status).toBe(400);
      expect((await admin('PUT', '/v1/oauth-apps/acme', { ...appBody(), extra: true })).status).toBe(400);
      expect((await admin('PUT', '/v1/oauth-apps/Not%20A%20Provider', appBody())).status).toBe(400);
      const { client_secret: _s, ...noSecret } = appBody();
      const missing = await admin('PUT', '/v1/oauth-apps/acme', noSecret);
      expect(missing.status).toBe(400);
      expect(missing.body.error.details.field).toBe('client_secret');
    });

    it('are configured by org admins only, and never show the secret', async () => {
      const created = await admin('PUT', '/v1/oauth-apps/acme', appBody());
      expect(created.status).toBe(201);
      expect(created.body.oauth_app).toMatchObject({ provider: 'acme', client_id: op.clientId, token_endpoint_auth_method: 'client_secret_basic', use_pkce: true });
      const updated = await admin('PUT', '/v1/oauth-apps/acme', appBody());
      expect(updated.status).toBe(200);
      const post = await admin('PUT', '/v1/oauth-apps/acme-post', {
        ...appBody(),
        client_id: op.postClientId,
        token_endpoint_auth_method: 'client_secret_post',
        use_pkce: false,
      });
      expect(post.status).toBe(201);

      const list = await admin('GET', '/v1/oauth-apps');
      expect(list.status).toBe(200);
      expect(list.body.oauth_apps.map((a: any) => a.provider)).toEqual(['acme', 'acme-post']);
      expect(list.text).not.toContain(op.clientSecret);
      expect(gw.logs.join('\n')).not.toContain(op.clientSecret);

      const member = await seedUser(gw.databaseUrl, { orgId, email: 'apps-member@example.test' });
      const memberToken = await gw.login(member.email, member.password);
      expect((await gw.as(memberToken)('PUT', '/v1/oauth-apps/acme', appBody())).status).toBe(403);
      expect((await gw.as(memberToken)('GET', '/v1/oauth-apps')).status).toBe(200);
    });
  });

  describe('authorization-code flow', () => {
    let id: string;
    let callback: string;

    it('starts pending with an auth_url carrying state and an S256 PKCE challenge', async () => {
      const started = await admin('POST', '/v1/connections', { provider: 'acme', name: 'acme-main', scopes: ['openid', 'profile', 'email', 'offline_access'] });
      expect(started.status).toBe(201);
      expect(started.body.connection).toMatchObject({ name: 'acme-main', provider: 'acme', status: 'pending', requested_scopes: ['openid', 'profile', 'email', 'offline_access'] });
      const url = new URL(started.body.auth_url);
      expect(url.origin + url.pathname).toBe(`${op.issuer}/auth`);
      expect(Object.fromEntries(url.searchParams)).toMatchObject({
        response_type: 'code',
        client_id: op.clientId,
        redirect_uri: callbackPrefix,
        scope: 'openid profile email offline_access',
        code_challenge_method: 'S256',
      });
      expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // Neither the state nor the verifier is stored in clear.
      expect(await rowText(started.body.connection.id)).not.toContain(url.searchParams.get('state'));
      id = started.body.connection.id;

      callback = await authorizeAtProvider(started.body.auth_url, 'alice', callbackPrefix);
      const done = await gw.request('GET', viaGateway(gw, callback).slice(gw.url.length), { headers: { accept: 'text/html' } });
      expect(done.status).toBe(200);
      expect(done.headers.get('content-type')).toMatch(/text\/html/);
      expect(done.text).toContain('you can close this window');
      expect(done.headers.get('cache-control')).toBe('no-store');
    });

    it('stores the tokens encrypted, with granted scopes and the account identity', async () => {
      const res = await admin('GET', `/v1/connections/${id}`);
      expect(res.status).toBe(200);
      const c = res.body.connection;
      expect(c).toMatchObject({ id, status: 'active', account_id: 'alice', account_name: 'alice@example.test', refresh_count: 0, last_error: null });
      // The provider's answer decides: offline_access is dropped without prompt=consent.
      expect([...c.granted_scopes].sort()).toEqual(['email', 'openid', 'profile']);
      expect(Date.parse(c.token_expires_at) - Date.now()).toBeLessThanOrEqual(ACCESS_TOKEN_TTL_S * 1000);
      for (const k of ['access_token', 'refresh_token', 'pkce_verifier', 'state_hash']) expect(c).not.toHaveProperty(k);

      const first = op.issued.at(-1)!;
      expect(first.grantType).toBe('authorization_code');
      expect(first.refreshToken).toBeTruthy();
      const text = await rowText(id);
      expect(text).not.toContain(first.accessToken);
      expect(text).not.toContain(first.refreshToken);
      expect(text).toContain('"ciphertext"');
      const logs = gw.logs.join('\n');
      expect(logs).not.toContain(first.accessToken);
      expect(logs).not.toContain(first.refreshToken);
    });

    it('refuses a reused state', async () => {
      const again = await gw.request('GET', viaGateway(gw, callback).slice(gw.url.length));
      expect(again.status).toBe(400);
      expect(again.body.error.code).toBe('invalid_request');
      const html = await gw.request('GET', viaGateway(gw, callback).slice(gw.url.length), { headers: { accept: 'text/html' } });
      expect(html.status).toBe(400);
      expect(html.text).toContain('Connection failed');
      expect((await gw.request('GET', '/v1/connections/callback?state=short&code=x')).status).toBe(400);
      expect((await gw.request('GET', '/v1/connections/callback')).status).toBe(400);
      expect((await admin('GET', `/v1/connections/${id}`)).body.connection.status).toBe('active');
    });

    it('hands the fresh token out as is, then refreshes it once it nears expiry', async () => {
      const refreshesBefore = count(op.success, 'refresh_token');
      const fresh = await svcA.getFreshAccessToken(id);
      expect(fresh).toMatchObject({ connectionId: id, accessToken: op.issued.at(-1)!.accessToken });
      expect(fresh.grantedScopes.sort()).toEqual(['email', 'openid', 'profile']);
      expect(count(op.success, 'refresh_token')).toBe(refreshesBefore);

      // Lifetime 6 s → refreshed within the last 3 s (half the lifetime caps the 60 s margin).
      await new Promise((r) => setTimeout(r, (ACCESS_TOKEN_TTL_S / 2) * 1000 + 300));
      const renewed = await svcA.getFreshAccessToken({ orgId, name: 'acme-main' });
      expect(renewed.accessToken).not.toBe(fresh.accessToken);
      expect(count(op.success, 'refresh_token')).toBe(refreshesBefore + 1);
      expect(renewed.accessToken).toBe(op.issued.at(-1)!.accessToken);
      // The new token works at the provider.
      const me = await fetch(`${op.issuer}/me`, { headers: { authorization: `Bearer ${renewed.accessToken}` } });
      expect(me.status).toBe(200);
      const c = (await admin('GET', `/v1/connections/${id}`)).body.connection;
      expect(c.refresh_count).toBe(1);
      expect(c.last_refreshed_at).not.toBeNull();
      expect(await rowText(id)).not.toContain(op.issued.at(-1)!.refreshToken);
    });

    it('20 concurrent callers on an expiring token cause exactly one refresh at the provider', async () => {
      await expireNow(id);
      const before = { ok: count(op.success, 'refresh_token'), err: count(op.errors, 'refresh_token'), hits: count(op.hits, 'POST /token') };
      const countBefore = (await admin('GET', `/v1/connections/${id}`)).body.connection.refresh_count;
      const results = await Promise.all(Array.from({ length: 20 }, () => svcA.getFreshAccessToken(id)));
      expect(count(op.hits, 'POST /token')).toBe(before.hits + 1);
      expect(count(op.success, 'refresh_token')).toBe(before.ok + 1);
      expect(count(op.errors, 'refresh_token')).toBe(before.err);
      expect(new Set(results.map((r) => r.accessToken)).size).toBe(1);
      expect(results[0]!.accessToken).toBe(op.issued.at(-1)!.accessToken);
      expect((await admin('GET', `/v1/connections/${id}`)).body.connection.refresh_count).toBe(countBefore + 1);
    });

    it('… and so do 10 callers on gateway A plus 10 on gateway B sharing the database', async () => {
      await expireNow(id);
      const before = { hits: count(op.hits, 'POST /token'), ok: count(op.success, 'refresh_token'), err: count(op.errors, 'refresh_token') };
      const calls = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? svcA : svcB).getFreshAccessToken(id));
      const results = await Promise.all(calls);
      expect(count(op.hits, 'POST /token')).toBe(before.hits + 1);
      expect(count(op.success, 'refresh_token')).toBe(before.ok + 1);
      expect(count(op.errors, 'refresh_token')).toBe(before.err);
      expect(new Set(results.map((r) => r.accessToken)).size).toBe(1);
      // Gateway B serves the same connection over REST, and a forced refresh there rotates again.
      const adminB = gwB.as(gwB.adminToken);
      const forced = await adminB('POST', `/v1/connections/${id}/refresh`);
      expect(forced.status).toBe(200);
      expect(forced.body.connection.refresh_count).toBe((await admin('GET', `/v1/connections/${id}`)).body.connection.refresh_count);
      expect(count(op.success, 'refresh_token')).toBe(before.ok + 2);
      expect((await svcA.getFreshAccessToken(id)).accessToken).toBe(op.issued.at(-1)!.accessToken);
    });

    it('lets POST /v1/actions/http use the connection\'s token (by id or name), never showing it', async () => {
      const c = (await admin('GET', `/v1/connections/${id}`)).body.connection;
      for (const ref of [id, c.name]) {
        const res = await admin('POST', '/v1/actions/http', { connection: ref, method: 'GET', url: `${op.issuer}/me` });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
        expect(JSON.stringify(res.body)).not.toContain(op.issued.at(-1)!.accessToken);
      }
      expect((await admin('POST', '/v1/actions/http', { connection: 'no-such-connection', method: 'GET', url: `${op.issuer}/me` })).status).toBe(404);
      expect((await admin('POST', '/v1/actions/http', { connection: id, method: 'GET', url: 'not a url' })).status).toBe(400);
    });

    it('sends a connection token only to its provider’s hosts; any other host needs the connection named in what is permitted', async () => {
      const c = (await admin('GET', `/v1/connections/${id}`)).body.connection;
      const elsewhere = await startUpstream();
      try {
        const made = await admin('POST', '/v1/identities/agents', { name: 'conn-exfil' });
        const agent = gw.as(made.body.key.token);
        // Every raw HTTP call is covered for this agent: the connection key is what stops it.
        expect((await admin('POST', `/v1/identities/${made.body.identity.id}/rules`, { effect: 'allow', pattern: 'http:*:*' })).status).toBe(201);
        const host = new URL(elsewhere.url).host;
        const res = await agent('POST', '/v1/actions/http', { connection: c.name, method: 'GET', url: `${elsewhere.url}/steal` });
        expect(res.status, res.text).toBe(202);
        expect(res.body.permission_keys).toEqual([`http:GET:${host}/steal`, `connection:${c.name}:${host}`]);
        expect(res.body.action_description).toContain(`with the acme token of connection ${c.name}`);
        expect(elsewhere.requests).toHaveLength(0);
        // An approver may narrow it (issue 31) and the token stays the connection's: the edited
        // request goes out once, with the connection's token, under the same keys.
        const allowed = await admin('POST', `/v1/approvals/${res.body.approval_id}/resolve`, {
          decision: 'allow_once',
          request: { url: `${elsewhere.url}/steal?limit=1`, headers: { 'X-Trace': 'approver' } },
        });
        expect(allowed.status, allowed.text).toBe(200);
        expect(allowed.body).toMatchObject({ modified_by_approver: true, edited_permission_keys: res.body.permission_keys });
        await until(async () => elsewhere.requests.length, (n) => n >= 1);
        expect(elsewhere.requests).toHaveLength(1);
        expect(elsewhere.requests[0]).toMatchObject({ method: 'GET', url: '/steal?limit=1' });
        expect(elsewhere.requests[0]!.headers['x-trace']).toBe('approver');
        expect(op.issued.map((t) => `Bearer ${t.accessToken}`)).toContain(elsewhere.requests[0]!.headers.authorization);
        // Another host with the same token is wider than what was asked: refused, nothing sent.
        const again = await agent('POST', '/v1/actions/http', { connection: c.name, method: 'GET', url: `${elsewhere.url}/steal` });
        expect(again.status, again.text).toBe(202);
        const wider = await admin('POST', `/v1/approvals/${again.body.approval_id}/resolve`, { decision: 'allow_once', request: { url: `http://localhost:${elsewhere.port}/steal` } });
        expect(wider.status, wider.text).toBe(422);
        expect(wider.body.error.code).toBe('edit_widens_request');
        expect((await admin('POST', `/v1/approvals/${again.body.approval_id}/resolve`, { decision: 'deny', reason: 'test' })).status).toBe(200);
        expect(elsewhere.requests).toHaveLength(1);
        // Its provider's own host (the server of an org template that signs in with acme) is covered as usual.
        const doc = {
          openapi: '3.1.0',
          info: { title: 'Acme API', key: 'acme-api', version: '1' },
          servers: [{ url: op.issuer }],
          components: { securitySchemes: { acme: { type: 'oauth2', provider: 'acme', flows: { authorizationCode: { authorizationUrl: `${op.issuer}/authorize`, tokenUrl: `${op.issuer}/token`, scopes: {} } } } } },
          paths: {},
        };
        expect((await admin('POST', '/v1/templates', { scope: 'org', document: doc })).status).toBe(201);
        const own = await agent('POST', '/v1/actions/http', { connection: c.name, method: 'GET', url: `${op.issuer}/me` });
        expect(own.body.status, own.text).toBe('called');
        // A person may not send another person's token off its provider's hosts.
        const other = await seedUser(gw.databaseUrl, { orgId: (await admin('GET', '/v1/identities/me')).body.org.id, email: 'conn-other-admin@example.test', role: 'admin' });
        const otherAdmin = gw.as(await gw.login(other.email, other.password));
        // (The provider's host is 127.0.0.1 now; localhost is another host on the same machine.)
        const refused = await otherAdmin('POST', '/v1/actions/http', { connection: c.id, method: 'GET', url: `http://localhost:${elsewhere.port}/steal` });
        expect(refused.status, refused.text).toBe(403);
        expect(elsewhere.requests).toHaveLength(1);
      } finally {
        await elsewhere.close();
      }
    });

    it('authenticates with client_secret_post and without PKCE when the app says so', async () => {
      const { done, id: postId } = await connect({ provider: 'acme-post', scopes: ['openid', 'email'] }, 'bob');
      expect(done.status).toBe(200);
      const c = (await admin('GET', `/v1/connections/${postId}`)).body.connection;
      expect(c).toMatchObject({ name: 'acme-post', status: 'active', account_id: 'bob', account_name: 'bob@example.test' });
      await expireNow(postId);
      const t = await svcA.getFreshAccessToken(postId, { requiredScopes: ['email'] });
      expect(t.accessToken).toBe(op.issued.at(-1)!.accessToken);
      const missing = await appError(svcA.getFreshAccessToken(postId, { requiredScopes: ['profile'] }));
      expect(missing.code).toBe('missing_scopes');
      expect(missing.details).toMatchObject({ connection_id: postId, missing_scopes: ['profile'] });
      // The auth_url asks for the union of held and missing scopes; granting it fixes the call.
      const upgrade = new URL(String(missing.details!.auth_url));
      expect(upgrade.searchParams.get('scope')!.split(' ').sort()).toEqual(['email', 'openid', 'profile']);
      expect((await admin('GET', `/v1/connections/${postId}`)).body.connection.status).toBe('active');
      const upgradeCallback = await authorizeAtProvider(upgrade.toString(), 'bob', callbackPrefix);
      const upgradeDone = await gw.request('GET', viaGateway(gw, upgradeCallback).slice(gw.url.length), { headers: { accept: 'text/html' } });
      expect(upgradeDone.status).toBe(200);
      const upgraded = await svcA.getFreshAccessToken(postId, { requiredScopes: ['profile'] });
      expect(upgraded.grantedScopes).toContain('profile');
    });

    it('… and so do 10 callers here plus 10 in a second OS process sharing the database', async () => {
      await expireNow(id);
      const before = { hits: count(op.hits, 'POST /token'), ok: count(op.success, 'refresh_token') };
      const child = spawn(process.execPath, [REFRESH_CHILD, gw.databaseUrl, masterKey.toString('base64'), id, gw.config.publicUrl, '10'], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const lines: string[] = [];
      let buffer = '';
      const lineArrived = () =>
        new Promise<string>((resolve) => {
          const check = () => (lines.length ? resolve(lines.shift()!) : setTimeout(check, 10));
          check();
        });
      child.stdout!.on('data', (c: Buffer) => {
        buffer += c.toString();
        let i;
        while ((i = buffer.indexOf('\n')) >= 0) {
          lines.push(buffer.slice(0, i));
          buffer = buffer.slice(i + 1);
        }
      });
      expect(await lineArrived()).toBe('ready');
      child.stdin!.write('go\n');
      const [here, there] = await Promise.all([
        Promise.all(Array.from({ length: 10 }, () => svcA.getFreshAccessToken(id))),
        lineArrived().then((l) => JSON.parse(l) as string[]),
      ]);
      expect(there).toHaveLength(10);
      expect(count(op.hits, 'POST /token')).toBe(before.hits + 1);
      expect(count(op.success, 'refresh_token')).toBe(before.ok + 1);
      expect(new Set([...here.map((r) => r.accessToken), ...there]).size).toBe(1);
    });

    it('marks the connection reauth_required when the provider answers invalid_grant, and re-authorizes', async () => {
      // The first code exchange of this run was acme-main's.
      const grantId = op.issued.find((x) => x.grantType === 'authorization_code')?.grantId;
      expect(grantId).toBeTruthy();
      // The user revokes the app at the provider: the whole grant goes.
      await (await op.provider.Grant.find(grantId!))!.destroy();
      await expireNow(id);
      const err = await appError(svcA.getFreshAccessToken(id));
      expect(err.code).toBe('reauth_required');
      expect(err.status).toBe(401);
      expect(err.details).toMatchObject({ connection_id: id });
      const authUrl = String(err.details!.auth_url);
      expect(authUrl).toContain(`${op.issuer}/auth?`);
      const c = (await admin('GET', `/v1/connections/${id}`)).body.connection;
      expect(c.status).toBe('reauth_required');
      expect(c.last_error).toMatch(/invalid_grant/);
      // Later callers get the same error, and the same still-valid auth_url, without calling the provider.
      const hits = count(op.hits, 'POST /token');
      const again = await appError(svcB.getFreshAccessToken(id));
      expect(again.code).toBe('reauth_required');
      expect(again.details!.auth_url).toBe(authUrl);
      expect(count(op.hits, 'POST /token')).toBe(hits);
      const forced = await admin('POST', `/v1/connections/${id}/refresh`);
      expect(forced.status).toBe(401);
      expect(forced.body.error.code).toBe('reauth_required');

      const cb = await authorizeAtProvider(authUrl, 'alice', callbackPrefix);
      expect((await gw.request('GET', viaGateway(gw, cb).slice(gw.url.length))).status).toBe(200);
      const back = (await admin('GET', `/v1/connections/${id}`)).body.connection;
      expect(back).toMatchObject({ status: 'active', last_error: null });
      expect((await svcA.getFreshAccessToken(id)).accessToken).toBe(op.issued.at(-1)!.accessToken);
    });

    it('revokes upstream and wipes the tokens on DELETE', async () => {
      const refreshToken = op.issued.at(-1)!.refreshToken!;
      const revocations = count(op.hits, 'POST /token/revocation');
      expect((await admin('DELETE', `/v1/connections/${id}`)).status).toBe(204);
      expect(count(op.hits, 'POST /token/revocation')).toBe(revocations + 1);
      const c = (await admin('GET', `/v1/connections/${id}`)).body.connection;
      expect(c.status).toBe('revoked');
      const row = JSON.parse(await rowText(id));
      expect(row).toMatchObject({ access_token: null, refresh_token: null, pkce_verifier: null, state_hash: null });
      // The provider no longer honours the refresh token.
      const probe = await fetch(`${op.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${op.clientId}:${op.clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      });
      expect(probe.status).toBe(400);
      expect(((await probe.json()) as { error?: string }).error).toBe('invalid_grant');
      expect((await appError(svcA.getFreshAccessToken(id))).code).toBe('credential_missing');
      expect((await appError(svcA.getFreshAccessToken({ orgId, name: 'acme-main' }))).code).toBe('credential_missing');
      expect((await appError(svcA.getFreshAccessToken('not-a-uuid'))).code).toBe('credential_missing');
      expect((await appError(svcA.getFreshAccessToken({ orgId, name: 'no-such-connection' }))).code).toBe('credential_missing');
      expect((await admin('DELETE', `/v1/connections/${id}`)).status).toBe(204);
      // The name is free again.
      expect((await admin('POST', '/v1/connections', { provider: 'acme', name: 'acme-main' })).status).toBe(201);
    });
  });

  describe('pending and failed authorizations', () => {
    it('a provider error is recorded and shown; a pending connection needs authentication', async () => {
      const started = await admin('POST', '/v1/connections', { provider: 'acme', name: 'acme-refused', scopes: ['openid'] });
      expect(started.status).toBe(201);
      const cb = await authorizeAtProvider(started.body.auth_url, 'alice', callbackPrefix, { abort: true });
      expect(new URL(cb).searchParams.get('error')).toBe('access_denied');
      const page = await gw.request('GET', viaGateway(gw, cb).slice(gw.url.length), { headers: { accept: 'text/html' } });
      expect(page.status).toBe(400);
      expect(page.text).toContain('access_denied');
      const id = started.body.connection.id;
      const c = (await admin('GET', `/v1/connections/${id}`)).body.connection;
      expect(c.status).toBe('pending');
      expect(c.last_error).toMatch(/access_denied/);

      const err = await appError(svcA.getFreshAccessToken(id));
      expect(err.code).toBe('needs_authentication');
      expect(err.details).toMatchObject({ connection_id: id });
      const url = String(err.details!.auth_url);
      expect(url).toContain(`${op.issuer}/auth?`);
      // The same link is handed out while it is valid, so a user mid-flow is not cut off.
      expect((await appError(svcB.getFreshAccessToken({ orgId, name: 'acme-refused' }))).details!.auth_url).toBe(url);
      const viaRest = await admin('POST', `/v1/connections/${id}/authorize`);
      expect(viaRest.status).toBe(200);
      expect(viaRest.body.auth_url).toBe(url);
      // Completing it activates the connection.
      const done = await authorizeAtProvider(url, 'alice', callbackPrefix);
      expect((await gw.request('GET', viaGateway(gw, done).slice(gw.url.length))).status).toBe(200);
      expect((await admin('GET', `/v1/connections/${id}`)).body.connection.status).toBe('active');
    });

    it('refuses an expired state', async () => {
      const started = await admin('POST', '/v1/connections', { provider: 'acme', name: 'acme-late', scopes: ['openid'] });
      const id = started.body.connection.id;
      const cb = await authorizeAtProvider(started.body.auth_url, 'alice', callbackPrefix);
      await gw.pool.query(sql.unsafe`UPDATE connections SET state_expires_at = now() - interval '1 second' WHERE id = ${id}`);
      const late = await gw.request('GET', viaGateway(gw, cb).slice(gw.url.length));
      expect(late.status).toBe(400);
      expect(late.body.error.message).toMatch(/expired/);
      expect((await admin('GET', `/v1/connections/${id}`)).body.connection.status).toBe('pending');
      expect((await gw.request('GET', viaGateway(gw, cb).slice(gw.url.length))).status).toBe(400);
    });

    it('redirects to a same-origin redirect_after and refuses others', async () => {
      const bad = await admin('POST', '/v1/connections', { provider: 'acme', redirect_after: 'https://evil.example/x' });
      expect(bad.status).toBe(400);
      expect((await admin('POST', '/v1/connections', { provider: 'acme', redirect_after: '//evil.example/x' })).status).toBe(400);
      const started = await admin('POST', '/v1/connections', { provider: 'acme', scopes: ['openid'], redirect_after: '/connections?tab=mine' });
      expect(started.status).toBe(201);
      // A default name is picked: the provider key, then the next free suffix.
      expect(started.body.connection.name).toBe('acme');
      expect((await admin('POST', '/v1/connections', { provider: 'acme' })).body.connection.name).toBe('acme-2');
      const cb = await authorizeAtProvider(started.body.auth_url, 'alice', callbackPrefix);
      const res = await fetch(viaGateway(gw, cb), { redirect: 'manual' });
      expect(res.status, await res.clone().text()).toBe(303);
      const to = new URL(res.headers.get('location')!);
      expect(to.origin + to.pathname).toBe(`${gw.config.publicUrl}/connections`);
      expect(Object.fromEntries(to.searchParams)).toEqual({ tab: 'mine', connection_id: started.body.connection.id, status: 'active' });
    });
  });

  describe('REST rules', () => {
    it('validates the create body', async () => {
      for (const body of [
        {},
        { provider: 'acme', extra: 1 },
        { provider: 'acme', scopes: 'openid' },
        { provider: 'acme', scopes: ['has space'] },
        { provider: 'acme', name: 'bad name!' },
        { provider: 'ACME' },
      ]) {
        const res = await admin('POST', '/v1/connections', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
      expect((await admin('POST', '/v1/connections', { provider: 'nope' })).status).toBe(400);
      expect((await admin('POST', '/v1/connections', { provider: 'acme', name: 'acme-refused' })).status).toBe(409);
      expect((await admin('GET', '/v1/connections/not-a-uuid')).status).toBe(400);
      expect((await gw.request('GET', '/v1/connections')).status).toBe(401);
    });

    it('agents may not create or manage connections (403) but see their human’s', async () => {
      const agent = await admin('POST', '/v1/identities/agents', { name: 'conn-agent' });
      expect(agent.status).toBe(201);
      const asAgent = gw.as(agent.body.key.token);
      const denied = await asAgent('POST', '/v1/connections', { provider: 'acme' });
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('forbidden');
      const list = await asAgent('GET', '/v1/connections');
      expect(list.status).toBe(200);
      const one = list.body.connections.find((c: any) => c.status === 'active');
      expect(one).toBeTruthy();
      expect((await asAgent('POST', `/v1/connections/${one.id}/refresh`)).status).toBe(403);
      expect((await asAgent('DELETE', `/v1/connections/${one.id}`)).status).toBe(403);
      expect((await asAgent('PUT', '/v1/oauth-apps/acme', appBody())).status).toBe(403);
    });

    it('another org sees nothing (404); a member sees only their own', async () => {
      const mine = (await admin('GET', '/v1/connections')).body.connections;
      expect(mine.length).toBeGreaterThan(2);
      const target = mine.find((c: any) => c.status === 'active');

      const stranger = await seedUser(gw.databaseUrl, { email: 'stranger@example.test', role: 'admin' });
      const asStranger = gw.as(await gw.login(stranger.email, stranger.password));
      expect((await asStranger('GET', `/v1/connections/${target.id}`)).status).toBe(404);
      expect((await asStranger('POST', `/v1/connections/${target.id}/refresh`)).status).toBe(404);
      expect((await asStranger('DELETE', `/v1/connections/${target.id}`)).status).toBe(404);
      expect((await asStranger('GET', '/v1/connections')).body.connections).toEqual([]);
      expect((await asStranger('GET', '/v1/oauth-apps')).body.oauth_apps).toEqual([]);
      // Their org has no such app: connections there cannot start.
      expect((await asStranger('POST', '/v1/connections', { provider: 'acme' })).status).toBe(400);
      // And the executor does not cross orgs by name or id.
      expect((await appError(svcA.getFreshAccessToken({ orgId: stranger.orgId, name: target.name }))).code).toBe('credential_missing');
      expect((await appError(svcA.getFreshAccessToken({ orgId: stranger.orgId, id: target.id }))).code).toBe('credential_missing');

      const member = await seedUser(gw.databaseUrl, { orgId, email: 'conn-member@example.test' });
      const asMember = gw.as(await gw.login(member.email, member.password));
      expect((await asMember('GET', `/v1/connections/${target.id}`)).status).toBe(404);
      expect((await asMember('GET', '/v1/connections')).body.connections).toEqual([]);
      const own = await asMember('POST', '/v1/connections', { provider: 'acme', name: 'member-own' });
      expect(own.status).toBe(201);
      expect((await asMember('GET', '/v1/connections')).body.connections.map((c: any) => c.name)).toEqual(['member-own']);
      // Org admins see everyone's.
      expect((await admin('GET', `/v1/connections/${own.body.connection.id}`)).status).toBe(200);
    });

    it('never returns or logs a token anywhere', async () => {
      const all = (await admin('GET', '/v1/connections')).text;
      const logs = gw.logs.join('\n') + gwB.logs.join('\n');
      for (const i of op.issued) {
        expect(all).not.toContain(i.accessToken);
        expect(logs).not.toContain(i.accessToken);
        if (i.refreshToken) expect(logs).not.toContain(i.refreshToken);
      }
    });
  });
});
