// Clients other than the suite's own against /mcp with an agent key (issue 42: clients keep
// working on SDK v2): the official Go SDK (test/support/go/mcp-client, built once and cached), and
// mcp-remote, the stdio bridge editors start, driven over stdio by the official TypeScript SDK.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goMcpClient, runGoMcpClient, type GoClientStep } from '../support/go-mcp-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

const SECRET = 'sk_upstream_INTEROP_KNOWN_SECRET_4242';
const TOOLS = ['gateway_approve', 'gateway_auth', 'gateway_call', 'gateway_read', 'gateway_search'];
const MCP_REMOTE = path.join(import.meta.dirname, '..', '..', 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

describe('MCP clients beyond the suite’s own', () => {
  let gw: TestGateway;
  let up: Upstream;
  let agentKey: string;
  let scratch: string;
  const mcpUrl = () => `${gw.url}/mcp`;
  const getItem = (id: string) => ({ service: 'widgets', action: 'get_item', params: { id } });
  const createItem = (name: string) => ({ service: 'widgets', action: 'create_item', params: { name } });
  const upstreamCreates = (name: string) => up.requests.filter((r) => r.method === 'POST' && r.body.includes(name)).length;

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true });
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const owner = await seedUser(gw.databaseUrl, { orgId, email: 'interop-owner@example.test' });
    const human = gw.as(await gw.login(owner.email, owner.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: SECRET })).status).toBe(201);
    const agent = await human('POST', '/v1/identities/agents', { name: 'interop-agent' });
    expect(agent.status, agent.text).toBe(201);
    agentKey = agent.body.key.token;
    // Reads of items are covered; creating one needs a person.
    expect((await human('POST', `/v1/identities/${agent.body.identity.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mcp-interop-'));
    // The first run on a machine builds the Go client (a few seconds with Go's build cache warm,
    // about a minute cold): here, so no test's own timeout pays for it.
    await goMcpClient();
  }, 240_000);
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  describe('the official Go SDK (go-sdk v1.8.0)', () => {
    const byStep = (steps: GoClientStep[]) => ({
      connected: steps.find((s) => s.step === 'connected')!,
      tools: steps.find((s) => s.step === 'tools')!,
      calls: steps.filter((s) => s.step === 'call'),
    });

    // go-sdk v1.8 asks for 2026-07-28 first: server/discover, no initialize, no session; it falls back
    // to an initialize handshake at 2025-11-25 only when discover is refused. The gateway answers
    // discover, so the SDK's default is 2026-07-28; asked for 2025-11-25 it goes the initialize way.
    it.each([
      ['2026-07-28', undefined],
      ['2025-11-25', '2025-11-25'],
    ])('lists the tools, searches, runs a covered call and gets pending_approval for an uncovered one at %s', async (revision, asked) => {
      const steps = byStep(
        await runGoMcpClient(
          mcpUrl(),
          agentKey,
          [
            ['gateway_search', { query: 'read item' }],
            ['gateway_call', getItem(`go-${revision}`)],
            ['gateway_call', createItem(`go-sdk-${revision}`)],
          ],
          asked,
        ),
      );
      expect(steps.connected).toMatchObject({ protocol_version: revision, server: 'agent-action-gateway' });
      expect([...(steps.tools as { names: string[] }).names].sort()).toEqual(TOOLS);

      const [search, covered, uncovered] = steps.calls as Array<Extract<GoClientStep, { step: 'call' }>>;
      expect(search!.is_error).toBe(false);
      expect(search!.structured.results.find((r: any) => r.action === 'get_item')).toMatchObject({ service: 'widgets', risk: 'read' });

      expect(covered).toMatchObject({ is_error: false, structured: { status: 'called', result: { status_code: 200, body: { ok: true, url: `/items/go-${revision}` } } } });
      expect(up.requests.find((r) => r.url === `/items/go-${revision}`)!.headers['x-api-key']).toBe(SECRET);
      expect(JSON.stringify(covered)).not.toContain(SECRET);

      expect(uncovered).toMatchObject({ is_error: false, structured: { status: 'pending_approval', relationship: 'self', approval_id: expect.any(String) } });
      expect(upstreamCreates(`go-sdk-${revision}`)).toBe(0);
      const call = await gw.as(agentKey)('GET', `/v1/calls/${uncovered!.structured.call_id}`);
      expect(call.body.status).toBe('pending_approval');
    }, 180_000);
  });

  describe('mcp-remote as the stdio bridge, driven by the TypeScript SDK v2 over stdio', () => {
    /**
     * mcp-remote spawned by the SDK's stdio transport; `extra` are its flags after the URL. Its
     * OAuth store goes to the scratch directory (no sign-in happens: the bearer header is accepted).
     * Plain http is allowed to loopback without --allow-http.
     */
    const connectThroughBridge = async (extra: string[]) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [MCP_REMOTE, mcpUrl(), ...extra],
        env: { ...getDefaultEnvironment(), MCP_REMOTE_CONFIG_DIR: path.join(scratch, 'mcp-auth') },
        stderr: 'pipe',
      });
      let log = '';
      transport.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
      const client = new Client({ name: 'gateway-test-over-mcp-remote', version: '1.0.0' });
      // connect() resolves once the bridge reached /mcp and answered the handshake: the readiness.
      await client.connect(transport);
      return { client, log: () => log };
    };

    // The default (legacy) mode passes the client's initialize through (2025-11-25, stateless JSON);
    // --protocol auto probes server/discover and speaks 2026-07-28 to the gateway on its behalf.
    it.each([
      ['legacy, the key in --header', 'legacy'],
      ['auto (2026-07-28 upstream), the key in --header-file', 'auto'],
    ])('lists the tools, searches and calls through mcp-remote: %s', async (_label, mode) => {
      let extra: string[];
      if (mode === 'legacy') {
        extra = ['--header', `Authorization: Bearer ${agentKey}`];
      } else {
        const headers = path.join(scratch, 'headers.txt');
        await writeFile(headers, `Authorization: Bearer ${agentKey}\n`, { mode: 0o600 });
        extra = ['--header-file', headers, '--protocol', 'auto'];
      }
      const bridge = await connectThroughBridge(extra);
      try {
        expect(bridge.client.getServerVersion()?.name).toBe('agent-action-gateway');
        // The local side is a 2025-11-25 handshake either way; the era mcp-remote chose towards the
        // gateway is what it says on stderr once server/discover answered.
        expect(bridge.client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
        if (mode === 'auto') expect(bridge.log()).toContain('Remote server speaks MCP 2026-07-28');
        else expect(bridge.log()).not.toContain('Remote server speaks MCP');
        const { tools } = await bridge.client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);

        const search = await bridge.client.callTool({ name: 'gateway_search', arguments: { query: 'read item' } });
        expect(search.isError).toBeFalsy();
        expect((search.structuredContent as any).results.find((r: any) => r.action === 'get_item')).toMatchObject({ service: 'widgets', risk: 'read' });

        const covered = await bridge.client.callTool({ name: 'gateway_call', arguments: getItem(`bridge-${mode}`) });
        expect(covered.structuredContent).toMatchObject({ status: 'called', result: { status_code: 200, body: { url: `/items/bridge-${mode}` } } });
      } finally {
        await bridge.client.close();
      }
      expect(bridge.log()).not.toContain(agentKey);
    }, 120_000);
  });
});
