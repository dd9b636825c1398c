// A connected MCP server's own upstream timeout (issue 43): `timeout_ms` on POST/PATCH
// /v1/mcp-servers (bounded like UPSTREAM_TIMEOUT_MS; null: the gateway's), and a tool that stalls
// past it answers the typed `upstream_timeout` in that time, not the gateway's.
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startChangeableServer } from '../support/mcp-upstreams.ts';
import { seedUser } from '../support/seed.ts';

const slowTool: Tool = { name: 'slow', description: 'Never answers', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } };

describe('a connected MCP server’s timeout_ms', () => {
  let gw: TestGateway;
  let upstream: Awaited<ReturnType<typeof startChangeableServer>>;
  let admin: ReturnType<TestGateway['as']>;
  let member: ReturnType<TestGateway['as']>;

  beforeAll(async () => {
    // The gateway's own timeout is long: only the server's can end the call in time.
    [upstream, gw] = await Promise.all([startChangeableServer([slowTool], { stall: ['slow'] }), startTestGateway({ env: { UPSTREAM_TIMEOUT_MS: '60000' } })]);
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'timeout-member@example.test' });
    member = gw.as(await gw.login(m.email, m.password));
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('refuses a timeout_ms out of bounds, changing nothing', async () => {
    for (const timeout_ms of [50, 600_001, 1.5, '1000']) {
      const res = await admin('POST', '/v1/mcp-servers', { name: 'bad', url: upstream.url, timeout_ms });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await admin('GET', '/v1/mcp-servers')).body.mcp_servers).toEqual([]);
  });

  it('a tool that stalls past the server’s timeout_ms answers upstream_timeout in that time', async () => {
    const connected = await admin('POST', '/v1/mcp-servers', { name: 'stalling', url: upstream.url, timeout_ms: 1500 });
    expect(connected.status, connected.text).toBe(201);
    expect(connected.body.timeout_ms).toBe(1500);
    const started = Date.now();
    const res = await admin('POST', '/v1/actions/call', { service: 'stalling', action: 'slow', params: {} });
    const took = Date.now() - started;
    expect(JSON.stringify(res.body)).toContain('upstream_timeout');
    expect(JSON.stringify(res.body)).toContain('1500 ms');
    expect(took).toBeLessThan(30_000);
    expect(upstream.calls.map((c) => c.name)).toContain('slow');
  });

  it('PATCH changes it (an admin’s), null goes back to UPSTREAM_TIMEOUT_MS', async () => {
    const id = (await admin('GET', '/v1/mcp-servers')).body.mcp_servers[0].id;
    expect((await member('PATCH', `/v1/mcp-servers/${id}`, { timeout_ms: 2000 })).status).toBe(403);
    const bad = await admin('PATCH', `/v1/mcp-servers/${id}`, { timeout_ms: 99 });
    expect(bad.status).toBe(400);
    const set = await admin('PATCH', `/v1/mcp-servers/${id}`, { timeout_ms: 2500 });
    expect(set.status, set.text).toBe(200);
    expect(set.body.timeout_ms).toBe(2500);
    const res = await admin('POST', '/v1/actions/call', { service: 'stalling', action: 'slow', params: {} });
    expect(JSON.stringify(res.body)).toContain('2500 ms');
    const cleared = await admin('PATCH', `/v1/mcp-servers/${id}`, { timeout_ms: null });
    expect(cleared.body.timeout_ms).toBeNull();
    const audit = await admin('GET', '/v1/audit?event=mcp_server.updated');
    expect(audit.body.entries.map((e: any) => e.details.timeout_ms)).toEqual([null, 2500]);
  });
});
