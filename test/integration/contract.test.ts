// The REST contract: the published OpenAPI document, its coverage of the mounted routes, the typed
// client generated from it, and the malformed input that used to end in 500s (issue 15).
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Express } from 'express';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../core/api/client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

interface ListedRoute {
  path: string | RegExp;
  methods: string[] | undefined;
  router: { listRoutes(): ListedRoute[] } | undefined;
}

/** `METHOD /v1/path` of every route the running application dispatches to under /v1. */
function mountedV1Routes(app: Express): string[] {
  const walk = (routes: ListedRoute[], prefix: string): string[] =>
    routes.flatMap((r) => {
      const path = prefix + (r.path === '/' ? '' : String(r.path));
      if (r.router) return walk(r.router.listRoutes(), path);
      return (r.methods ?? []).filter((m) => m.toUpperCase() !== 'HEAD').map((m) => `${m.toUpperCase()} ${path}`);
    });
  const root = (app as unknown as { router: { listRoutes(): ListedRoute[] } }).router.listRoutes();
  const v1 = root.find((r) => r.path === '/v1' && r.router);
  if (!v1?.router) throw new Error('no /v1 router on the application');
  return [...new Set(walk(v1.router.listRoutes(), '/v1'))];
}

describe('the REST contract (GET /v1/openapi.json)', () => {
  let gw: TestGateway;
  let doc: { openapi: string; paths: Record<string, Record<string, unknown>> };
  beforeAll(async () => {
    gw = await startTestGateway();
    doc = (await gw.request('GET', '/v1/openapi.json')).body;
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('is a valid OpenAPI 3.1 document (@apidevtools/swagger-parser)', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const api = await SwaggerParser.validate(structuredClone(doc) as never);
    expect(Object.keys(api.paths ?? {}).length).toBeGreaterThan(40);
  });

  it('lists every route mounted under /v1, and nothing else under /v1', () => {
    const mounted = mountedV1Routes(gw.app);
    const documented = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/v1/'))
      .flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p.replace(/\{([^}]+)\}/g, ':$1')}`));
    expect(mounted.length).toBeGreaterThan(50);
    expect([...documented].sort()).toEqual([...mounted].sort());
    // The authorization server's JSON endpoints are documented too.
    for (const p of ['/oauth/register', '/oauth/token', '/oauth/revoke', '/.well-known/oauth-authorization-server']) expect(doc.paths[p]).toBeDefined();
  });

  it('documents error codes, pagination and the security schemes', () => {
    const full = doc as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { allOf?: unknown[] } }> }>; parameters?: { name: string }[] }>>;
      components: { securitySchemes: Record<string, { type: string; scheme?: string; in?: string }> };
    };
    const getApproval = full.paths['/v1/approvals/{id}']!.get!;
    expect(JSON.stringify(getApproval.responses['404'])).toContain('not_found');
    expect(JSON.stringify(full.paths['/v1/approvals/{id}/resolve']!.post!.responses['403'])).toContain('not_in_your_chain');
    expect(full.paths['/v1/approvals']!.get!.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['cursor', 'limit']));
    expect(Object.keys(full.components.securitySchemes).sort()).toEqual(['agentKey', 'oauth', 'session', 'sessionCookie']);
    expect(full.components.securitySchemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie' });
  });

  it('serves the reference page and its component from this origin', async () => {
    const page = await gw.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.text).toContain('/docs/scalar.js');
    const bundle = await fetch(`${gw.url}/docs/scalar.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(1_000_000);
  });

  it('renders the reference page in Chromium from this origin only', async () => {
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      const problems: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(gw.url) && !r.url().startsWith('data:')) elsewhere.push(r.url());
      });
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(`${gw.url}/docs`);
      // The document's title and description, and the sidebar listing every tag (the component
      // renders operations lazily, so which operation bodies are in the page depends on scrolling).
      await page.getByRole('heading', { name: 'Agent Action Gateway' }).waitFor({ timeout: 60_000 });
      await page.getByText('The REST API under /v1', { exact: false }).first().waitFor({ timeout: 60_000 });
      for (const tag of ['Approvals', 'Audit', 'Vault', 'Webhooks']) await page.getByText(new RegExp(`(Open|Close) Group - ${tag}`)).first().waitFor({ state: 'attached', timeout: 60_000 });
      expect(elsewhere).toEqual([]);
      expect(problems.filter((p) => /Content Security Policy|Refused/i.test(p))).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('drives the API through the typed client generated from the document', async () => {
    const anonymous = createClient({ baseUrl: gw.url });
    const login = await anonymous.POST('/v1/auth/login', { body: { email: 'admin@example.test', password: 'correct horse battery staple' } });
    expect(login.response.status).toBe(200);
    const api = createClient({ baseUrl: gw.url, token: login.data!.token });
    const me = await api.GET('/v1/identities/me');
    expect(me.data?.identity.kind).toBe('user');
    const created = await api.POST('/v1/identities/agents', { body: { name: 'typed client agent' } });
    expect(created.response.status).toBe(201);
    expect(created.data?.key.token).toMatch(/^osk_/);
    const missing = await api.GET('/v1/identities/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('not_found');
  });
});

