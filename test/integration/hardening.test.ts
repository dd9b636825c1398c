// What an attacker tried from outside (issue 25), one test per item fixed here: a template's
// credential under a custom header on a cross-origin redirect, a same-site page driving the
// dashboard's cookie session (in real Chromium, from a second port on 127.0.0.1), the Secure flag
// from an https PUBLIC_URL, hostile JSON nesting on REST and MCP, NUL bytes in MCP arguments, a
// malformed upstream Location, CR/LF and connection headers in raw HTTP, public-suffix wildcards,
// and HEAD on the event stream.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import http from 'node:http';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

const TEMPLATE_KEY = 'tpl-KNOWN-custom-header-6161';

/** Pages on another port of `host` (served on loopback): `/<i>` auto-submits form i to the gateway (a top-level POST). */
async function startAttackerPage(host: string, forms: Array<{ action: string; enctype?: string; fields?: Record<string, string> }>) {
  const page = (f: (typeof forms)[number]) =>
    `<!doctype html><title>cat pictures</title><form id="x" method="post" action="${f.action}" enctype="${f.enctype ?? 'application/x-www-form-urlencoded'}">${Object.entries(f.fields ?? {})
      .map(([k, v]) => `<input name='${k}' value='${v}'>`)
      .join('')}</form><script>document.getElementById('x').submit();</script>`;
  const server = http.createServer((req, res) => {
    const f = forms[Number((req.url ?? '/').slice(1))];
    res.writeHead(f ? 200 : 404, { 'content-type': 'text/html' });
    res.end(f ? page(f) : 'no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('hardening against what testers tried from outside', () => {
  let gw: TestGateway;
  let up: Upstream;
  let other: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let agent: { id: string; key: string };

  beforeAll(async () => {
    up = await startUpstream();
    other = await startUpstream();
    // The upstream and the "other origin" are both loopback: let the outbound policy reach them.
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1,localhost' } });
    admin = gw.as(gw.adminToken);
    const made = await admin('POST', '/v1/identities/agents', { name: 'hardening' });
    agent = { id: made.body.identity.id, key: made.body.key.token };
    expect((await admin('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'http:*:*' })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
    await other?.close();
  });

  it('a template’s API key under a custom header does not follow a redirect to another origin', async () => {
    const doc = {
      ...upstreamServiceDoc('custom-header', up.url),
      components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Tpl-Key', default_secret_name: 'TPL_KEY' } } },
      security: [{ key: [] }],
    };
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: doc })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'TPL_KEY', value: TEMPLATE_KEY })).status).toBe(201);
    up.handle((r, res) => {
      res.writeHead(302, { location: `${other.url}/landing${r.url}` });
      res.end();
    });
    // The person's own call (covered) and raw HTTP through the service instance: both redirected.
    const viaAction = await admin('POST', '/v1/actions/call', { service: 'custom-header', action: 'get_item', params: { id: 'r1' } });
    expect(viaAction.body.status, viaAction.text).toBe('called');
    const viaRaw = await admin('POST', '/v1/actions/call', { service: 'custom-header', method: 'GET', path: '/items/r2' });
    expect(viaRaw.body.status, viaRaw.text).toBe('called');
    expect(up.requests.filter((r) => r.headers['x-tpl-key'] === TEMPLATE_KEY).length).toBe(2);
    const landed = other.requests.filter((r) => r.url.startsWith('/landing'));
    expect(landed).toHaveLength(2);
    for (const r of landed) expect(JSON.stringify(r.headers)).not.toContain(TEMPLATE_KEY);
  });

  it('a malformed upstream Location is an upstream_error, not a 500', async () => {
    up.handle((_r, res) => {
      res.writeHead(302, { location: 'http://127.0.0.1%3A38198/x' });
      res.end();
    });
    const r = await gw.as(agent.key)('POST', '/v1/actions/call', { service: 'http', method: 'GET', path: `${up.url}/bad-location` });
    expect(r.status, r.text).toBe(502);
    expect(r.body.error.code).toBe('upstream_error');
  });

  it('raw HTTP refuses CR/LF in header values and connection headers (Host, Transfer-Encoding, Connection) with 400', async () => {
    const before = up.requests.length;
    for (const headers of [{ 'X-Note': 'a\r\nInjected: yes' }, { 'X-Note': 'a\nb' }, { Host: 'evil.example' }, { 'Transfer-Encoding': 'chunked' }, { Connection: 'close' }, { 'Content-Length': '5' }]) {
      const r = await gw.as(agent.key)('POST', '/v1/actions/call', { service: 'http', method: 'POST', path: `${up.url}/headers`, headers, body: { a: 1 } });
      expect(r.status, JSON.stringify(headers)).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
      expect(r.body.error.details.field).toBe(`headers.${Object.keys(headers)[0]}`);
    }
    expect(up.requests.length).toBe(before);
  });

  it('deeply nested JSON is refused with 400 at once, on REST and MCP, and the process keeps answering', async () => {
    const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    const rest = await gw.request('POST', '/v1/actions/call', { body: deep, headers: { authorization: `Bearer ${agent.key}`, 'content-type': 'application/json' } });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({ code: 'invalid_request', details: { max_depth: 64 } });
    const params = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    const mcp = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gateway_call","arguments":{"service":"x","action":"y","params":${params}}}}`,
    });
    expect(mcp.status).toBe(400);
    expect(((await mcp.json()) as { error: { code: number } }).error.code).toBe(-32600);
    expect((await gw.request('GET', '/healthz')).status).toBe(200);
  });

  it('a NUL byte in an MCP tool argument is invalid_request, as on REST (never an internal error)', async () => {
    const client = new Client({ name: 'hardening', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.key}` } } }));
    try {
      for (const [tool, args] of [
        ['gateway_call', { service: 'a\u0000b', action: 'x' }],
        ['gateway_read', { service: 'a\u0000b', action: 'x' }],
        ['gateway_auth', { action: 'whoami', service: 'a\u0000b' }],
      ] as const) {
        const r = (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
        expect(r.isError, tool).toBe(true);
        expect((r.structuredContent as any).error.code, tool).toBe('invalid_request');
      }
    } finally {
      await client.close();
    }
  });

  it('allowed_hosts refuses a wildcard over a public suffix (*.co.uk, *.github.io)', async () => {
    for (const host of ['*.co.uk', '*.github.io', '*.com.au']) {
      const r = await admin('POST', '/v1/secrets', { name: 'PSL_TEST', value: 'v', allowed_hosts: [host] });
      expect(r.status, host).toBe(400);
      expect(r.body.error.message).toContain('public suffix');
    }
    expect((await admin('POST', '/v1/secrets', { name: 'PSL_TEST', value: 'v', allowed_hosts: ['*.example.co.uk'] })).status).toBe(201);
  });

  it('HEAD /v1/events answers at once', async () => {
    const res = await fetch(`${gw.url}/v1/events`, { method: 'HEAD', headers: { authorization: `Bearer ${gw.adminToken}` }, signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
  });

  describe('the dashboard cookie', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('cannot be driven from a page on another port of the same host (real Chromium)', async () => {
      const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
      const person = await seedUser(gw.databaseUrl, { orgId, email: 'csrf-victim@example.test' });
      const victim = gw.as(await gw.login(person.email, person.password));
      const target = await victim('POST', '/v1/identities/agents', { name: 'csrf-target' });
      const targetId = target.body.identity.id as string;
      const hook = await admin('POST', '/v1/webhooks', { url: `${up.url}/csrf-hook`, events: ['approval.raised'] });
      const context = await browser.newContext();
      try {
        // The person signs in to the dashboard in this browser (the session cookie is set).
        const page = await context.newPage();
        await page.goto(`${gw.url}/signin`);
        const signin = await page.evaluate(
          async ([email, password]) => (await fetch('/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })).status,
          [person.email, person.password],
        );
        expect(signin).toBe(200);
        // The dashboard itself (same origin, JSON) still works with the cookie.
        const own = await page.evaluate(async () => (await fetch('/v1/identities/agents', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"from-the-dashboard"}' })).status);
        expect(own).toBe(201);

        // The same host as the dashboard (the gateway's URL names it), another port: the same site.
        const attacker = await startAttackerPage(new URL(gw.url).hostname, [
          { action: `${gw.url}/v1/identities/${targetId}/keys` },
          { action: `${gw.url}/v1/identities/${targetId}/revoke` },
          { action: `${gw.url}/v1/webhooks/${hook.body.id}/test`, enctype: 'text/plain', fields: { '{"a":"': '"}' } },
          { action: `${gw.url}/v1/auth/logout` },
        ]);
        try {
          const responses: number[] = [];
          for (let i = 0; i < 4; i++) {
            const evil = await context.newPage();
            const answered = evil.waitForResponse((r) => r.url().startsWith(gw.url) && r.request().method() === 'POST');
            await evil.goto(`${attacker.url}/${i}`);
            responses.push((await answered).status());
            await evil.close();
          }
          expect(responses).toEqual([403, 403, 403, 403]);
        } finally {
          await attacker.close();
        }
        // Nothing changed: no key minted, the agent active, the person still signed in.
        const keys = await victim('GET', `/v1/identities/${targetId}/keys`);
        expect(keys.body.keys).toHaveLength(1);
        expect((await victim('GET', `/v1/identities/${targetId}`)).body.status).toBe('active');
        expect(await page.evaluate(async () => (await fetch('/v1/identities/me')).status)).toBe(200);
        expect(up.requests.some((r) => r.url === '/csrf-hook')).toBe(false);
      } finally {
        await context.close();
      }
    });

    it('a bearer request is unaffected; a cookie request without a JSON type is refused', async () => {
      const login = await gw.request('POST', '/v1/auth/login', { body: { email: 'csrf-victim@example.test', password: 'x' } });
      expect(login.status).toBe(401); // wrong password: no cookie; the bearer path below needs none
      const viaBearer = await gw.request('POST', '/v1/identities/agents', { body: { name: 'bearer-made' }, headers: { authorization: `Bearer ${gw.adminToken}`, origin: 'http://elsewhere.example' } });
      expect(viaBearer.status).toBe(201);
      const cookie = `gw_session=${gw.adminToken}`;
      const noType = await gw.request('POST', '/v1/identities/agents', { body: 'name=x', headers: { cookie, origin: new URL(gw.url).origin, 'content-type': 'application/x-www-form-urlencoded' } });
      expect(noType.status).toBe(400);
      const noOrigin = await gw.request('POST', '/v1/identities/agents', { body: { name: 'x' }, headers: { cookie } });
      expect(noOrigin.status).toBe(403);
      const sameOrigin = await gw.request('POST', '/v1/identities/agents', { body: { name: 'cookie-made' }, headers: { cookie, origin: new URL(gw.url).origin } });
      expect(sameOrigin.status).toBe(201);
    });
  });
});

describe('an https PUBLIC_URL', () => {
  it('sets Secure on the session cookie and the OAuth interaction cookies without any proxy header', async () => {
    const gw = await startTestGateway({ env: { PUBLIC_URL: 'https://gateway.example.test' } });
    try {
      const res = await gw.request('POST', '/v1/auth/login', { body: { email: 'admin@example.test', password: 'correct horse battery staple' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).toMatch(/; Secure$/);
      const redirectUri = 'http://127.0.0.1:9/callback';
      const reg = await gw.request('POST', '/oauth/register', { body: { redirect_uris: [redirectUri], client_name: 'secure-cookie-test', token_endpoint_auth_method: 'none' } });
      expect(reg.status, reg.text).toBe(201);
      const params = new URLSearchParams({
        response_type: 'code',
        client_id: reg.body.client_id,
        redirect_uri: redirectUri,
        state: 'st',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        resource: 'https://gateway.example.test/mcp',
      });
      const authorize = await fetch(`${gw.url}/oauth/authorize?${params}`, { redirect: 'manual' });
      const cookies = authorize.headers.getSetCookie();
      expect(authorize.status, await authorize.text()).toBeGreaterThanOrEqual(300);
      expect(cookies.length).toBeGreaterThan(0);
      for (const c of cookies) expect(c, c).toMatch(/; secure/i);
    } finally {
      await gw.stop();
    }
  });
});

describe('a member’s templates and org secrets (no outbound allowlist: loopback is private)', () => {
  let gw: TestGateway;
  let up: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let member: ReturnType<TestGateway['as']>;
  const ORG_VALUE = 'org-KNOWN-bound-secret-7373';

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'member-templates@example.test' });
    member = gw.as(await gw.login(m.email, m.password));
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  const personal = (key: string, secretName: string | null) => ({
    ...upstreamServiceDoc(key, up.url),
    ...(secretName
      ? { components: { securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: secretName } } }, security: [{ api_key: [] }] }
      : { components: {}, security: [] }),
  });

  it('an org secret goes only to its allowed_hosts, and one without the list never into a member’s own template', async () => {
    expect((await admin('POST', '/v1/secrets', { name: 'BOUND_KEY', value: ORG_VALUE, allowed_hosts: ['api.example.com'] })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'UNBOUND_KEY', value: ORG_VALUE })).status).toBe(201);
    for (const [key, secret] of [['mine-bound', 'BOUND_KEY'], ['mine-unbound', 'UNBOUND_KEY']] as const) {
      expect((await member('POST', '/v1/templates', { scope: 'user', document: personal(key, secret) })).status).toBe(201);
      const r = await member('POST', '/v1/actions/call', { service: key, action: 'get_item', params: { id: 'x' } });
      expect(r.status, r.text).toBe(403);
      expect(r.body.error.code).toBe('secret_not_allowed_for_host');
    }
    expect(up.requests).toHaveLength(0);
    expect(gw.logs.join('\n')).not.toContain(ORG_VALUE);
  });

  it('a member’s template is held to the outbound address policy; an org template (an admin’s) is exempt', async () => {
    expect((await member('POST', '/v1/templates', { scope: 'user', document: personal('mine-open', null) })).status).toBe(201);
    const refused = await member('POST', '/v1/actions/call', { service: 'mine-open', action: 'get_item', params: { id: 'private' } });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error.message).toContain('private or reserved address');
    const raw = await member('POST', '/v1/actions/call', { service: 'mine-open', method: 'GET', path: '/items/raw' });
    expect(raw.status, raw.text).toBe(403);
    expect(up.requests).toHaveLength(0);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: personal('org-open', null) })).status).toBe(201);
    const exempt = await admin('POST', '/v1/actions/call', { service: 'org-open', action: 'get_item', params: { id: 'vetted' } });
    expect(exempt.body.status, exempt.text).toBe('called');
  });

  it('a member’s template cannot reach a private address through a resolve lookup or the MCP runtime either', async () => {
    const before = up.requests.length;
    const withLookup = {
      openapi: '3.1.0',
      info: { title: 'Mine with lookups', key: 'mine-lookup', version: '1' },
      servers: [{ url: up.url }],
      paths: {
        '/folders/{folder_id}/items': {
          get: {
            operationId: 'list_folder',
            summary: 'List items in folder {folder_id}',
            parameters: [{ name: 'folder_id', in: 'path', required: true, schema: { type: 'string' }, 'x-gateway-resolve': { get: '/folders/{folder_id}', pick: 'name' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    };
    expect((await member('POST', '/v1/templates', { scope: 'user', document: withLookup })).status).toBe(201);
    const looked = await member('POST', '/v1/actions/call', { service: 'mine-lookup', action: 'list_folder', params: { folder_id: 'f1' } });
    expect(looked.status, looked.text).toBe(403);
    const mcpDoc = {
      openapi: '3.1.0',
      info: { title: 'Mine over MCP', key: 'mine-mcp', version: '1' },
      runtime: 'mcp',
      mcp: { url: `${up.url}/mcp` },
      servers: [{ url: up.url }],
      paths: { '/echo': { post: { operationId: 'echo', summary: 'Echo', risk: 'read', responses: { '200': { description: 'ok' } } } } },
    };
    const reg = await member('POST', '/v1/templates', { scope: 'user', document: mcpDoc });
    expect(reg.status, reg.text).toBe(201);
    const viaMcp = await member('POST', '/v1/actions/call', { service: 'mine-mcp', action: 'echo', params: {} });
    expect(viaMcp.status, viaMcp.text).toBe(403);
    expect(viaMcp.body.error.message).toContain('private or reserved address');
    // Neither the lookup, nor the call, nor the MCP handshake reached the loopback server.
    expect(up.requests.length).toBe(before);
  });

  it('only an admin rotates, restores or deletes an org secret; a restore restores the hosts its version had', async () => {
    const created = await admin('POST', '/v1/secrets', { name: 'ROTATED_KEY', value: 'v1-value', allowed_hosts: ['api.example.com'] });
    const id = created.body.id;
    const rotate = await member('POST', '/v1/secrets', { name: 'ROTATED_KEY', value: 'member-value', allowed_hosts: ['127.0.0.1'] });
    expect(rotate.status).toBe(403);
    expect((await member('POST', `/v1/secrets/${id}/versions/1/restore`)).status).toBe(403);
    expect((await member('DELETE', `/v1/secrets/${id}`)).status).toBe(403);
    expect((await admin('POST', '/v1/secrets', { name: 'ROTATED_KEY', value: 'v2-value', allowed_hosts: ['127.0.0.1'] })).status).toBe(200);
    const restored = await admin('POST', `/v1/secrets/${id}/versions/1/restore`);
    expect(restored.status, restored.text).toBe(200);
    expect((await admin('GET', `/v1/secrets/${id}`)).body.allowed_hosts).toEqual(['api.example.com']);
    // A member's own secret stays theirs to change.
    expect((await member('POST', '/v1/secrets', { name: 'MY_KEY', value: 'a', scope: 'user' })).status).toBe(201);
    expect((await member('POST', '/v1/secrets', { name: 'MY_KEY', value: 'b' })).status).toBe(200);
  });

  it('the authority matrix for people: admin, the owning member and another member on every secret, template and connection route', async () => {
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const b = await seedUser(gw.databaseUrl, { orgId, email: 'member-b-matrix@example.test' });
    const other = gw.as(await gw.login(b.email, b.password));
    const who = { admin, owner: member, other } as const;
    type Who = keyof typeof who;
    // Fresh resources per row, so each cell meets the same state.
    const orgSecret = async () => (await admin('POST', '/v1/secrets', { name: `MX_ORG_${Math.random().toString(36).slice(2, 8)}`, value: 'o', allowed_hosts: ['api.example.com'] })).body;
    const ownSecret = async () => (await member('POST', '/v1/secrets', { name: `MX_OWN_${Math.random().toString(36).slice(2, 8)}`, value: 'm', scope: 'user' })).body;
    const orgTemplate = async () => (await admin('POST', '/v1/templates', { scope: 'org', document: personal(`mx-org-${Math.random().toString(36).slice(2, 8)}`, null) })).body;
    const ownTemplate = async () => (await member('POST', '/v1/templates', { scope: 'user', document: personal(`mx-own-${Math.random().toString(36).slice(2, 8)}`, null) })).body;
    // A pending connection of the owning member (no network: its provider is never reached here).
    const app = { client_id: 'mx-client', client_secret: 'mx-client-secret', authorization_url: 'https://idp.example.test/auth', token_url: 'https://idp.example.test/token' };
    expect((await admin('PUT', '/v1/oauth-apps/mx-idp', app)).status).toBe(201);
    const ownConnection = async () => (await member('POST', '/v1/connections', { provider: 'mx-idp', name: `mx-${Math.random().toString(36).slice(2, 8)}` })).body.connection;
    type Make = () => Promise<{ id: string; name?: string; key?: string }>;
    /** A status, or 'allowed': anything but a refusal (403, 404, or 401 unauthenticated), e.g. a pending connection's needs_authentication. */
    type Cell = number | 'allowed';
    const rows: Array<{ label: string; make: Make; call: (r: { id: string; name?: string; key?: string }) => [string, string, unknown?]; expect: Record<Who, Cell> }> = [
      { label: 'GET org secret', make: orgSecret, call: (r) => ['GET', `/v1/secrets/${r.id}`], expect: { admin: 200, owner: 200, other: 200 } },
      { label: 'rotate org secret', make: orgSecret, call: (r) => ['POST', '/v1/secrets', { name: r.name, value: 'new', allowed_hosts: ['127.0.0.1'] }], expect: { admin: 200, owner: 403, other: 403 } },
      { label: 'restore org secret', make: orgSecret, call: (r) => ['POST', `/v1/secrets/${r.id}/versions/1/restore`], expect: { admin: 200, owner: 403, other: 403 } },
      { label: 'versions of org secret', make: orgSecret, call: (r) => ['GET', `/v1/secrets/${r.id}/versions`], expect: { admin: 200, owner: 200, other: 200 } },
      { label: 'DELETE org secret', make: orgSecret, call: (r) => ['DELETE', `/v1/secrets/${r.id}`], expect: { admin: 204, owner: 403, other: 403 } },
      { label: 'GET own secret', make: ownSecret, call: (r) => ['GET', `/v1/secrets/${r.id}`], expect: { admin: 200, owner: 200, other: 404 } },
      { label: 'rotate own secret', make: ownSecret, call: (r) => ['POST', '/v1/secrets', { name: r.name, value: 'new' }], expect: { admin: 200, owner: 200, other: 409 } },
      { label: 'restore own secret', make: ownSecret, call: (r) => ['POST', `/v1/secrets/${r.id}/versions/1/restore`], expect: { admin: 200, owner: 200, other: 404 } },
      { label: 'versions of own secret', make: ownSecret, call: (r) => ['GET', `/v1/secrets/${r.id}/versions`], expect: { admin: 200, owner: 200, other: 404 } },
      { label: 'DELETE own secret', make: ownSecret, call: (r) => ['DELETE', `/v1/secrets/${r.id}`], expect: { admin: 204, owner: 204, other: 404 } },
      { label: 'GET org template', make: orgTemplate, call: (r) => ['GET', `/v1/templates/${r.id}`], expect: { admin: 200, owner: 200, other: 200 } },
      { label: 'PUT org template', make: orgTemplate, call: (r) => ['PUT', `/v1/templates/${r.id}`, { document: personal(r.key!, null) }], expect: { admin: 200, owner: 403, other: 403 } },
      { label: 'DELETE org template', make: orgTemplate, call: (r) => ['DELETE', `/v1/templates/${r.id}`], expect: { admin: 204, owner: 403, other: 403 } },
      { label: 'GET own template', make: ownTemplate, call: (r) => ['GET', `/v1/templates/${r.id}`], expect: { admin: 404, owner: 200, other: 404 } },
      { label: 'PUT own template', make: ownTemplate, call: (r) => ['PUT', `/v1/templates/${r.id}`, { document: personal(r.key!, null) }], expect: { admin: 404, owner: 200, other: 404 } },
      { label: 'DELETE own template', make: ownTemplate, call: (r) => ['DELETE', `/v1/templates/${r.id}`], expect: { admin: 404, owner: 204, other: 404 } },
      { label: 'GET own connection', make: ownConnection, call: (r) => ['GET', `/v1/connections/${r.id}`], expect: { admin: 200, owner: 200, other: 404 } },
      { label: 'authorize own connection', make: ownConnection, call: (r) => ['POST', `/v1/connections/${r.id}/authorize`], expect: { admin: 'allowed', owner: 'allowed', other: 404 } },
      { label: 'refresh own connection', make: ownConnection, call: (r) => ['POST', `/v1/connections/${r.id}/refresh`], expect: { admin: 'allowed', owner: 'allowed', other: 404 } },
      { label: 'DELETE own connection', make: ownConnection, call: (r) => ['DELETE', `/v1/connections/${r.id}`], expect: { admin: 'allowed', owner: 'allowed', other: 404 } },
      { label: 'raw HTTP with own connection', make: ownConnection, call: (r) => ['POST', '/v1/actions/http', { connection: r.id, method: 'GET', url: 'https://idp.example.test/me' }], expect: { admin: 403, owner: 'allowed', other: 404 } },
      { label: 'PUT an OAuth app', make: async () => ({ id: 'mx-idp' }), call: (r) => ['PUT', `/v1/oauth-apps/${r.id}`, app], expect: { admin: 200, owner: 403, other: 403 } },
    ];
    const failures: string[] = [];
    for (const row of rows) {
      for (const w of Object.keys(who) as Who[]) {
        const made = await row.make();
        const [method, path, body] = row.call(made);
        const res = await who[w](method, path, body);
        const cell = row.expect[w];
        const refused = [403, 404].includes(res.status) || (res.status === 401 && res.body?.error?.code === 'unauthenticated');
        const ok = cell === 'allowed' ? !refused : res.status === cell;
        if (!ok) failures.push(`${row.label} as ${w}: expected ${cell}, got ${res.status} ${res.text.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});


describe('streams end when their credential does', () => {
  let gw: TestGateway;
  let admin: ReturnType<TestGateway['as']>;

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  /** Whether the stream ended by itself within a bound (generous: the machine may be loaded). */
  const endsWithin = (s: SseStream, ms: number) => Promise.race([s.ended.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

  it('revoking an agent ends its GET /mcp stream and cancels its pending approvals with the reason', async () => {
    const made = await admin('POST', '/v1/identities/agents', { name: 'revoked-streamer' });
    const key = made.body.key.token as string;
    const widgets = await startUpstream();
    try {
      expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('stream-widgets', widgets.url) })).status).toBe(201);
      expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'stream-secret' })).status).toBe(201);
      const pending = await gw.as(key)('POST', '/v1/actions/call', { service: 'stream-widgets', action: 'create_item', params: { name: 'left-behind' } });
      expect(pending.status, pending.text).toBe(202);
      const stream = await openSse(`${gw.url}/mcp`, { authorization: `Bearer ${key}` });
      expect(stream.status).toBe(200);
      const other = await admin('POST', '/v1/identities/agents', { name: 'still-here' });
      const kept = await openSse(`${gw.url}/mcp`, { authorization: `Bearer ${other.body.key.token}` });
      expect((await admin('POST', `/v1/identities/${made.body.identity.id}/revoke`)).status).toBe(200);
      expect(await endsWithin(stream, 10_000)).toBe(true);
      expect(await endsWithin(kept, 1_000)).toBe(false);
      kept.close();
      const approval = await admin('GET', `/v1/approvals/${pending.body.approval_id}`);
      expect(approval.body).toMatchObject({ status: 'cancelled', reason: 'the requesting agent was revoked' });
      const inbox = await admin('GET', '/v1/approvals?status=pending');
      expect(inbox.body.approvals.map((a: { id: string }) => a.id)).not.toContain(pending.body.approval_id);
    } finally {
      await widgets.close();
    }
  });

  it('revoking an agent key ends the streams it opened; signing out ends the person’s GET /v1/events', async () => {
    const made = await admin('POST', '/v1/identities/agents', { name: 'key-streamer' });
    const stream = await openSse(`${gw.url}/mcp`, { authorization: `Bearer ${made.body.key.token}` });
    expect((await admin('POST', `/v1/identities/${made.body.identity.id}/keys/${made.body.key.id}/revoke`)).status).toBe(204);
    expect(await endsWithin(stream, 10_000)).toBe(true);

    const session = await gw.login('admin@example.test', 'correct horse battery staple');
    const events = await openSse(`${gw.url}/v1/events`, { authorization: `Bearer ${session}` });
    expect(events.status).toBe(200);
    expect((await gw.as(session)('POST', '/v1/auth/logout')).status).toBe(204);
    expect(await endsWithin(events, 10_000)).toBe(true);
  });

  it("revoking an agent ends its subagent's stream too; one session signing out leaves the person's other session streaming", async () => {
    const made = await admin('POST', '/v1/identities/agents', { name: 'parent-streamer' });
    const sub = await gw.as(made.body.key.token)('POST', '/v1/identities/agents', { name: 'child-streamer' });
    expect(sub.status, sub.text).toBe(201);
    const subStream = await openSse(`${gw.url}/mcp`, { authorization: `Bearer ${sub.body.key.token}` });
    expect(subStream.status).toBe(200);
    expect((await admin('POST', `/v1/identities/${made.body.identity.id}/revoke`)).status).toBe(200);
    expect(await endsWithin(subStream, 10_000)).toBe(true);

    const [leaving, staying] = [await gw.login('admin@example.test', 'correct horse battery staple'), await gw.login('admin@example.test', 'correct horse battery staple')];
    const left = await openSse(`${gw.url}/v1/events`, { authorization: `Bearer ${leaving}` });
    const kept = await openSse(`${gw.url}/v1/events`, { authorization: `Bearer ${staying}` });
    expect((await gw.as(leaving)('POST', '/v1/auth/logout')).status).toBe(204);
    expect(await endsWithin(left, 10_000)).toBe(true);
    // The same person's change re-checks the other session too, which still authenticates.
    expect(await endsWithin(kept, 1_000)).toBe(false);
    kept.close();
  });

  it('each change names whom it concerns on the credentials channel, so a process re-checks only those streams', async () => {
    const listener = new pg.Client({ connectionString: gw.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (m) => heard.push(m.payload ?? ''));
    await listener.query('LISTEN gateway_credentials');
    /** The payloads heard while `act` ran (notifications arrive after their commit). */
    const heardDuring = async (act: () => Promise<unknown>, expected: string) => {
      heard.length = 0;
      await act();
      for (let i = 0; i < 200 && !heard.includes(expected); i += 1) await new Promise((r) => setTimeout(r, 50));
      return [...heard];
    };
    try {
      const made = await admin('POST', '/v1/identities/agents', { name: 'named-changes' });
      const agentId = made.body.identity.id as string;
      const me = (await admin('GET', '/v1/identities/me')).body.identity;
      const session = await gw.login('admin@example.test', 'correct horse battery staple');
      expect(await heardDuring(() => gw.as(session)('POST', '/v1/auth/logout'), `identity:${me.id}`)).toEqual([`identity:${me.id}`]);
      expect(await heardDuring(() => admin('POST', `/v1/identities/${agentId}/keys/${made.body.key.id}/revoke`), `identity:${agentId}`)).toEqual([`identity:${agentId}`]);
      expect(await heardDuring(() => admin('POST', `/v1/identities/${agentId}/revoke`), `identity:${agentId}`)).toContain(`identity:${agentId}`);
    } finally {
      await listener.end();
    }
  });

  it('a revocation on one replica ends the stream held by another (the same LISTEN/NOTIFY path)', async () => {
    const replica = await startTestGateway({ databaseUrl: gw.databaseUrl, role: 'api', taskQueue: gw.taskQueue });
    try {
      const made = await admin('POST', '/v1/identities/agents', { name: 'replica-streamer' });
      const stream = await openSse(`${replica.url}/mcp`, { authorization: `Bearer ${made.body.key.token}` });
      expect(stream.status).toBe(200);
      expect((await admin('POST', `/v1/identities/${made.body.identity.id}/revoke`)).status).toBe(200);
      expect(await endsWithin(stream, 10_000)).toBe(true);
    } finally {
      await replica.stop();
    }
  });
});

