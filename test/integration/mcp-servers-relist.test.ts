// Connected MCP servers kept current without a person asking (issue 43): the gateway listens to a
// server that announces tool list changes and re-lists it on `notifications/tools/list_changed`,
// and re-lists every server on a schedule (MCP_SERVER_RELIST_MINUTES). Same effects as a refresh:
// a new tool arrives disabled, a removed one is disabled, a changed one is refused until accepted;
// each change audited and announced to the org's webhooks (`mcp_server.tools_changed`).
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startChangeableServer, startNotifyingServer } from '../support/mcp-upstreams.ts';
import { startReceiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const deployTool = (description: string): Tool => ({
  name: 'deploy',
  description,
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  annotations: { destructiveHint: false },
});
const statusTool: Tool = { name: 'status', description: 'Show the status', inputSchema: { type: 'object', properties: {} } };
const rollbackTool: Tool = { name: 'rollback', description: 'Roll back', inputSchema: { type: 'object', properties: {} } };

const byName = (body: any) => new Map<string, any>(body.tools.map((t: any) => [t.name, t]));

/** The server shows all three changes: deploy changed, status removed, rollback new and disabled. */
function expectChanged(body: any) {
  const tools = byName(body);
  expect(tools.get('deploy')).toMatchObject({ changed: true, changes: { description: { pinned: 'Deploy the app', current: 'Deploy the app to production' } } });
  expect(tools.get('status')).toMatchObject({ status: 'removed', enabled: false });
  expect(tools.get('rollback')).toMatchObject({ status: 'new', enabled: false });
}
const showsChange = (r: { body: any }) => byName(r.body).get('rollback') !== undefined && byName(r.body).get('deploy')?.changed === true;

describe('re-listing connected MCP servers', () => {
  describe('on notifications/tools/list_changed (schedule off)', () => {
    let gw: TestGateway;
    let upstream: Awaited<ReturnType<typeof startNotifyingServer>>;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      [upstream, receiver, gw] = await Promise.all([
        startNotifyingServer([deployTool('Deploy the app'), statusTool]),
        startReceiver(),
        startTestGateway({ env: { MCP_SERVER_RELIST_MINUTES: '0' } }),
      ]);
    });
    afterAll(async () => {
      await gw?.stop();
      await upstream?.close();
      await receiver?.close();
    });

    it('the change shows without a refresh, is refused until accepted, audited and sent to the webhooks', async () => {
      const admin = gw.as(gw.adminToken);
      expect((await admin('POST', '/v1/webhooks', { url: `${receiver.url}/hook`, events: ['mcp_server.tools_changed'] })).status).toBe(201);
      const connected = await admin('POST', '/v1/mcp-servers', { name: 'deployer', url: upstream.url });
      expect(connected.status, connected.text).toBe(201);
      const id = connected.body.id as string;
      // The watcher opens a listening session (the server's GET stream).
      await until(async () => upstream.listeners, (n) => n > 0, 30_000);

      upstream.tools = [deployTool('Deploy the app to production'), rollbackTool];
      await upstream.notify();
      const after = await until(() => admin('GET', `/v1/mcp-servers/${id}`), showsChange, 30_000);
      expectChanged(after.body);

      const call = await admin('POST', '/v1/actions/call', { service: 'deployer', action: 'deploy', params: { env: 'prod' } });
      expect(call.status, call.text).toBe(409);
      expect(call.body.error.code).toBe('tool_changed');

      const audit = await until(() => admin('GET', '/v1/audit?event=mcp_server.tool_changed'), (r) => r.body.entries.some((e: any) => e.service === 'deployer'), 30_000);
      expect(audit.body.entries.find((e: any) => e.service === 'deployer')).toMatchObject({ action: 'deploy', details: { trigger: 'list_changed' } });
      const hook: any = await until(async () => receiver.received.map((r) => JSON.parse(r.body) as any).find((b) => b.type === 'mcp_server.tools_changed'), Boolean, 30_000);
      expect(hook.data).toMatchObject({ server_id: id, service: 'deployer', trigger: 'list_changed' });
      expect(hook.data.changes).toEqual(
        expect.arrayContaining([
          { event: 'mcp_server.tool_changed', tool: 'deploy' },
          { event: 'mcp_server.tool_added', tool: 'rollback' },
          { event: 'mcp_server.tool_removed', tool: 'status' },
        ]),
      );
    });
  });

  describe('on the schedule', () => {
    let gw: TestGateway;
    let upstream: Awaited<ReturnType<typeof startChangeableServer>>;

    beforeAll(async () => {
      // 0.05 minutes: every 3 s, so the test sees a scheduled re-list.
      [upstream, gw] = await Promise.all([startChangeableServer([deployTool('Deploy the app'), statusTool]), startTestGateway({ env: { MCP_SERVER_RELIST_MINUTES: '0.05' } })]);
    });
    afterAll(async () => {
      await gw?.stop();
      await upstream?.close();
    });

    it('a server that announces nothing is re-listed every MCP_SERVER_RELIST_MINUTES', async () => {
      const admin = gw.as(gw.adminToken);
      const connected = await admin('POST', '/v1/mcp-servers', { name: 'quiet', url: upstream.url });
      expect(connected.status, connected.text).toBe(201);
      upstream.tools = [deployTool('Deploy the app to production'), rollbackTool];
      const after = await until(() => admin('GET', `/v1/mcp-servers/${connected.body.id}`), showsChange, 60_000);
      expectChanged(after.body);
      // The re-list's audit rows are written after the tools it changed: waited for likewise.
      const scheduled = (entries: any[]) => entries.some((e: any) => e.service === 'quiet' && e.details.trigger === 'schedule' && e.actor_id === null);
      const audit = await until(() => admin('GET', '/v1/audit?event=mcp_server.refreshed'), (r) => scheduled(r.body.entries), 30_000);
      expect(scheduled(audit.body.entries)).toBe(true);
    });
  });
});
