// OpenTelemetry traces (issue 45 item 2): with OTEL_EXPORTER_OTLP_ENDPOINT set, one approved call
// is one trace from the agent's request through the workflow and its activities to the upstream,
// exported to a real OTLP/HTTP receiver on loopback; the call's log lines carry its call_id and
// that trace id; no secret reaches a span. Without the variable nothing is started or exported.
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { apiClient, gatewayEnv, setUpTenant, startServe, stopGently, type Tenant } from '../support/gateway-process.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import type { CliProcess } from '../support/processes.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/** The vault value setUpTenant stores (WIDGETS_KEY): injected into every upstream request. */
const VAULT_SECRET = 'process-secret';

interface LogLine {
  msg?: string;
  path?: string;
  call_id?: string;
  trace_id?: string;
}

describe('traces', () => {
  let receiver: OtlpReceiver;
  let up: Upstream;
  let proc: CliProcess | undefined;
  afterEach(async () => {
    await stopGently(proc);
    proc = undefined;
    await receiver?.close();
    await up?.close();
  });
  afterAll(async () => stopGently(proc));

  /** A gateway process with `extra` env, a tenant on it, and the upstream it calls. */
  async function serve(extra: Record<string, string>): Promise<{ base: string; t: Tenant }> {
    up = await startUpstream();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const databaseUrl = await createTestDatabase();
    const env = gatewayEnv(port, { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: inject('temporalAddress'), LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...extra });
    proc = await startServe(env);
    return { base, t: await setUpTenant(base, env, databaseUrl, up.url) };
  }

  /** Raise → approve (the auto-call agent: the allow sends) → sent; the call's id. */
  async function approvedCall(base: string, t: Tenant): Promise<{ callId: string; approvalId: string }> {
    const api = apiClient(base);
    const raised = await api(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'traced' } });
    expect(raised.status, JSON.stringify(raised.body)).toBe(202);
    const resolved = await api(t.ownerToken, 'POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_once' });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    await waitFor(async () => (await api(t.auto, 'GET', `/v1/calls/${raised.body.call_id}`)).body?.status === 'executed', 'the call executed');
    expect(up.requests.filter((r) => r.url === '/items')).toHaveLength(1);
    return { callId: raised.body.call_id, approvalId: raised.body.approval_id };
  }

  const logLines = (p: CliProcess): LogLine[] =>
    p
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);

  it('one trace from the request through the workflow to the upstream: request → workflow → check → wait → decision → send → audit', async () => {
    receiver = await startOtlpReceiver();
    const { base, t } = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_PROPAGATE_UPSTREAM: 'true' });
    const { callId } = await approvedCall(base, t);

    // The call's trace is the one its check names; complete once the workflow's own span arrived.
    const traceId = await waitFor(() => receiver.spans.find((s) => s.name === 'check' && s.attributes['gateway.call_id'] === callId)?.traceId, 'the check span');
    const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
    const named = (name: string) => inTrace().find((s) => s.name === name);
    await waitFor(() => named('audit') && inTrace().find((s) => s.name === 'RunWorkflow:callWorkflow'), 'the workflow span and the audit span');

    const steps = ['POST /v1/actions/call', 'RunWorkflow:callWorkflow', 'check', 'wait', 'decision', 'send', 'audit'].map((name) => {
      const span = named(name);
      expect(span, `span ${name} in the call's trace; have ${inTrace().map((s) => s.name).join(', ')}`).toBeDefined();
      return span!;
    });
    const [request, workflow, check, wait, decision, send, audit] = steps as [ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan];
    // In the order the call ran them.
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.start >= steps[i - 1]!.start, `${steps[i]!.name} starts after ${steps[i - 1]!.name}`).toBe(true);
    // Linked by parents: the request holds the workflow, which holds every step; the send ran under the decision.
    const ancestors = (s: ReceivedSpan): string[] => {
      const parent = inTrace().find((p) => p.spanId === s.parentSpanId);
      return parent ? [parent.name, ...ancestors(parent)] : [];
    };
    expect(request.parentSpanId).toBeUndefined();
    expect(ancestors(workflow)).toContain(request.name);
    for (const step of [check, wait, decision, audit]) expect(ancestors(step), step.name).toContain(workflow.name);
    expect(ancestors(send)).toContain('decision');
    expect(request.service).toBe('agent-gateway');
    expect(request.attributes).toMatchObject({ 'http.route': '/v1/actions/call', 'http.response.status_code': 202 });
    expect(send.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.full': `${up.url}/items`, 'server.address': '127.0.0.1', 'http.response.status_code': 200 });
    expect(decision.attributes['gateway.decision']).toBe('allow');
    // OTEL_PROPAGATE_UPSTREAM=true: the upstream got the send's trace context.
    expect(up.requests.find((r) => r.url === '/items')?.headers.traceparent).toBe(`00-${traceId}-${send.spanId}-01`);

    // No secret in any export: not the vault value the send injected, nor the agent's key.
    const exported = receiver.bodies.join('\n');
    expect(exported).not.toContain(VAULT_SECRET);
    expect(exported).not.toContain(t.auto);

    // The call's log lines: its call_id, and its trace (the approver's request has a trace of its own).
    const resolveTrace = receiver.spans.find((s) => s.name === 'POST /v1/approvals/:id/resolve')?.traceId;
    expect(resolveTrace).toBeDefined();
    const lines = logLines(proc!).filter((l) => l.call_id === callId);
    expect(lines.find((l) => l.msg === 'request' && l.path === '/v1/actions/call')?.trace_id).toBe(traceId);
    for (const line of lines) expect([traceId, resolveTrace], JSON.stringify(line)).toContain(line.trace_id);

    // Over MCP the same: the /mcp request is the root of the call's trace (here it raises an approval).
    const mcp = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.auto}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gateway_call', arguments: { service: 'widgets', action: 'create_item', params: { name: 'over mcp' } } } }),
    });
    const mcpCallId = ((await mcp.json()) as { result: { structuredContent: { status: string; call_id: string } } }).result.structuredContent.call_id;
    const mcpTrace = await waitFor(() => receiver.spans.find((s) => s.name === 'check' && s.attributes['gateway.call_id'] === mcpCallId)?.traceId, 'the MCP call\'s check span');
    const mcpRoot = await waitFor(() => receiver.spans.find((s) => s.traceId === mcpTrace && s.parentSpanId === undefined), 'the MCP request span');
    expect(mcpRoot).toMatchObject({ name: 'POST /mcp', attributes: { 'http.route': '/mcp', 'http.response.status_code': 200 } });
  }, 300_000);

  it('without OTEL_EXPORTER_OTLP_ENDPOINT: no SDK started, nothing exported, no trace context upstream; log lines still name the call', async () => {
    receiver = await startOtlpReceiver();
    // The signal's own variable, which the exporter would read were it ever created: it must not be.
    const { base, t } = await serve({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_PROPAGATE_UPSTREAM: 'true' });
    const { callId } = await approvedCall(base, t);
    await new Promise((r) => setTimeout(r, 1_000)); // longer than the batch delay an SDK would use
    expect(receiver.bodies).toEqual([]);
    expect(up.requests.find((r) => r.url === '/items')?.headers.traceparent).toBeUndefined();
    expect(proc!.stdout()).not.toContain('tracing:');
    const lines = logLines(proc!);
    const callRequest = lines.find((l) => l.msg === 'request' && l.path === '/v1/actions/call');
    expect(callRequest?.call_id).toBe(callId);
    expect(lines.filter((l) => l.trace_id !== undefined)).toEqual([]);
  }, 300_000);
});

/** Polls `read` until it gives something truthy (the exporter batches; the workflow runs on). */
async function waitFor<T>(read: () => T | Promise<T>, what: string, timeoutMs = 60_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
