// The non-HTTP runtimes end to end. `mcp`: a real MCP server (the official SDK's McpServer over
// Streamable HTTP) on loopback, called through the gateway's normal call path. `platform`: the
// built-in `gateway` service (services/gateway.yaml), run in-process as the calling agent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../../server/errors.ts';
import type { ExecutorDeps } from '../../server/execution/execute.ts';
import { mcpRuntime } from '../../server/execution/runtimes/mcp.ts';
import { loadServiceDocument } from '../../server/registry/loader.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { until } from '../support/wait.ts';

const TOKEN = 'mcp_tok_KNOWN_SECRET_1357';


interface McpTestServer {
  url: string;
  /** Every HTTP request: its method, JSON-RPC method (POST) and whether the bearer token matched. */
  seen: Array<{ method: string; rpc: string | null; authorized: boolean }>;
  close(): Promise<void>;
}

/** A stateless MCP server: a fresh McpServer + transport per POST, as the SDK's examples do. */
async function startMcpServer(): Promise<McpTestServer> {
  const seen: McpTestServer['seen'] = [];
  const tools = () => {
    const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } }, ({ a, b }) => ({
      content: [{ type: 'text', text: `the sum is ${a + b}` }],
      structuredContent: { sum: a + b },
    }));
    server.registerTool('fail', { description: 'Always fails', inputSchema: { reason: z.string() } }, ({ reason }) => ({
      content: [{ type: 'text', text: `quota exceeded: ${reason}` }],
      isError: true,
    }));
    server.registerTool('echo', { description: 'Echoes JSON', inputSchema: { text: z.string() } }, ({ text }) => ({
      content: [{ type: 'text', text: JSON.stringify({ echoed: text }) }],
    }));
    server.registerTool('slow', { description: 'Sleeps', inputSchema: { ms: z.number() } }, async ({ ms }) => {
      await new Promise((r) => setTimeout(r, ms));
      return { content: [{ type: 'text', text: 'done' }] };
    });
    return server;
  };
  const httpServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const authorized = req.headers.authorization === `Bearer ${TOKEN}`;
        const text = Buffer.concat(chunks).toString('utf8');
        const body: unknown = text ? JSON.parse(text) : undefined;
        seen.push({ method: req.method ?? '', rpc: (body as { method?: string } | undefined)?.method ?? null, authorized });
        if (!authorized) return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
        if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
        const server = tools();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
      })();
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        httpServer.closeAllConnections();
        httpServer.close(() => resolve());
      }),
  };
}

const objectBody = (properties: Record<string, unknown>, required: string[]) => ({
  required: true,
  content: { 'application/json': { schema: { type: 'object', required, properties, additionalProperties: false } } },
});

/** A runtime-mcp template: bearer auth from the vault, one action per tool (plus an alias and a tool the server lacks). */
function mcpServiceDoc(key: string, baseUrl: string, secretName = 'TOOLS_TOKEN') {
  const num = { type: 'number' };
  return {
    openapi: '3.1.0',
    info: { title: `Tools (${key})`, key, version: '1' },
    runtime: 'mcp',
    mcp: { url: `${baseUrl}/mcp` },
    servers: [{ url: baseUrl }],
    components: { securitySchemes: { token: { type: 'http', scheme: 'bearer', default_secret_name: secretName } } },
    security: [{ token: [] }],
    paths: {
      '/add': { post: { operationId: 'add', summary: 'Add {a} and {b}', risk: 'read', requestBody: objectBody({ a: num, b: num }, ['a', 'b']) } },
      '/plus': { post: { operationId: 'plus', tool: 'add', summary: 'Add {a} and {b} (alias)', risk: 'read', requestBody: objectBody({ a: num, b: num }, ['a', 'b']) } },
      '/fail': { post: { operationId: 'fail', summary: 'Fail because {reason}', requestBody: objectBody({ reason: { type: 'string' } }, ['reason']) } },
      '/echo': { post: { operationId: 'echo', summary: 'Echo {text}', requestBody: objectBody({ text: { type: 'string' } }, ['text']) } },
      '/missing': { post: { operationId: 'missing', summary: 'A tool the server does not have' } },
      '/slow': { post: { operationId: 'slow', summary: 'Sleep {ms} ms', requestBody: objectBody({ ms: num }, ['ms']) } },
    },
  };
}