describe('malformed input gets a typed 4xx and changes nothing', () => {
  let gw: TestGateway;
  let admin: ReturnType<TestGateway['as']>;
  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const raw = (method: string, path: string, body: string) =>
    gw.request(method, path, { body, headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' } });

  it('refuses NUL in any string that would reach PostgreSQL, at validation', async () => {
    const cases: [string, string, unknown][] = [
      ['POST', '/v1/auth/login', { email: 'a\u0000b@example.test', password: 'x' }],
      ['POST', '/v1/identities/agents', { name: 'agent\u0000' }],
      ['POST', '/v1/secrets', { name: 'S', value: 'v', description: 'd\u0000' }],
      ['POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['approval.raised'], description: '\u0000' }],
      ['PUT', '/v1/oauth-apps/github', { client_id: 'a\u0000b', client_secret: 's', authorization_url: 'http://127.0.0.1/a', token_url: 'http://127.0.0.1/t' }],
      ['GET', '/v1/audit?service=a%00b', undefined],
      ['GET', '/v1/audit?action=%00', undefined],
      ['GET', '/v1/audit?event=x%00', undefined],
      ['GET', '/v1/services/a%00b', undefined],
    ];
    for (const [method, path, body] of cases) {
      const res = path === '/v1/auth/login' ? await gw.request(method, path, { body }) : await admin(method, path, body);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 400, code: 'invalid_request' });
      expect(res.body.error.message).toContain('NUL');
    }
    expect((await admin('GET', '/v1/identities?kind=agent')).body.identities).toEqual([]);
    expect((await admin('GET', '/v1/secrets')).body.secrets).toEqual([]);
    expect((await admin('GET', '/v1/webhooks')).body.webhooks).toEqual([]);
    expect((await admin('GET', '/v1/oauth-apps')).body.oauth_apps).toEqual([]);
  });

  it('refuses lone surrogates in bodies and keys, and bad percent-encoding in paths', async () => {
    for (const body of ['{"name":"\\ud800"}', '{"name":"ok","\\udc00":1}', '{"name":"x\\udfff y"}']) {
      const res = await raw('POST', '/v1/identities/agents', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const badPath = await admin('GET', '/v1/services/%E0%A4%A');
    expect(badPath.status).toBe(400);
    expect(badPath.body.error.code).toBe('invalid_request');
    expect((await admin('GET', '/v1/identities?kind=agent')).body.identities).toEqual([]);
  });

  it('reads audit instants PostgreSQL could not (offsets beyond ±15:59) and refuses years before 1970', async () => {
    for (const q of ['until=0001-05-31T18%3A14%3A49.223123%2B17%3A40', 'since=0001-01-01T00%3A00%3A00Z']) {
      const res = await admin('GET', `/v1/audit?${q}`);
      expect({ q, status: res.status, code: res.body.error?.code }).toEqual({ q, status: 400, code: 'invalid_request' });
    }
    // Normalised to UTC before it reaches PostgreSQL, which refuses a +23:59 displacement.
    const fine = await admin('GET', '/v1/audit?since=2026-01-01T00%3A00%3A00%2B23%3A59');
    expect(fine.status).toBe(200);
  });

  it('answers a bare JSON scalar or array body with 400, never a crash', async () => {
    for (const body of ['"call"', '42', 'true', 'null', '[]', '["approval_id"]']) {
      const res = await raw('POST', '/v1/actions/call', body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'invalid_request' });
    }
    expect((await admin('GET', '/v1/audit')).body.entries.filter((e: { event: string }) => e.event.startsWith('call'))).toEqual([]);
  });

  it('answers an oversized request line with the envelope (431), not a bare status', async () => {
    const res = await admin('GET', `/v1/identities?kind=${'a'.repeat(20_000)}`);
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ error: { code: 'headers_too_large', details: { limit_bytes: 16384 } } });
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('the OAuth endpoints answer RFC errors for NUL and lone surrogates', async () => {
    const register = (body: string) => gw.request('POST', '/oauth/register', { body, headers: { 'content-type': 'application/json' } });
    for (const body of [
      '{"redirect_uris":["http://127.0.0.1:5/cb"],"client_name":"a\\u0000b"}',
      '{"redirect_uris":["http://127.0.0.1:5/cb"],"client_name":"\\ud800"}',
      '{"redirect_uris":["http://127.0.0.1:5/cb"],"software_id":"x\\u0000"}',
      '{"redirect_uris":["http://127.0.0.1:5/cb"],"software_id":"\\udc00x"}',
    ]) {
      const res = await register(body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error: 'invalid_client_metadata' });
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const token = await gw.request('POST', '/oauth/token', { body: 'grant_type=authorization_code&code=x&code_verifier=y&client_id=a%00b', headers: form });
    expect(token.status).toBeLessThan(500);
    expect(token.body.error).toBe('invalid_client');
    const refresh = await gw.request('POST', '/oauth/token', { body: 'grant_type=refresh_token&refresh_token=a%00b&client_id=a%00b', headers: form });
    expect(refresh.body.error).toBe('invalid_client');
    const revoke = await gw.request('POST', '/oauth/revoke', { body: 'token=a%00b&client_id=a%00b', headers: form });
    expect(revoke.status).toBeLessThan(500);
    expect(revoke.body.error).toBe('invalid_client');
    const authorize = await fetch(`${gw.url}/oauth/authorize?response_type=code&client_id=a%00b&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&code_challenge=abc&code_challenge_method=S256`, { redirect: 'manual' });
    expect(authorize.status).toBe(400);
    expect(await authorize.text()).toMatch(/client/i);
    expect(gw.logs.filter((l) => l.includes('OAuth server error'))).toEqual([]);
  });
});
