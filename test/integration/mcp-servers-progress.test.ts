// A long upstream MCP tool's progress reaches the agent (issue 43): an agent's gateway_call through
// /mcp that asks for progress (the official SDK client's `onprogress`: a progressToken) gets the
// upstream's `notifications/progress` relayed with its own token before the result, against the
// reference server's `trigger-long-running-operation`. Without a token the answer stays plain JSON.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { buildRequest } from '../support/mcp-2026-client.ts';
import { openSse } from '../support/sse.ts';
import { startEverything, type RunningServer } from '../support/mcp-upstreams.ts';

const LONG = 'trigger-long-running-operation';

describe('progress of a long upstream tool, relayed through /mcp', () => {
  let gw: TestGateway;
  let everything: RunningServer;
  let agentKey: string;
  const clients: Client[] = [];

  const connect = async () => {
    const client = new Client({ name: 'progress-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agentKey}` } } }));
    clients.push(client);
    return client;
  };
  const longCall = { name: 'gateway_call', arguments: { service: 'everything', action: LONG, params: { duration: 2, steps: 4 } } };

  beforeAll(async () => {
    [everything, gw] = await Promise.all([startEverything(), startTestGateway()]);
    const admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/mcp-servers', { name: 'everything', url: everything.url })).status).toBe(201);
    const agent = await admin('POST', '/v1/identities/agents', { name: 'long-runner' });
    agentKey = agent.body.key.token;
    const rule = await admin('POST', `/v1/identities/${agent.body.identity.id}/rules`, { effect: 'allow', pattern: `everything:${LONG}:*` });
    expect(rule.status, rule.text).toBe(201);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.stop();
    await everything?.close();
  });

  it('a gateway_call with a progressToken gets each step as notifications/progress, then the result', async () => {
    const client = await connect();
    const seen: Progress[] = [];
    const result = await client.callTool(longCall, undefined, { onprogress: (p) => seen.push(p), timeout: 60_000 });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(JSON.stringify(result.structuredContent)).toContain('Long running operation completed');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((a, b) => a - b));
    expect(seen.at(-1)).toMatchObject({ progress: 4, total: 4 });
  });

  it('the 2026-07-28 revision: a tools/call with a progressToken is answered as a stream, progress first', async () => {
    const { headers, body } = buildRequest(1, 'tools/call', longCall, {}, { progressToken: 'p-2026' });
    const sse = await openSse(`${gw.url}/mcp`, { authorization: `Bearer ${agentKey}`, ...headers }, { method: 'POST', body: JSON.stringify(body) });
    expect(sse.status).toBe(200);
    await sse.ended;
    const progress = sse.events.filter((e) => e.data?.method === 'notifications/progress').map((e) => e.data.params);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((p) => p.progressToken === 'p-2026')).toBe(true);
    expect(progress.at(-1)).toMatchObject({ progress: 4, total: 4 });
    const answer = sse.events.at(-1)!.data;
    expect(answer.id).toBe(1);
    expect(answer.result.structuredContent).toMatchObject({ status: 'called' });
  });

  it('without a progressToken the call answers plain JSON, as before', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { ...longCall, arguments: { ...longCall.arguments, params: { duration: 0.4, steps: 2 } } } }),
    });
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as any;
    expect(body.result.structuredContent).toMatchObject({ status: 'called' });
  });
});
