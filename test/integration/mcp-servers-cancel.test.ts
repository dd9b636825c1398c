// Cancelling a long upstream MCP tool through /mcp (issue 43): the official SDK client aborts its
// gateway_call (it sends `notifications/cancelled` for the request), the gateway passes it on to
// the worker sending the call, which aborts the upstream request (the SDK tells the reference
// server with its own `notifications/cancelled`). The call ends `outcome_unknown` (the tool ran
// for a while), audited, and is never sent again. Another agent cannot cancel it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { buildRequest } from '../support/mcp-2026-client.ts';
import { openSse } from '../support/sse.ts';
import { startCountingRelay, startEverything, type RunningServer } from '../support/mcp-upstreams.ts';

const LONG = 'trigger-long-running-operation';
const WAIT = { timeout: 60_000, interval: 200 };

describe('cancelling a long upstream tool through /mcp', () => {
  let gw: TestGateway;
  let everything: RunningServer;
  let relay: Awaited<ReturnType<typeof startCountingRelay>>;
  let admin: ReturnType<TestGateway['as']>;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  const connect = async (key: string) => {
    const client = new Client({ name: 'cancel-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  };
  const longCall = (duration: number, steps: number) => ({ name: 'gateway_call', arguments: { service: 'everything', action: LONG, params: { duration, steps } } });
  /** The failed calls the audit log shows, by call id. */
  const failedCalls = async () => ((await admin('GET', '/v1/audit?event=call.failed&limit=200')).body.entries as { call_id: string; details: { error: { code: string; details?: unknown } } }[]);

  beforeAll(async () => {
    [everything, gw] = await Promise.all([startEverything(), startTestGateway()]);
    relay = await startCountingRelay(everything.url);
    admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/mcp-servers', { name: 'everything', url: relay.url })).status).toBe(201);
    for (const name of ['canceller', 'bystander']) {
      const agent = await admin('POST', '/v1/identities/agents', { name });
      keys[name] = agent.body.key.token;
      const rule = await admin('POST', `/v1/identities/${agent.body.identity.id}/rules`, { effect: 'allow', pattern: `everything:${LONG}:*` });
      expect(rule.status, rule.text).toBe(201);
    }
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.stop();
    await relay?.close();
    await everything?.close();
  });

  it('an aborted gateway_call is cancelled upstream, ends outcome_unknown, audited, sent once', async () => {
    const client = await connect(keys.canceller!);
    const abort = new AbortController();
    const sentBefore = relay.toolCalls.filter((t) => t === LONG).length;
    // The first progress says the upstream tool is running: then the agent gives up.
    const call = client.callTool(longCall(60, 60), undefined, { signal: abort.signal, onprogress: () => abort.abort('the agent changed its mind'), timeout: 120_000 });
    await expect(call).rejects.toThrow();

    // The reference server was told to stop the tool it was running.
    await expect.poll(() => relay.cancelled.length, WAIT).toBe(1);
    expect(relay.cancelled[0]).toMatchObject({ requestId: expect.anything() });

    // The call's recorded outcome: the tool may have had effects, so it is not known.
    await expect.poll(async () => (await failedCalls()).length, WAIT).toBe(1);
    const [entry] = await failedCalls();
    expect(entry!.details.error).toMatchObject({ code: 'outcome_unknown', details: { cancelled_by: 'caller', tool_called: true } });
    const read = await admin('GET', `/v1/calls/${entry!.call_id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ status: 'failed', error: { code: 'outcome_unknown', details: { cancelled_by: 'caller', tool_called: true } } });
    // Sent once, never again.
    expect(relay.toolCalls.filter((t) => t === LONG).length).toBe(sentBefore + 1);
  });

  it('the 2026-07-28 revision: closing the request\'s stream is the cancellation', async () => {
    const sentBefore = relay.toolCalls.filter((t) => t === LONG).length;
    const failedBefore = new Set((await failedCalls()).map((e) => e.call_id));
    const cancelledBefore = relay.cancelled.length;
    const { headers, body } = buildRequest(1, 'tools/call', longCall(60, 60), {}, { progressToken: 'p-2026' });
    const sse = await openSse(`${gw.url}/mcp`, { authorization: `Bearer ${keys.canceller}`, ...headers }, { method: 'POST', body: JSON.stringify(body) });
    expect(sse.status).toBe(200);
    await sse.waitFor((e) => e.data?.method === 'notifications/progress');
    sse.close();

    await expect.poll(() => relay.cancelled.length, WAIT).toBe(cancelledBefore + 1);
    await expect.poll(async () => (await failedCalls()).length, WAIT).toBe(failedBefore.size + 1);
    const latest = (await failedCalls()).find((e) => !failedBefore.has(e.call_id));
    expect(latest!.details.error).toMatchObject({ code: 'outcome_unknown', details: { cancelled_by: 'caller', tool_called: true } });
    expect(relay.toolCalls.filter((t) => t === LONG).length).toBe(sentBefore + 1);
  });

  it('another agent naming the same request id cancels nothing', async () => {
    const client = await connect(keys.canceller!);
    let cancelledOnce = false;
    // While the canceller's call runs, the bystander cancels every id the canceller could be using.
    const result = await client.callTool(longCall(3, 3), undefined, {
      timeout: 120_000,
      onprogress: () => {
        if (cancelledOnce) return;
        cancelledOnce = true;
        for (let id = 0; id < 5; id++) void fetch(`${gw.url}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys.bystander}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'not mine' } }),
        });
      },
    });
    expect(cancelledOnce).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(relay.cancelled.length).toBe(2);
  });
});