describe('a raw HTTP call that could never be sent', () => {
  it('is refused at once (403, the send’s own error) instead of raising an approval', async () => {
    const gw = await startTestGateway();
    try {
      const made = await gw.as(gw.adminToken)('POST', '/v1/identities/agents', { name: 'no-rules' });
      const agent = gw.as(made.body.key.token);
      for (const url of ['http://127.0.0.1:9/x', 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/internal', 'http://localhost:9/x']) {
        const r = await agent('POST', '/v1/actions/call', { service: 'http', method: 'POST', path: url, body: { a: 1 } });
        expect(r.status, `${url}: ${r.text}`).toBe(403);
        expect(r.body.error.message).toContain('private or reserved address');
      }
      expect((await gw.as(gw.adminToken)('GET', '/v1/approvals?status=pending')).body.approvals).toHaveLength(0);
    } finally {
      await gw.stop();
    }
  });
});

describe('OAuth metadata', () => {
  it('is built from PUBLIC_URL whatever Host or X-Forwarded-Host a request claims, and says how long to cache it', async () => {
    const gw = await startTestGateway({ env: { PUBLIC_URL: 'https://gateway.example.test' } });
    const get = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
        const u = new URL(gw.url + path);
        const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, headers }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        for (const headers of [{ host: 'evil.example' }, { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }] as Array<Record<string, string>>) {
          const r = await get(path, headers);
          expect(r.status, path).toBe(200);
          expect(JSON.stringify(r.body), path).not.toContain('evil.example');
          for (const field of ['issuer', 'authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint', 'jwks_uri']) {
            expect(r.body[field], `${path} ${field}`).toMatch(/^https:\/\/gateway\.example\.test(\/|$)/);
          }
          expect(r.headers['cache-control']).toContain('max-age');
        }
      }
    } finally {
      await gw.stop();
    }
  });
});

describe('JSON-RPC edges on /mcp', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    key = (await gw.as(gw.adminToken)('POST', '/v1/identities/agents', { name: 'jsonrpc-edges' })).body.key.token;
  });
  afterAll(async () => {
    await gw?.stop();
  });
  const post = async (body: unknown, version: string) => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const json = text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
    return { status: res.status, body: json };
  };

  it('a request with "id": null is -32600 Invalid Request, not a parse error', async () => {
    const r = await post({ jsonrpc: '2.0', id: null, method: 'tools/list' }, '2025-06-18');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(-32600);
  });

  it('a batch is refused under revisions without batching and answered as an array where allowed', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    for (const version of ['2025-06-18', '2025-11-25']) {
      const r = await post(batch, version);
      expect(r.status, version).toBe(400);
      expect(r.body.error.code, version).toBe(-32600);
    }
    const allowed = await post(batch, '2025-03-26');
    expect(allowed.status).toBe(200);
    const answers = (Array.isArray(allowed.body[0]) ? allowed.body.flat() : allowed.body) as Array<{ id: number; result?: unknown }>;
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
  });
});