describe('runtimes', () => {
  let gw: TestGateway;
  let mcp: McpTestServer;
  let deadUrl: string;
  let human: ReturnType<TestGateway['as']>;
  let agent: { id: string; key: string; call: ReturnType<TestGateway['as']> };
  let sibling: { id: string; key: string; call: ReturnType<TestGateway['as']> };

  const makeAgent = async (body: Record<string, unknown>) => {
    const res = await human('POST', '/v1/identities/agents', body);
    expect(res.status).toBe(201);
    return { id: res.body.identity.id as string, key: res.body.key.token as string, call: gw.as(res.body.key.token) };
  };
  const allow = async (identityId: string, pattern: string) => expect((await human('POST', `/v1/identities/${identityId}/rules`, { effect: 'allow', pattern })).status).toBe(201);

  beforeAll(async () => {
    mcp = await startMcpServer();
    // A port that was just free and is now closed: connection refused.
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
    await new Promise((resolve) => dead.close(resolve));

    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'owner@example.test' });
    human = gw.as(await gw.login(m.email, m.password));
    for (const document of [mcpServiceDoc('tools', mcp.url), mcpServiceDoc('tools-down', deadUrl), mcpServiceDoc('tools-badauth', mcp.url, 'WRONG_TOKEN')]) {
      const res = await admin('POST', '/v1/templates', { scope: 'org', document });
      expect(res.status, res.text).toBe(201);
    }
    expect((await human('POST', '/v1/secrets', { name: 'TOOLS_TOKEN', value: TOKEN })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WRONG_TOKEN', value: 'not-the-token' })).status).toBe(201);
    agent = await makeAgent({ name: 'assistant' });
    sibling = await makeAgent({ name: 'sibling' });
    for (const pattern of ['tools:add:*', 'tools:plus:*', 'tools:fail:*', 'tools:missing:*', 'tools-down:add:*', 'tools-badauth:add:*']) await allow(agent.id, pattern);
    await allow(agent.id, 'gateway:list_pending_approvals:*');
    await allow(agent.id, 'gateway:create_subagent:*');
    await allow(sibling.id, 'gateway:list_pending_approvals:*');
  });
  afterAll(async () => {
    await gw?.stop();
    await mcp?.close();
  });

  describe('mcp', () => {
    it('calls a tool with the vault bearer token and maps structuredContent to the body', async () => {
      const before = mcp.seen.length;
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools', action: 'add', params: { a: 2, b: 3 } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ status: 'called', action_description: 'Add 2 and 3', result: { status_code: 200, body: { sum: 5 } } });
      expect(typeof res.body.result.duration_ms).toBe('number');
      const exchange = mcp.seen.slice(before);
      expect(exchange.every((r) => r.authorized)).toBe(true);
      expect(exchange.map((r) => r.rpc)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
      expect(res.text).not.toContain(TOKEN);
    });

    it('calls the tool an operation names with x-gateway-tool', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools', action: 'plus', params: { a: 40, b: 2 } });
      expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200, body: { sum: 42 } } });
    });

    it('returns the raw tool result when verbose', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools', action: 'add', params: { a: 1, b: 1 }, verbose: true });
      expect(res.body.result).toMatchObject({ status_code: 200, headers: { 'content-type': 'application/json' } });
      expect(JSON.parse(res.body.result.body)).toMatchObject({ structuredContent: { sum: 2 }, content: [{ type: 'text', text: 'the sum is 2' }] });
    });

    it('maps a tool error (isError) to a called result with status_code 502 and the tool text', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools', action: 'fail', params: { reason: 'daily' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'called', result: { status_code: 502, body: 'quota exceeded: daily' } });
    });

    it('rejects a tool the server does not list as invalid_request', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools', action: 'missing' });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { tool: 'missing' } });
    });

    it('reports a server that is down as upstream_unreachable', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools-down', action: 'add', params: { a: 1, b: 2 } });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('upstream_unreachable');
    });

    it('reports a rejected token as upstream_error with the HTTP status', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools-badauth', action: 'add', params: { a: 1, b: 2 } });
      expect(res.status).toBe(502);
      expect(res.body.error).toMatchObject({ code: 'upstream_error', details: { http_status: 401 } });
      expect(res.text).not.toContain('not-the-token');
    });

    it('gives up after the outbound timeout with upstream_timeout', async () => {
      const loaded = await loadServiceDocument(mcpServiceDoc('tools', mcp.url), 'test');
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
      const service = loaded.service;
      const deps: ExecutorDeps = {
        secretValue: async () => TOKEN,
        connectionToken: async () => {
          throw new Error('no connections here');
        },
        outbound: { policy: { allowPrivate: true, allowHosts: new Set() }, timeoutMs: 400, maxResponseBytes: 1 << 20 },
      };
      const started = Date.now();
      const err = await mcpRuntime(deps, {
        orgId: 'org',
        instance: {
          binding: { name: 'tools', templateKey: 'tools', secretName: null, connectionId: null, scope: 'implicit', id: null },
          service,
          origin: 'org',
          credentials: [{ type: 'secret', method: 'token', secretName: 'TOOLS_TOKEN', available: true }],
          authStatus: 'ready',
        },
        action: service.actions.get('slow')!,
        request: { kind: 'action', params: { ms: 5000 } },
        verbose: false,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('upstream_timeout');
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('replays an approved mcp call; the execution record says runtime mcp', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'tools', action: 'echo', params: { text: 'hello' } });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'pending_approval', permission_keys: ['tools:echo:*'] });
      const id = res.body.approval_id as string;
      const resolved = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' });
      expect(resolved.status).toBe(200);
      expect(resolved.body.execution).toMatchObject({ status: 'pending', runtime: 'mcp' });
      const done = await until(() => human('GET', `/v1/approvals/${id}`), (r) => r.body.execution?.status === 'executed');
      expect(done.body.execution).toMatchObject({ runtime: 'mcp', http_status_code: 200, result: { status_code: 200, body: { echoed: 'hello' } } });
    });

    it('never logs the token', () => {
      expect(gw.logs.join('\n')).not.toContain(TOKEN);
    });
  });

  describe('platform (services/gateway.yaml)', () => {
    it('ships the gateway service as a built-in platform template', async () => {
      const res = await agent.call('GET', '/v1/services/gateway');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ template: 'gateway', title: 'Gateway', category: 'Platform', tier: 'global' });
      expect(res.body.actions.map((a: { action: string; risk: string }) => [a.action, a.risk])).toEqual([
        ['list_pending_approvals', 'read'],
        ['create_subagent', 'write'],
      ]);
      expect(gw.logs.filter((l) => l.includes('skipping')).join('\n')).not.toContain('gateway.yaml');
    });

    it('lists the caller’s pending approvals in its subtree, and only those', async () => {
      const mine = await agent.call('POST', '/v1/actions/call', { service: 'tools', action: 'echo', params: { text: 'mine' } });
      const theirs = await sibling.call('POST', '/v1/actions/call', { service: 'tools', action: 'echo', params: { text: 'theirs' } });
      expect(mine.body.status).toBe('pending_approval');
      expect(theirs.body.status).toBe('pending_approval');

      const res = await agent.call('POST', '/v1/actions/call', { service: 'gateway', action: 'list_pending_approvals', params: {} });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
      const listed = res.body.result.body.approvals as Array<Record<string, unknown>>;
      const ids = listed.map((a) => a.id);
      expect(ids).toContain(mine.body.approval_id);
      expect(ids).not.toContain(theirs.body.approval_id);
      expect(listed.find((a) => a.id === mine.body.approval_id)).toMatchObject({
        status: 'pending',
        relationship: 'self',
        service: 'tools',
        action: 'echo',
        permission_keys: ['tools:echo:*'],
        requester: { id: agent.id },
      });
      expect(listed.every((a) => a.status === 'pending')).toBe(true);

      const theirList = await sibling.call('POST', '/v1/actions/call', { service: 'gateway', action: 'list_pending_approvals', params: { limit: 5 } });
      expect(theirList.body.result.body.approvals.map((a: { id: string }) => a.id)).toEqual([theirs.body.approval_id]);
    });

    it('creates a subagent under the caller, without returning a key', async () => {
      const res = await agent.call('POST', '/v1/actions/call', { service: 'gateway', action: 'create_subagent', params: { name: 'scout', inherit_permissions: true } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        status: 'called',
        action_description: 'Create subagent "scout"',
        result: { status_code: 201, body: { identity: { kind: 'subagent', name: 'scout', parent_id: agent.id, inherit_permissions: true, status: 'active' }, key: null } },
      });
      expect(res.text).not.toContain('osk_');
      const subId = res.body.result.body.identity.id as string;

      // It exists for REST like any other subagent, created by the agent, with no usable key yet.
      const listed = (await human('GET', '/v1/identities')).body.identities as Array<{ id: string; parent_id: string }>;
      expect(listed.find((i) => i.id === subId)).toMatchObject({ parent_id: agent.id });
      expect(((await agent.call('GET', '/v1/identities')).body.identities as Array<{ id: string }>).map((i) => i.id)).toContain(subId);
      const keys = (await human('GET', `/v1/identities/${subId}/keys`)).body.keys as Array<{ revoked_at: string | null }>;
      expect(keys.every((k) => k.revoked_at !== null)).toBe(true);

      // A key minted over REST works, and inherit_permissions lets the subagent use its parent's rules.
      const minted = await agent.call('POST', `/v1/identities/${subId}/keys`, {});
      expect(minted.status).toBe(201);
      const sub = gw.as(minted.body.token);
      const call = await sub('POST', '/v1/actions/call', { service: 'tools', action: 'add', params: { a: 3, b: 4 } });
      expect(call.body).toMatchObject({ status: 'called', result: { body: { sum: 7 } } });
    });

    it('applies the permission layer: a caller without a rule gets an approval', async () => {
      const res = await sibling.call('POST', '/v1/actions/call', { service: 'gateway', action: 'create_subagent', params: { name: 'nope' } });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'pending_approval', risk: 'med', permission_keys: ['gateway:create_subagent:*'] });
    });

    it('refuses the platform runtime for a custom template', async () => {
      const fake = {
        openapi: '3.1.0',
        info: { title: 'Fake gateway', key: 'fakegw', version: '1' },
        runtime: 'platform',
        servers: [{ url: 'https://gateway.invalid' }],
        paths: { '/subagents': { post: { operationId: 'create_subagent', summary: 'Create {name}', requestBody: objectBody({ name: { type: 'string' } }, ['name']) } } },
      };
      // Refused at registration: nothing is stored, so nothing can be called.
      const reg = await gw.as(gw.adminToken)('POST', '/v1/templates', { scope: 'org', document: fake });
      expect(reg.status).toBe(422);
      expect(reg.body.error.details.problems[0].code).toBe('invalid_runtime');
      await allow(agent.id, 'fakegw:*:*');
      const res = await agent.call('POST', '/v1/actions/call', { service: 'fakegw', action: 'create_subagent', params: { name: 'x' } });
      expect(res.status).toBe(404);
      // Raw HTTP against a non-http runtime is refused up front, not after an approval.
      const raw = await agent.call('POST', '/v1/actions/call', { service: 'gateway', method: 'GET', path: '/approvals' });
      expect(raw.status).toBe(400);
      expect(raw.body.error.message).toMatch(/platform runtime/);
    });
  });
});
