// The MCP endpoint end to end, driven by the official SDK client: bearer authentication and the
// 401 challenge, the gateway tools over an agent key, approvals raised and resolved, the SSE
// notification channel, the OAuth dance (discovery → registration → PKCE → tokens → refresh →
// revoke) with self-approval toggled on the binding, and the stdio shim as a child process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseParser } from '../../cli/mcp/sse.ts';
import { Browser, signInAndConsent } from '../support/oauth-browser.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { CLI } from '../support/processes.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { openSse } from '../support/sse.ts';
import { until } from '../support/wait.ts';

const SECRET = 'sk_upstream_MCP_KNOWN_SECRET_5310';
const TOOLS = ['gateway_call', 'gateway_read', 'gateway_search', 'gateway_approve', 'gateway_auth'];

type As = ReturnType<TestGateway['as']>;
interface Agent {
  id: string;
  key: string;
}

describe('the MCP endpoint', () => {
  let gw: TestGateway;
  let up: Upstream;
  let member: SeededUser;
  let human: As;
  let agent: Agent;
  let manual: Agent;
  let sibling: Agent;
  let sub: Agent;
  const clients: Client[] = [];

  const mcpUrl = () => new URL(`${gw.url}/mcp`);
  const challenge = () => `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource", scope="mcp"`;
  /** A presented token that was rejected: RFC 6750's invalid_token, with the same discovery hints (issue 32). */
  const rejected = () => new RegExp(`^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="${gw.url}/\\.well-known/oauth-protected-resource", scope="mcp"$`);

  const makeAgent = async (body: Record<string, unknown>, as: As = human): Promise<Agent> => {
    const res = await as('POST', '/v1/identities/agents', body);
    expect(res.status, res.text).toBe(201);
    return { id: res.body.identity.id, key: res.body.key.token };
  };

  async function connect(token: string, onEvent?: (data: any) => void): Promise<Client> {
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    if (onEvent) client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => onEvent(n.params.data));
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const structured = (r: CallToolResult) => r.structuredContent as any;
  const expectToolError = (r: CallToolResult, code: string) => {
    expect(r.isError, JSON.stringify(r)).toBe(true);
    expect(structured(r).error.code, JSON.stringify(r)).toBe(code);
    expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
    return structured(r).error as { code: string; message: string; details?: any };
  };

  const post = (headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) =>
    fetch(mcpUrl(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true, env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000', ALLOWED_ORIGINS: 'https://inspector.example' } });
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    member = await seedUser(gw.databaseUrl, { orgId, email: 'mcp-owner@example.test' });
    human = gw.as(await gw.login(member.email, member.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: SECRET })).status).toBe(201);
    agent = await makeAgent({ name: 'mcp-assistant' });
    manual = await makeAgent({ name: 'mcp-careful', auto_call_on_approve: false });
    sibling = await makeAgent({ name: 'mcp-sibling' });
    sub = await makeAgent({ name: 'mcp-helper', parent_id: agent.id });
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.stop();
    await up?.close();
  });

  describe('authentication', () => {
    it('answers a request without a token with 401 and the protected-resource challenge', async () => {
      const res = await post({});
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(challenge());
      expect(((await res.json()) as any).error.code).toBe('unauthenticated');
      const get = await fetch(mcpUrl(), { headers: { accept: 'text/event-stream' } });
      expect(get.status).toBe(401);
      expect(get.headers.get('www-authenticate')).toBe(challenge());
      await get.body?.cancel();
    });

    it('refuses a dashboard session token, an invalid token and a non-bearer scheme', async () => {
      for (const authorization of [`Bearer ${gw.adminToken}`, 'Bearer osk_not_a_real_key', 'Bearer nonsense', `Basic ${Buffer.from('a:b').toString('base64')}`]) {
        const res = await post({ authorization });
        expect(res.status, authorization).toBe(401);
        if (authorization.startsWith('Bearer')) expect(res.headers.get('www-authenticate')).toMatch(rejected());
        else expect(res.headers.get('www-authenticate')).toBe(challenge());
        expect(((await res.json()) as any).error.code).toBe('unauthenticated');
      }
    });

    it('lets browser-based clients of an allowed origin call with a bearer token (CORS, challenge header exposed)', async () => {
      const pre = await fetch(mcpUrl(), { method: 'OPTIONS', headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      const res = await post({ origin: 'https://inspector.example' });
      expect(res.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);
      await res.body?.cancel();
    });

    it('the challenge leads to the protected-resource metadata', async () => {
      const res = await fetch(`${gw.url}/.well-known/oauth-protected-resource`);
      expect((await res.json()) as any).toMatchObject({ resource: `${gw.url}/mcp`, authorization_servers: [gw.url] });
    });

    it('echoes the request id in JSON-RPC errors and uses the standard codes', async () => {
      const h = { authorization: `Bearer ${agent.key}` };
      const answer = async (headers: Record<string, string>, body: unknown) => {
        const r = await post(headers, body);
        return { status: r.status, body: (await r.json()) as any };
      };
      // A bad MCP-Protocol-Version header: Invalid Request, for the request that was sent.
      const version = await answer({ ...h, 'mcp-protocol-version': '1999-01-01' }, { jsonrpc: '2.0', id: 42, method: 'tools/list' });
      expect(version.status).toBe(400);
      expect(version.body).toMatchObject({ jsonrpc: '2.0', id: 42, error: { code: -32600, message: expect.stringMatching(/MCP-Protocol-Version/) } });
      // Params that do not fit the method: Invalid params (-32602), never -32000 or -32603.
      for (const [id, body] of [
        [43, { jsonrpc: '2.0', id: 43, method: 'tools/call', params: { name: 7 } }],
        [44, { jsonrpc: '2.0', id: 44, method: 'initialize', params: {} }],
        ['s-45', { jsonrpc: '2.0', id: 's-45', method: 'tools/list', params: 'x' }],
        [46, { jsonrpc: '2.0', id: 46, method: 'tools/call', params: { name: 'gateway_search', arguments: 'x' } }],
      ] as const) {
        const r = await answer(h, body);
        expect(r.body, JSON.stringify(body)).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32602 } });
      }
      // Not a JSON-RPC 2.0 message (but valid JSON): Invalid Request, with the id when there is one.
      expect((await answer(h, { jsonrpc: '1.0', id: 47, method: 'tools/list' })).body).toMatchObject({ id: 47, error: { code: -32600 } });
      expect((await answer(h, { jsonrpc: '2.0', id: 48 })).body).toMatchObject({ id: 48, error: { code: -32600 } });
      expect((await answer(h, { jsonrpc: '2.0', id: { x: 1 }, method: 'tools/list' })).body).toMatchObject({ id: null, error: { code: -32600 } });
      // A request with a result, a response with a result and an error: Invalid Request (as on 2026-07-28).
      expect((await answer(h, { jsonrpc: '2.0', id: 51, method: 'tools/list', result: {} })).body).toMatchObject({ id: 51, error: { code: -32600 } });
      expect((await answer(h, { jsonrpc: '2.0', id: 52, result: {}, error: { code: 1, message: 'x' } })).body).toMatchObject({ id: 52, error: { code: -32600 } });
      // Unknown methods were already right: -32601 with the id.
      expect((await answer(h, { jsonrpc: '2.0', id: 49, method: 'nope/nope' })).body).toMatchObject({ id: 49, error: { code: -32601 } });
      // A supported version header and good params still work.
      const ok = await answer({ ...h, 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 50, method: 'tools/list' });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ id: 50, result: { tools: expect.any(Array) } });
    });

    it('refuses a foreign Host or browser Origin (DNS rebinding) with 403 and the envelope; loopback keeps working', async () => {
      const h = { authorization: `Bearer ${agent.key}` };
      // fetch() cannot set Host: talk HTTP by hand for that one.
      const port = new URL(gw.url).port;
      const raw = async (host: string) => {
        const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
          const req = httpRequest({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...h, host, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body) } }, (r) => {
            let text = '';
            r.on('data', (c: Buffer) => (text += c.toString()));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body: text }));
          });
          req.on('error', reject);
          req.end(body);
        });
        return { status: res.status, body: JSON.parse(res.body) as any };
      };
      const evil = await raw('evil.example.com');
      expect(evil.status).toBe(403);
      expect(evil.body).toMatchObject({ error: { code: 'forbidden', message: expect.stringMatching(/ALLOWED_HOSTS/) }, request_id: expect.any(String) });
      expect((await raw(`evil.example.com:${port}`)).status).toBe(403);
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) expect((await raw(host)).status, host).toBe(200);

      const foreign = await post({ ...h, origin: 'http://evil.example.com' });
      expect(foreign.status).toBe(403);
      expect(((await foreign.json()) as any).error.code).toBe('forbidden');
      const pre = await fetch(mcpUrl(), { method: 'OPTIONS', headers: { origin: 'http://evil.example.com', 'access-control-request-method': 'POST' } });
      expect(pre.status).toBe(403);
      const opaque = await post({ ...h, origin: 'null' });
      expect(opaque.status).toBe(403);
      await opaque.body?.cancel();
      const loopbackPage = await post({ ...h, origin: 'http://localhost:6274' }); // e.g. the MCP Inspector
      expect(loopbackPage.status).toBe(200);
      await loopbackPage.body?.cancel();
    });

    it('answers protocol misuse the JSON-RPC way, and DELETE with 405 (no sessions)', async () => {
      const bad = await fetch(mcpUrl(), { method: 'POST', headers: { authorization: `Bearer ${agent.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{nope' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as any).error.code).toBe(-32700);
      const del = await fetch(mcpUrl(), { method: 'DELETE', headers: { authorization: `Bearer ${agent.key}` } });
      expect(del.status).toBe(405);
      const noAccept = await fetch(mcpUrl(), { headers: { authorization: `Bearer ${agent.key}` } });
      expect(noAccept.status).toBe(406);
      const huge = await post({ authorization: `Bearer ${agent.key}` }, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(1100 * 1024) } });
      expect(huge.status).toBe(413);
      expect(((await huge.json()) as any).error.code).toBe(-32600);
    });

    it('applies the per-identity rate limit to gateway_call and gateway_read', async () => {
      // A second gateway on the same database with a tiny limit; the limit is the call service's.
      const limitedGw = await startTestGateway({
        databaseUrl: gw.databaseUrl,
        env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '2', GATEWAY_MASTER_KEY: gw.config.masterKey!.toString('base64') },
      });
      try {
        const limitedAgent = await makeAgent({ name: 'mcp-rate-limited' });
        expect((await human('POST', `/v1/identities/${limitedAgent.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
        const client = new Client({ name: 'mcp-rate-limit', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${limitedGw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${limitedAgent.key}` } } }),
        );
        clients.push(client);
        const args = { service: 'widgets', action: 'get_item', params: { id: '1' } };
        expect(structured(await call(client, 'gateway_call', args)).status).toBe('called');
        expect(structured(await call(client, 'gateway_call', args)).status).toBe('called');
        const limited = expectToolError(await call(client, 'gateway_read', args), 'rate_limited');
        expect(limited.details.retry_after_seconds).toBeGreaterThan(0);
      } finally {
        await limitedGw.stop();
      }
    });
  });

  describe('the tools over an agent key', () => {
    let client: Client;
    beforeAll(async () => {
      client = await connect(agent.key);
    });

    it('lists the gateway tools with strict input schemas, output schemas and annotations; no self-approval', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
      for (const t of tools) {
        expect(t.inputSchema.additionalProperties, t.name).toBe(false);
        expect(t.outputSchema?.type, t.name).toBe('object');
        expect(t.description!.length).toBeGreaterThan(20);
        expect(typeof t.annotations?.readOnlyHint).toBe('boolean');
      }
      const callTool = tools.find((t) => t.name === 'gateway_call')!;
      expect(Object.keys(callTool.inputSchema.properties!).sort()).toEqual(['action', 'approval_id', 'idempotency_key', 'params', 'service', 'verbose']);
      expect(callTool.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
      expect(tools.find((t) => t.name === 'gateway_read')!.annotations).toMatchObject({ readOnlyHint: true });
      expect(tools.find((t) => t.name === 'gateway_search')!.annotations).toMatchObject({ readOnlyHint: true });
    });

    it('gateway_search returns instance, template, action, description, risk, auth status and parameters', async () => {
      const r = await call(client, 'gateway_search', { query: 'read item' });
      expect(r.isError).toBeFalsy();
      const hit = structured(r).results.find((x: any) => x.action === 'get_item');
      expect(hit).toMatchObject({ service: 'widgets', template: 'widgets', description: expect.any(String), risk: 'read', auth_status: expect.any(String) });
      expect(hit.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
      expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
    });

    it('gateway_call runs a covered action at once', async () => {
      const r = await call(client, 'gateway_call', { service: 'widgets', action: 'get_item', params: { id: 'm1' } });
      expect(r.isError).toBeFalsy();
      expect(structured(r)).toMatchObject({ status: 'called', action_description: 'Read item m1', result: { status_code: 200, body: { ok: true, url: '/items/m1' } } });
      expect(typeof structured(r).result.duration_ms).toBe('number');
      expect(up.requests.at(-1)!.headers['x-api-key']).toBe(SECRET);
      expect(JSON.stringify(r)).not.toContain(SECRET);
    });

    it('gateway_call with verbose returns headers and the raw body', async () => {
      const r = await call(client, 'gateway_call', { service: 'widgets', action: 'get_item', params: { id: 'v1' }, verbose: true });
      expect(structured(r)).toMatchObject({ status: 'called', result: { status_code: 200, headers: expect.any(Object), body: expect.any(String) } });
    });

    it('rejects every other input shape with an invalid_request tool error', async () => {
      const id = '00000000-0000-4000-8000-000000000000';
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ approval_id: id, service: 'widgets' }, /approval_id .* alone/],
        [{ approval_id: id, action: 'get_item', params: {} }, /alone, without action, params/],
        [{ service: 'widgets', action: 'get_item', params: { id: 'x' }, bogus: true }, /bogus/],
        [{ service: 'widgets', method: 'GET', path: '/items/1' }, /raw HTTP/],
        [{ url: 'https://example.com/' }, /raw HTTP/],
        [{ service: 'widgets' }, /needs action/],
        [{}, /needs service and action/],
        [{ approval_id: 'not-a-uuid' }, /approval_id: must be a UUID/],
        [{ service: 'widgets', action: 'get_item', params: 'x' }, /params/],
      ];
      for (const [args, message] of cases) {
        const err = expectToolError(await call(client, 'gateway_call', args), 'invalid_request');
        expect(err.message, JSON.stringify(args)).toMatch(message);
      }
      // The action's own parameter validation surfaces the same way.
      expectToolError(await call(client, 'gateway_call', { service: 'widgets', action: 'get_item', params: {} }), 'invalid_request');
      expectToolError(await call(client, 'gateway_call', { service: 'nowhere', action: 'x' }), 'not_found');
    });

    it('gateway_read runs read actions and refuses the others', async () => {
      const ok = await call(client, 'gateway_read', { service: 'widgets', action: 'get_item', params: { id: 'r1' } });
      expect(structured(ok)).toMatchObject({ status: 'called', result: { status_code: 200 } });
      const before = up.requests.length;
      const err = expectToolError(await call(client, 'gateway_read', { service: 'widgets', action: 'create_item', params: { name: 'nope' } }), 'forbidden');
      expect(err.message).toMatch(/read actions only/);
      expect(up.requests.length).toBe(before);
      expect(expectToolError(await call(client, 'gateway_read', { service: 'widgets', method: 'GET', path: '/x' }), 'invalid_request').message).toMatch(/raw HTTP/);
    });

    it('gateway_auth: whoami, connections, connect and create_subagent', async () => {
      const who = structured(await call(client, 'gateway_auth', { operation: 'whoami' }));
      expect(who.identity).toMatchObject({ id: agent.id, kind: 'agent', name: 'mcp-assistant' });
      expect(who.chain.map((c: any) => c.id)).toEqual([agent.id, member.userId]);
      expect(who.org.id).toBe(member.orgId);
      expect(who).toMatchObject({ authenticated_via: 'agent_key', self_approve_enabled: false });

      expect(structured(await call(client, 'gateway_auth', { operation: 'connections' }))).toEqual({ connections: [] });
      expect(JSON.stringify(await call(client, 'gateway_auth', { operation: 'connections' }))).not.toContain('gh-secret-value');
      // No OAuth app configured for the provider yet: a clear error.
      expectToolError(await call(client, 'gateway_auth', { operation: 'connect', provider: 'github' }), 'invalid_request');
      const app = await gw.as(gw.adminToken)('PUT', '/v1/oauth-apps/github', {
        client_id: 'gh-client',
        client_secret: 'gh-secret-value',
        authorization_url: 'https://github.com/login/oauth/authorize',
        token_url: 'https://github.com/login/oauth/access_token',
      });
      expect([200, 201]).toContain(app.status);
      const started = structured(await call(client, 'gateway_auth', { operation: 'connect', provider: 'github', scopes: ['repo'] }));
      const authUrl = new URL(started.auth_url);
      expect(authUrl.origin + authUrl.pathname).toBe('https://github.com/login/oauth/authorize');
      expect(authUrl.searchParams.get('scope')).toBe('repo');
      expect(started.connection).toMatchObject({ provider: 'github', status: 'pending' });
      // It belongs to the agent's human, who sees it as pending.
      const mine = (await human('GET', '/v1/connections')).body.connections;
      expect(mine.map((c: any) => c.id)).toContain(started.connection.id);
      expectToolError(await call(client, 'gateway_auth', { operation: 'connect' }), 'invalid_request');
      expectToolError(await call(client, 'gateway_auth', { operation: 'whoami', name: 'x' }), 'invalid_request');

      const created = structured(await call(client, 'gateway_auth', { operation: 'create_subagent', name: 'mcp-spawned', inherit_permissions: true }));
      expect(created.subagent).toMatchObject({ kind: 'subagent', name: 'mcp-spawned', parent_id: agent.id, inherit_permissions: true });
      expect(created.key.token).toMatch(/^osk_/);
      const child = await connect(created.key.token);
      expect(structured(await call(child, 'gateway_auth', { operation: 'whoami' })).identity.id).toBe(created.subagent.id);
      // Inheriting: covered wherever its parent is.
      expect(structured(await call(child, 'gateway_call', { service: 'widgets', action: 'get_item', params: { id: 'c1' } })).status).toBe('called');
    });

    it('gateway_approve_self is neither listed nor callable without an MCP binding', async () => {
      const err = expectToolError(await call(client, 'gateway_approve_self', { approval_id: '00000000-0000-4000-8000-000000000000', resolution: 'allow' }), 'forbidden');
      expect(err.message).toMatch(/self-approval is not enabled/);
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/not found/);
    });
  });

  describe('approvals', () => {
    it('an uncovered call returns pending_approval with every field; a person resolves; the agent resumes by approval_id', async () => {
      const client = await connect(manual.key);
      const before = up.requests.length;
      const r = await call(client, 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'mcp-report', folder: 'q4' } });
      expect(r.isError).toBeFalsy();
      const p = structured(r);
      expect(Object.keys(p).sort()).toEqual(
        ['action_description', 'approval_id', 'approval_url', 'auto_call_on_approve', 'call_id', 'expires_at', 'permission_keys', 'relationship', 'risk', 'status', 'suggested_tiers'].sort(),
      );
      expect(p).toMatchObject({
        status: 'pending_approval',
        approval_url: `${gw.url}/approvals/${p.approval_id}`,
        action_description: 'Create item "mcp-report" in q4',
        relationship: 'self',
        auto_call_on_approve: false,
        risk: 'med',
        permission_keys: ['widgets:create_item:mcp-report'],
      });
      expect(Date.parse(p.expires_at)).toBeGreaterThan(Date.now());
      expect(p.suggested_tiers.map((t: any) => t.keys)).toEqual([['widgets:create_item:mcp-report'], ['widgets:create_item:*'], ['widgets:*:*']]);
      expect(up.requests.length).toBe(before);

      expectToolError(await call(client, 'gateway_call', { approval_id: p.approval_id }), 'conflict');
      expect((await human('POST', `/v1/approvals/${p.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
      const resumed = await call(client, 'gateway_call', { approval_id: p.approval_id, verbose: true });
      expect(structured(resumed)).toMatchObject({ status: 'called', result: { status_code: 200, body: { ok: true, method: 'POST' } } });
      expect(up.requests.length).toBe(before + 1);
    });

    it('a denial reads as status denied with a reason', async () => {
      const client = await connect(manual.key);
      const p = structured(await call(client, 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'mcp-denied' } }));
      expect((await human('POST', `/v1/approvals/${p.approval_id}/resolve`, { decision: 'deny', reason: 'not today' })).status).toBe(200);
      expect(structured(await call(client, 'gateway_call', { approval_id: p.approval_id }))).toEqual({ status: 'denied', reason: 'not today', call_id: expect.any(String) });
    });

    it("gateway_approve: a non-ancestor gets not_in_your_chain; the subagent's parent resolves", async () => {
      const subClient = await connect(sub.key);
      const p = structured(await call(subClient, 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'from-sub' } }));
      expect(p).toMatchObject({ status: 'pending_approval', relationship: 'self' });

      const siblingClient = await connect(sibling.key);
      expectToolError(await call(siblingClient, 'gateway_approve', { approval_id: p.approval_id, resolution: 'allow' }), 'not_in_your_chain');
      const parent = await connect(agent.key);
      expect(expectToolError(await call(parent, 'gateway_approve', { approval_id: p.approval_id, resolution: 'allow_remember' }), 'invalid_request').message).toMatch(/remember_keys.*ttl/s);
      expectToolError(await call(parent, 'gateway_approve', { approval_id: p.approval_id, resolution: 'allow', ttl: '1h' }), 'invalid_request');
      expectToolError(await call(parent, 'gateway_approve', { approval_id: p.approval_id, resolution: 'maybe' }), 'invalid_request');
      expectToolError(await call(subClient, 'gateway_approve', { approval_id: p.approval_id, resolution: 'allow' }), 'forbidden');

      const r = await call(parent, 'gateway_approve', { approval_id: p.approval_id, resolution: 'allow' });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(structured(r)).toMatchObject({ id: p.approval_id, status: 'allowed', relationship: 'downstream', derived_keys: ['widgets:create_item:from-sub'], execution: { status: 'pending' } });
      expectToolError(await call(parent, 'gateway_approve', { approval_id: p.approval_id, resolution: 'deny' }), 'conflict');
    });
  });

  describe('the SSE notification channel', () => {
    it('notifies the requester when its approval is resolved and executed (raw stream and the SDK client)', async () => {
      const viaSdk: any[] = [];
      const client = await connect(manual.key, (data) => viaSdk.push(data));
      const controller = new AbortController();
      const res = await fetch(mcpUrl(), { headers: { authorization: `Bearer ${manual.key}`, accept: 'text/event-stream' }, signal: controller.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const raw: any[] = [];
      const reading = (async () => {
        const parser = new SseParser();
        try {
          for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) for (const d of parser.push(chunk)) raw.push(JSON.parse(d));
        } catch {
          /* aborted */
        }
      })();
      try {
        const p = structured(await call(client, 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'sse-item' } }));
        expect(p.status).toBe('pending_approval');
        await human('POST', `/v1/approvals/${p.approval_id}/resolve`, { decision: 'allow_once' });
        const resolved = await until(async () => raw.filter((m) => m.params?.data?.approval_id === p.approval_id), (l) => l.length >= 1);
        // Only transitions after the call answered: resolved, executed (the raise came with the result).
        expect(resolved[0]).toEqual({
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: 'info', logger: 'gateway', data: expect.objectContaining({ type: 'approval.resolved', approval_id: p.approval_id, status: 'allowed', decision: 'allow' }) },
        });
        expect(resolved[0].params.data.execution).toMatchObject({ status: 'pending' });
        await call(client, 'gateway_call', { approval_id: p.approval_id });
        const executed: any = await until(async () => raw.find((m) => m.params?.data?.approval_id === p.approval_id && m.params.data.type === 'approval.executed'), Boolean);
        expect(executed.params.data.execution).toMatchObject({ status: 'executed', triggered_by: 'agent', http_status_code: 200 });
        // The SDK client's own GET stream received them too.
        await until(async () => viaSdk.filter((d) => d.approval_id === p.approval_id).map((d) => d.type), (t) => t.includes('approval.resolved') && t.includes('approval.executed'));
        // Other agents hear nothing of it.
        expect(raw.every((m) => m.params.data.approval_id === p.approval_id || m.params.data.type)).toBe(true);
      } finally {
        controller.abort();
        await reading;
      }
    });
  });

  describe('the stdio shim (gateway mcp)', () => {
    function shim(env: Record<string, string>) {
      const child = spawn(process.execPath, [CLI, 'mcp'], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      }) as ChildProcessWithoutNullStreams;
      const lines: any[] = [];
      let stderr = '';
      let buf = '';
      child.stdout.on('data', (c: Buffer) => {
        buf += c.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) !== -1) {
          lines.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
      });
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n');
      const reply = (id: number): Promise<any> => until(async () => lines.find((l) => l.id === id), Boolean, 20_000).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${stderr}`)));
      return { child, lines, send, reply, exited, stderr: () => stderr };
    }

    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-test', version: '1' } } };

    it('forwards initialize, tools/list and gateway_call over stdin/stdout with an agent key', async () => {
      const s = shim({ GATEWAY_URL: gw.url, GATEWAY_AGENT_KEY: agent.key, GATEWAY_CONFIG: path.join(os.tmpdir(), 'no-such-gateway-config.json') });
      try {
        s.send(initialize);
        expect((await s.reply(1)).result).toMatchObject({ protocolVersion: '2025-06-18', serverInfo: { name: 'agent-action-gateway' }, capabilities: { tools: {} } });
        s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        s.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
        expect((await s.reply(2)).result.tools.map((t: any) => t.name).sort()).toEqual([...TOOLS].sort());
        s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'gateway_call', arguments: { service: 'widgets', action: 'get_item', params: { id: 'stdio' } } } });
        expect((await s.reply(3)).result.structuredContent).toMatchObject({ status: 'called', result: { status_code: 200, body: { url: '/items/stdio' } } });
        s.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'gateway_call', arguments: { approval_id: 'x', service: 'widgets' } } });
        expect((await s.reply(4)).result).toMatchObject({ isError: true, structuredContent: { error: { code: 'invalid_request' } } });
        s.child.stdin.write('not json\n');
        await until(async () => s.lines.find((l) => l.id === null && l.error?.code === -32700), Boolean);
        // Notifications get no reply: exactly one line per request (plus the parse error).
        expect(s.lines.filter((l) => l.id !== null).map((l) => l.id).sort()).toEqual([1, 2, 3, 4]);
      } finally {
        s.child.stdin.end();
      }
      expect(await s.exited).toBe(0);
    });

    it('answers requests with a JSON-RPC error when the credentials are refused', async () => {
      const s = shim({ GATEWAY_URL: gw.url, GATEWAY_AGENT_KEY: 'osk_revoked_or_wrong', GATEWAY_CONFIG: path.join(os.tmpdir(), 'no-such-gateway-config.json') });
      s.send(initialize);
      expect((await s.reply(1)).error).toMatchObject({ code: -32001, message: expect.stringMatching(/HTTP 401/) });
      s.child.stdin.end();
      expect(await s.exited).toBe(0);
    });

    it('without any credentials it says how to get some', async () => {
      const s = shim({ GATEWAY_CONFIG: path.join(os.tmpdir(), 'no-such-gateway-config.json') });
      s.child.stdin.end();
      expect(await s.exited).toBe(78);
      expect(s.stderr()).toMatch(/gateway mcp login/);
    });
  });

  describe('OAuth (MCP Authorization profile) with the SDK client', () => {
    const REDIRECT_URI = 'http://127.0.0.1:9/callback';

    class TestProvider implements OAuthClientProvider {
      info: OAuthClientInformationMixed | undefined;
      saved: OAuthTokens | undefined;
      verifier = '';
      authorizationUrl: URL | undefined;
      get redirectUrl() {
        return REDIRECT_URI;
      }
      get clientMetadata(): OAuthClientMetadata {
        return { client_name: 'SDK test client', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
      }
      clientInformation() {
        return this.info;
      }
      saveClientInformation(info: OAuthClientInformationMixed) {
        this.info = info;
      }
      tokens() {
        return this.saved;
      }
      saveTokens(tokens: OAuthTokens) {
        this.saved = tokens;
      }
      redirectToAuthorization(url: URL) {
        this.authorizationUrl = url;
      }
      saveCodeVerifier(v: string) {
        this.verifier = v;
      }
      codeVerifier() {
        return this.verifier;
      }
    }

    const provider = new TestProvider();
    let client: Client;
    let agentId: string;
    let bindingId: string;
    const connectOAuth = async () => {
      const c = new Client({ name: 'mcp-oauth-test', version: '1.0.0' });
      await c.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
      clients.push(c);
      return c;
    };

    // The SDK client registers with `scope` = the protected resource's scopes_supported ("mcp").
    it('accepts the dynamic registration body the SDK client sends (scope "mcp")', async () => {
      const res = await fetch(`${gw.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...provider.clientMetadata, scope: 'mcp' }),
      });
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(body.client_secret).toBeUndefined();
    });

    it('401 → discovery → dynamic registration → authorize with PKCE (sign-in + consent) → token → connected', async () => {
      // No client information yet: the SDK discovers, then registers the client itself.
      expect(provider.info).toBeUndefined();
      const first = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
      await expect(new Client({ name: 'mcp-oauth-test', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
      expect(provider.info?.client_id).toBeTruthy();
      const authUrl = provider.authorizationUrl!;
      expect(authUrl.origin + authUrl.pathname).toBe(`${gw.url}/oauth/authorize`);
      expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authUrl.searchParams.get('resource')).toBe(`${gw.url}/mcp`);

      const back = await signInAndConsent(new Browser(gw.url), authUrl.href, member, 'SDK agent');
      expect(back.origin + back.pathname).toBe(REDIRECT_URI);
      await first.finishAuth(back.searchParams.get('code')!);
      expect(provider.saved?.access_token).toBeTruthy();
      expect(provider.saved?.refresh_token).toBeTruthy();

      client = await connectOAuth();
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
      const who = structured(await call(client, 'gateway_auth', { operation: 'whoami' }));
      expect(who).toMatchObject({ authenticated_via: 'oauth', self_approve_enabled: false, identity: { kind: 'agent', name: 'SDK agent' } });
      agentId = who.identity.id;
      bindingId = (await human('GET', '/v1/oauth/bindings')).body.bindings.find((b: any) => b.agent_id === agentId).id;
    });

    it('gateway_call raises an approval, a person resolves it over REST, the agent reads the result by approval_id', async () => {
      const p = structured(await call(client, 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'oauth-item' } }));
      expect(p).toMatchObject({ status: 'pending_approval', relationship: 'self', auto_call_on_approve: true });
      expect((await human('POST', `/v1/approvals/${p.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
      await until(() => human('GET', `/v1/approvals/${p.approval_id}`), (r) => r.body.execution?.status === 'executed');
      expect(structured(await call(client, 'gateway_call', { approval_id: p.approval_id }))).toMatchObject({ status: 'called', result: { status_code: 200 } });
    });

    it('gateway_approve_self appears and disappears with the binding flag, re-checked on every call', async () => {
      expect((await human('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: true })).status).toBe(200);
      const listed = (await client.listTools()).tools.map((t) => t.name);
      expect(listed).toContain('gateway_approve_self');
      expect(structured(await call(client, 'gateway_auth', { operation: 'whoami' })).self_approve_enabled).toBe(true);

      const p = structured(await call(client, 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'self-approved' } }));
      expect(p.status).toBe('pending_approval');
      const r = await call(client, 'gateway_approve_self', { approval_id: p.approval_id, resolution: 'allow' });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(structured(r)).toMatchObject({ id: p.approval_id, status: 'allowed', relationship: 'self', execution: { status: 'pending' } });
      const view = await human('GET', `/v1/approvals/${p.approval_id}`);
      expect(view.body).toMatchObject({ status: 'allowed', resolved_by: member.userId });

      // Only its own approvals: a sibling's approval is not reachable this way.
      const other = structured(await call(await connect(sibling.key), 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'not-yours' } }));
      expectToolError(await call(client, 'gateway_approve_self', { approval_id: other.approval_id, resolution: 'allow' }), 'not_found');

      const another = structured(await call(client, 'gateway_call', { service: 'widgets', action: 'create_item', params: { name: 'after-off' } }));
      expect((await human('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: false })).status).toBe(200);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('gateway_approve_self');
      expect(expectToolError(await call(client, 'gateway_approve_self', { approval_id: another.approval_id, resolution: 'allow' }), 'forbidden').message).toMatch(/not enabled/);
      expect((await human('GET', `/v1/approvals/${another.approval_id}`)).body.status).toBe('pending');
    });

    it('sends notifications/tools/list_changed on the agent’s stream when self-approval is turned on or off (tools.listChanged is declared)', async () => {
      const stream = await openSse(`${gw.url}/mcp`, { authorization: `Bearer ${provider.saved!.access_token}` });
      try {
        expect(stream.status).toBe(200);
        expect((await human('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: true })).status).toBe(200);
        await stream.waitFor((e) => e.data?.method === 'notifications/tools/list_changed');
        expect((await human('PATCH', `/v1/oauth/bindings/${bindingId}`, { self_approve_enabled: false })).status).toBe(200);
        await until(async () => stream.events.filter((e) => e.data?.method === 'notifications/tools/list_changed').length, (n) => n === 2);
      } finally {
        stream.close();
      }
    });

    it('refreshes an expired access token (rotating the refresh token), then stops working once revoked', async () => {
      const before = { ...provider.saved! };
      provider.saved = { ...before, access_token: 'expired-or-garbage' };
      const who = structured(await call(client, 'gateway_auth', { operation: 'whoami' }));
      expect(who.identity.id).toBe(agentId);
      expect(provider.saved.access_token).not.toBe('expired-or-garbage');
      expect(provider.saved.refresh_token).toBeTruthy();
      expect(provider.saved.refresh_token).not.toBe(before.refresh_token);

      const revoke = await fetch(`${gw.url}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: provider.saved.refresh_token!, token_type_hint: 'refresh_token', client_id: String(provider.info!.client_id) }).toString(),
      });
      expect(revoke.status).toBe(200);
      const res = await post({ authorization: `Bearer ${provider.saved.access_token}` });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(rejected());
      // The SDK client cannot refresh either: the revoked refresh token is an invalid grant.
      await expect(call(client, 'gateway_auth', { operation: 'whoami' })).rejects.toThrow(/grant/i);
    });
  });

  describe('gateway mcp login, then the shim on the stored OAuth credentials', () => {
    it('signs in with code + PKCE on a loopback redirect, writes 0600 credentials, and the shim refreshes them', async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-cli-'));
      const file = path.join(dir, 'credentials.json');
      const env = { PATH: process.env.PATH ?? '', HOME: dir, GATEWAY_CONFIG: file };
      const login = spawn(process.execPath, [CLI, 'mcp', 'login', '--url', gw.url, '--no-browser'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      login.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((resolve) => login.once('exit', (code) => resolve(code)));
      const authUrl = await until(async () => /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(stderr)?.[1], Boolean, 20_000);
      const back = await signInAndConsent(new Browser(gw.url), authUrl!, member, 'CLI agent');
      expect(back.hostname).toBe('127.0.0.1');
      expect(back.pathname).toBe('/callback');
      const landing = await fetch(back);
      expect(landing.status).toBe(200);
      expect(await exited).toBe(0);

      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const creds = JSON.parse(await readFile(file, 'utf8'));
      expect(creds).toMatchObject({ url: gw.url, client_id: expect.any(String), access_token: expect.any(String), refresh_token: expect.any(String) });
      expect(Date.parse(creds.expires_at)).toBeGreaterThan(Date.now());

      // The stored access token "expired": the shim refreshes first, and stores the rotated pair.
      await writeFile(file, JSON.stringify({ ...creds, expires_at: new Date(Date.now() - 1000).toISOString() }), { mode: 0o600 });
      const child = spawn(process.execPath, [CLI, 'mcp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const shimExited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'gateway_auth', arguments: { operation: 'whoami' } } }) + '\n');
      const line = await until(async () => out.split('\n').find((l) => l.includes('"id":7')), Boolean, 20_000).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${stderr}`)));
      child.stdin.end();
      expect(await shimExited).toBe(0);
      expect(JSON.parse(line!).result.structuredContent).toMatchObject({ authenticated_via: 'oauth', identity: { name: 'CLI agent' } });
      const rotated = JSON.parse(await readFile(file, 'utf8'));
      expect(rotated.refresh_token).not.toBe(creds.refresh_token);
      expect(rotated.access_token).not.toBe(creds.access_token);
      expect(Date.parse(rotated.expires_at)).toBeGreaterThan(Date.now());
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    });
  });

  it('never logs a bearer token or the upstream secret', () => {
    const logs = gw.logs.join('\n');
    expect(logs).not.toContain(agent.key);
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}/);
    expect(logs).not.toContain('MCP tool failed');
  });
});
