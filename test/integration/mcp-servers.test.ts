// Connected MCP servers (issue 43): an upstream Streamable-HTTP MCP server's tools become actions
// behind the gateway's permissions, approvals and audit. Against the official reference server
// (server-everything, through a relay that counts what reaches it) and a v2-SDK server whose tool
// list the test changes (pins: a changed tool is refused until accepted).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startChangeableServer, startCountingRelay, startEverything, type RunningServer } from '../support/mcp-upstreams.ts';
import { seedUser } from '../support/seed.ts';
import { until } from '../support/wait.ts';

type As = ReturnType<TestGateway['as']>;
const TOKEN = 'mcp_upstream_KNOWN_SECRET_8642';

const deployTool = (description: string): Tool => ({
  name: 'deploy',
  description,
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  annotations: { destructiveHint: false },
});
const statusTool: Tool = { name: 'status', description: 'Show the status', inputSchema: { type: 'object', properties: {} } };

describe('connected MCP servers', () => {
  let gw: TestGateway;
  let everything: RunningServer;
  let relay: Awaited<ReturnType<typeof startCountingRelay>>;
  let changeable: Awaited<ReturnType<typeof startChangeableServer>>;
  let admin: As;
  let member: As;
  const clients: Client[] = [];

  const makeAgent = async () => {
    const res = await member('POST', '/v1/identities/agents', { name: `agent-${clients.length}-${Date.now()}` });
    expect(res.status, res.text).toBe(201);
    return { id: res.body.identity.id as string, key: res.body.key.token as string, call: gw.as(res.body.key.token) };
  };
  const tools = (body: any) => new Map<string, any>(body.tools.map((t: any) => [t.name, t]));

  beforeAll(async () => {
    everything = await startEverything();
    relay = await startCountingRelay(everything.url);
    changeable = await startChangeableServer([deployTool('Deploy the app'), statusTool]);
    gw = await startTestGateway({ env: { UPSTREAM_TIMEOUT_MS: '8000' } });
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'mcp-member@example.test' });
    member = gw.as(await gw.login(m.email, m.password));
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.stop();
    await relay?.close();
    await everything?.close();
    await changeable?.close();
  });

  describe('server-everything', () => {
    let serverId: string;

    it('connects it: every tool discovered, risk from the annotations', async () => {
      const res = await admin('POST', '/v1/mcp-servers', { name: 'everything', url: relay.url });
      expect(res.status, res.text).toBe(201);
      serverId = res.body.id;
      const byName = tools(res.body);
      expect(byName.get('echo')).toMatchObject({ action: 'echo', risk: 'read', annotation_risk: 'read', enabled: true, status: 'active', changed: false });
      expect(byName.get('toggle-simulated-logging')).toMatchObject({ risk: 'write', enabled: true });
      expect(byName.get('gzip-file-as-resource')).toMatchObject({ risk: 'write' });
      expect(byName.size).toBeGreaterThanOrEqual(10);

      const service = await member('GET', '/v1/services/everything');
      expect(service.status, service.text).toBe(200);
      expect(service.body).toMatchObject({ runtime: 'mcp', tier: 'org' });
      const echo = service.body.actions.find((a: any) => a.action === 'echo');
      expect(echo).toMatchObject({ risk: 'read', summary: 'Echo Tool' });
      expect(echo.body_schema).toMatchObject({ properties: { message: { type: 'string' } } });

      const found = await member('GET', '/v1/search?q=echo');
      expect(found.body.results.map((r: any) => `${r.service}:${r.action}`)).toContain('everything:echo');
      const audit = await admin('GET', '/v1/audit?event=mcp_server.connected');
      expect(audit.body.entries.some((e: any) => e.service === 'everything')).toBe(true);
    });

    it('only an admin connects a server for the org; agents manage none', async () => {
      const res = await member('POST', '/v1/mcp-servers', { name: 'mine', url: relay.url });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
      const agent = await makeAgent();
      expect((await agent.call('GET', '/v1/mcp-servers')).status).toBe(403);
      expect((await member('GET', `/v1/mcp-servers/${serverId}`)).status).toBe(200);
    });

    it('echo (read) is covered for a person', async () => {
      const before = relay.toolCalls.length;
      const res = await member('POST', '/v1/actions/call', { service: 'everything', action: 'echo', params: { message: 'hello' } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200, body: 'Echo: hello' } });
      expect(relay.toolCalls.slice(before)).toEqual(['echo']);
    });

    it('a write tool raises an approval for an agent; allowed, it is sent once and audited', async () => {
      const agent = await makeAgent();
      const before = relay.toolCalls.length;
      const res = await agent.call('POST', '/v1/actions/call', { service: 'everything', action: 'toggle-simulated-logging', params: {} });
      expect(res.status, res.text).toBe(202);
      expect(res.body).toMatchObject({ status: 'pending_approval', permission_keys: ['everything:toggle-simulated-logging:*'] });
      expect(relay.toolCalls.length).toBe(before);
      const id = res.body.approval_id as string;
      expect((await member('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
      const done = await until(() => member('GET', `/v1/approvals/${id}`), (r) => r.body.execution?.status === 'executed', 60_000);
      expect(done.body.execution).toMatchObject({ runtime: 'mcp', result: { status_code: 200 } });
      const resumed = await agent.call('POST', '/v1/actions/call', { approval_id: id });
      expect(resumed.body.status).toBe('called');
      expect(relay.toolCalls.slice(before)).toEqual(['toggle-simulated-logging']);
      const audit = await admin('GET', `/v1/audit?service=everything&identity=${agent.id}`);
      const events = audit.body.entries.map((e: any) => e.event);
      expect(events).toEqual(expect.arrayContaining(['approval.raised', 'approval.resolved', 'execution.executed']));
    });

    it('the same through /mcp from the official SDK client: gateway_search finds it, gateway_call raises, resumes once', async () => {
      const agent = await makeAgent();
      const client = new Client({ name: 'mcp-servers-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.key}` } } }));
      clients.push(client);
      const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
      const search = (await call('gateway_search', { query: 'toggle simulated logging' })).structuredContent as any;
      expect(search.results.some((r: any) => r.service === 'everything' && r.action === 'toggle-simulated-logging' && r.risk === 'write')).toBe(true);

      const before = relay.toolCalls.length;
      const pending = (await call('gateway_call', { service: 'everything', action: 'toggle-simulated-logging', params: {} })).structuredContent as any;
      expect(pending).toMatchObject({ status: 'pending_approval', permission_keys: ['everything:toggle-simulated-logging:*'] });
      expect((await member('POST', `/v1/approvals/${pending.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
      const resumed = (await call('gateway_call', { approval_id: pending.approval_id })).structuredContent as any;
      expect(resumed).toMatchObject({ status: 'called', result: { status_code: 200 } });
      expect((await call('gateway_call', { approval_id: pending.approval_id })).structuredContent).toMatchObject({ status: 'called' });
      expect(relay.toolCalls.slice(before)).toEqual(['toggle-simulated-logging']);
    });

    it('an admin override of risk wins over the annotations', async () => {
      const res = await admin('PATCH', `/v1/mcp-servers/${serverId}/tools/echo`, { risk: 'write' });
      expect(res.status, res.text).toBe(200);
      expect(tools(res.body).get('echo')).toMatchObject({ risk: 'write', annotation_risk: 'read', override: { risk: 'write' } });
      const service = await member('GET', '/v1/services/everything');
      expect(service.body.actions.find((a: any) => a.action === 'echo').risk).toBe('write');
      const cleared = await admin('PATCH', `/v1/mcp-servers/${serverId}/tools/echo`, { risk: null });
      expect(tools(cleared.body).get('echo')).toMatchObject({ risk: 'read', override: {} });
    });
  });

  describe('a server whose tools change', () => {
    let serverId: string;

    it('connects it with a vault bearer token (bound to its host); a tool without annotations is delete', async () => {
      expect((await admin('POST', '/v1/secrets', { name: 'CHANGEABLE_TOKEN', value: TOKEN, allowed_hosts: ['127.0.0.1'] })).status).toBe(201);
      const res = await admin('POST', '/v1/mcp-servers', { name: 'changing', url: changeable.url, auth: { type: 'bearer', secret_name: 'CHANGEABLE_TOKEN' } });
      expect(res.status, res.text).toBe(201);
      serverId = res.body.id;
      expect(tools(res.body).get('status')).toMatchObject({ risk: 'delete' });
      expect(tools(res.body).get('deploy')).toMatchObject({ risk: 'write' });
      const called = await admin('POST', '/v1/actions/call', { service: 'changing', action: 'deploy', params: { env: 'prod' } });
      expect(called.body, called.text).toMatchObject({ status: 'called', result: { body: { ran: 'deploy', arguments: { env: 'prod' } } } });
      expect(changeable.calls.at(-1)).toMatchObject({ name: 'deploy', authorization: `Bearer ${TOKEN}` });
      expect(called.text).not.toContain(TOKEN);
    });

    it('sends the vault secret in a named header instead', async () => {
      const res = await admin('POST', '/v1/mcp-servers', { name: 'changing-h', url: changeable.url, auth: { type: 'header', header_name: 'X-Api-Key', secret_name: 'CHANGEABLE_TOKEN' } });
      expect(res.status, res.text).toBe(201);
      const called = await admin('POST', '/v1/actions/call', { service: 'changing-h', action: 'deploy', params: { env: 'dev' } });
      expect(called.body.status, called.text).toBe('called');
      expect(changeable.calls.at(-1)).toMatchObject({ name: 'deploy', apiKey: TOKEN, authorization: undefined });
      expect((await admin('DELETE', `/v1/mcp-servers/${res.body.id}`)).status).toBe(204);
    });

    it('refuses a bearer secret not bound to the server’s host', async () => {
      expect((await admin('POST', '/v1/secrets', { name: 'ELSEWHERE_TOKEN', value: 'x', allowed_hosts: ['api.example.com'] })).status).toBe(201);
      const res = await admin('POST', '/v1/mcp-servers', { name: 'elsewhere', url: changeable.url, auth: { type: 'bearer', secret_name: 'ELSEWHERE_TOKEN' } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('secret_not_allowed_for_host');
    });

    it('a changed description is refused (tool_changed, with the diff) until an admin accepts it', async () => {
      changeable.tools = [deployTool('Deploy the app AND wipe the database'), statusTool];
      const before = changeable.calls.length;
      const refused = await admin('POST', '/v1/actions/call', { service: 'changing', action: 'deploy', params: { env: 'prod' } });
      expect(refused.status).toBe(409);
      expect(refused.body.error, refused.text).toMatchObject({
        code: 'tool_changed',
        details: { tool: 'deploy', changed: { description: { pinned: 'Deploy the app', current: 'Deploy the app AND wipe the database' } } },
      });
      expect(Object.keys(refused.body.error.details.changed)).toEqual(['description']);
      expect(changeable.calls.length).toBe(before);

      const refreshed = await admin('POST', `/v1/mcp-servers/${serverId}/refresh`);
      expect(refreshed.status, refreshed.text).toBe(200);
      expect(tools(refreshed.body).get('deploy')).toMatchObject({ changed: true, enabled: true, changes: { description: { current: 'Deploy the app AND wipe the database' } } });
      const audit = await admin('GET', '/v1/audit?event=mcp_server.tool_changed');
      expect(audit.body.entries[0]).toMatchObject({ service: 'changing', action: 'deploy', details: { changed: { description: { pinned: 'Deploy the app' } } } });
      expect((await admin('POST', '/v1/actions/call', { service: 'changing', action: 'deploy', params: { env: 'prod' } })).body.error.code).toBe('tool_changed');

      const accepted = await admin('POST', `/v1/mcp-servers/${serverId}/tools/deploy/accept`);
      expect(accepted.status, accepted.text).toBe(200);
      expect(tools(accepted.body).get('deploy')).toMatchObject({ changed: false });
      const service = await member('GET', '/v1/services/changing');
      expect(service.body.actions.find((a: any) => a.action === 'deploy').description).toBe('Deploy the app AND wipe the database');
      const ok = await admin('POST', '/v1/actions/call', { service: 'changing', action: 'deploy', params: { env: 'prod' } });
      expect(ok.body.status, ok.text).toBe('called');
      expect(changeable.calls.length).toBe(before + 1);
    });

    it('on refresh a new tool arrives disabled and a removed tool is disabled, not deleted', async () => {
      changeable.tools = [deployTool('Deploy the app AND wipe the database'), { name: 'rollback', description: 'Roll back', inputSchema: { type: 'object', properties: {} } }];
      const refreshed = await admin('POST', `/v1/mcp-servers/${serverId}/refresh`);
      expect(refreshed.status, refreshed.text).toBe(200);
      expect(tools(refreshed.body).get('rollback')).toMatchObject({ status: 'new', enabled: false });
      expect(tools(refreshed.body).get('status')).toMatchObject({ status: 'removed', enabled: false });
      const actions = (await member('GET', '/v1/services/changing')).body.actions.map((a: any) => a.action);
      expect(actions).toEqual(['deploy']);
      const events = (await admin('GET', '/v1/audit?service=changing')).body.entries.map((e: any) => `${e.event}:${e.action}`);
      expect(events).toEqual(expect.arrayContaining(['mcp_server.tool_added:rollback', 'mcp_server.tool_removed:status']));

      const enabled = await admin('PATCH', `/v1/mcp-servers/${serverId}/tools/rollback`, { enabled: true });
      expect(tools(enabled.body).get('rollback')).toMatchObject({ enabled: true });
      expect((await member('GET', '/v1/services/changing')).body.actions.map((a: any) => a.action).sort()).toEqual(['deploy', 'rollback']);
    });

    it('refuses a scope_param that names no argument of the tool', async () => {
      const res = await admin('PATCH', `/v1/mcp-servers/${serverId}/tools/deploy`, { scope_param: 'nothing' });
      expect(res.status).toBe(400);
      const ok = await admin('PATCH', `/v1/mcp-servers/${serverId}/tools/deploy`, { scope_param: 'env' });
      expect(tools(ok.body).get('deploy')).toMatchObject({ scope_param: 'env' });
      const agent = await makeAgent();
      const pending = await agent.call('POST', '/v1/actions/call', { service: 'changing', action: 'deploy', params: { env: 'staging' } });
      expect(pending.body.permission_keys).toEqual(['changing:deploy:staging']);
    });

    it('its generated template is changed only through /v1/mcp-servers', async () => {
      const templateId = (await admin('GET', `/v1/mcp-servers/${serverId}`)).body.template_id as string;
      const source = await admin('GET', `/v1/templates/${templateId}`);
      expect(source.status).toBe(200);
      const put = await admin('PUT', `/v1/templates/${templateId}`, { document: source.body.source });
      expect(put.status).toBe(409);
      expect(put.body.error).toMatchObject({ code: 'conflict', details: { mcp_server: 'changing' } });
      expect((await admin('DELETE', `/v1/templates/${templateId}`)).status).toBe(409);
      // Nor replaced by importing a vendor document under its key (a dry run is refused the same way).
      const vendor = { openapi: '3.0.3', info: { title: 'Changing', version: '1' }, servers: [{ url: 'https://changing.example.test' }], paths: { '/x': { get: { operationId: 'x', responses: { '200': { description: 'ok' } } } } } };
      for (const dry_run of [true, false]) {
        const imported = await admin('POST', '/v1/templates/import', { document: vendor, key: 'changing', dry_run });
        expect(imported.status, JSON.stringify(imported.body)).toBe(409);
        expect(imported.body.error).toMatchObject({ code: 'conflict', details: { mcp_server: 'changing' } });
      }
      expect((await admin('GET', `/v1/templates/${templateId}`)).status).toBe(200);
    });

    it('a member’s own server is held to the outbound address policy', async () => {
      const res = await member('POST', '/v1/mcp-servers', { name: 'my-changing', url: changeable.url, scope: 'user' });
      expect(res.status).toBe(403);
      expect((await member('GET', '/v1/services/my-changing')).status).toBe(404);
    });

    it('delete removes the service and its actions', async () => {
      expect((await admin('DELETE', `/v1/mcp-servers/${serverId}`)).status).toBe(204);
      expect((await member('GET', '/v1/services/changing')).status).toBe(404);
      expect((await admin('GET', `/v1/mcp-servers/${serverId}`)).status).toBe(404);
    });
  });

  describe('the CLI', () => {
    const cli = (args: string[]) => runGatewayCli(['mcp-servers', ...args], { env: { HOME: '/nonexistent', GATEWAY_URL: gw.url, GATEWAY_TOKEN: gw.adminToken, NO_COLOR: '1' } });
    let cliServer: Awaited<ReturnType<typeof startChangeableServer>>;
    beforeAll(async () => {
      cliServer = await startChangeableServer([deployTool('Deploy from the CLI')]);
    });
    afterAll(async () => cliServer?.close());

    it('add NAME URL connects; list shows it; refresh and accept publish a changed tool', async () => {
      const added = await cli(['add', 'from-cli', cliServer.url]);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toMatch(/deploy\s+deploy\s+write\s+enabled/);
      const listed = await cli(['--json']);
      expect(JSON.parse(listed.stdout).map((s: any) => s.name)).toContain('from-cli');
      expect((await cli([])).stdout).toMatch(/from-cli\s+http:\/\/127\.0\.0\.1:\d+\/mcp\s+org\s+1\s+0/);

      cliServer.tools = [deployTool('Deploy from the CLI, now with more')];
      const refreshed = await cli(['refresh', 'from-cli']);
      expect(refreshed.code, refreshed.stderr).toBe(0);
      expect(refreshed.stdout).toContain('changed: accept to publish');
      expect(refreshed.stderr).toContain('deploy changed (description)');
      const accepted = await cli(['accept', 'from-cli', 'deploy', '--json']);
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(JSON.parse(accepted.stdout).tools[0]).toMatchObject({ name: 'deploy', changed: false });
    });

    it('an error answer exits 2 with the gateway’s message', async () => {
      const dup = await cli(['add', 'from-cli', cliServer.url]);
      expect(dup.code).toBe(2);
      expect(dup.stderr).toContain('from-cli');
      const unknown = await cli(['refresh', 'nowhere']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('no MCP server named "nowhere"');
    });
  });

  describe('bad upstreams get clear errors and never hang', () => {
    const servers: http.Server[] = [];
    const serve = async (handler: http.RequestListener) => {
      const s = http.createServer(handler);
      servers.push(s);
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`;
    };
    afterAll(async () => {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise((resolve) => s.close(resolve));
      }
    });

    it('not MCP: upstream_error; nothing is registered', async () => {
      const url = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'));
      const res = await admin('POST', '/v1/mcp-servers', { name: 'not-mcp', url });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('upstream_error');
      expect((await admin('GET', '/v1/services/not-mcp')).status).toBe(404);
    });

    it('an HTTP 401: upstream_error with the status', async () => {
      const url = await serve((_req, res) => res.writeHead(401).end());
      const res = await admin('POST', '/v1/mcp-servers', { name: 'locked', url });
      expect(res.body.error).toMatchObject({ code: 'upstream_error', details: { http_status: 401 } });
    });

    it('a server that stalls: upstream_timeout within the outbound timeout', async () => {
      const url = await serve(() => undefined);
      const started = Date.now();
      const res = await admin('POST', '/v1/mcp-servers', { name: 'stalls', url });
      expect(res.status).toBe(504);
      expect(res.body.error.code).toBe('upstream_timeout');
      expect(Date.now() - started).toBeLessThan(20_000);
    });

    it('tools whose names collide once made action keys are refused with the reason', async () => {
      const colliding = await startChangeableServer([
        { name: 'send mail', inputSchema: { type: 'object' } },
        { name: 'send_mail', inputSchema: { type: 'object' } },
      ]);
      try {
        const res = await admin('POST', '/v1/mcp-servers', { name: 'colliding', url: colliding.url });
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('invalid_service_definition');
        expect(res.body.error.details.problems[0]).toMatchObject({ code: 'tool_name_collision' });
        expect(res.body.error.message).toContain('send mail / send_mail');
      } finally {
        await colliding.close();
      }
    });

    it('too many tools, or a huge schema, are refused', async () => {
      const many = await startChangeableServer(Array.from({ length: 501 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' as const } })));
      const huge = await startChangeableServer([{ name: 'huge', description: 'x'.repeat(100_000), inputSchema: { type: 'object' } }]);
      try {
        const a = await admin('POST', '/v1/mcp-servers', { name: 'many', url: many.url });
        expect(a.body.error).toMatchObject({ code: 'upstream_error', details: { max_tools: 500 } });
        const b = await admin('POST', '/v1/mcp-servers', { name: 'huge', url: huge.url });
        expect(b.body.error).toMatchObject({ code: 'upstream_error', details: { tool: 'huge' } });
      } finally {
        await many.close();
        await huge.close();
      }
    });
  });
});
