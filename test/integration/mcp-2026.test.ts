// The MCP revision 2026-07-28 on /mcp, driven by a client written against the revision
// (test/support/mcp-2026-client.ts) at a real `gateway serve` process: discovery, the per-request
// envelope and its errors, tools, a pending approval as a task that survives a gateway restart,
// task cancellation through the approval's workflow, the self-approval URL elicitation, and the
// subscriptions/listen stream.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { apiClient, gatewayEnv, killHard, setUpTenant, startServe, type Tenant } from '../support/gateway-process.ts';
import { client2026, REVISION, TASKS, type Client2026 } from '../support/mcp-2026-client.ts';
import { oauthClientToken } from '../support/oauth-token.ts';
import type { CliProcess } from '../support/processes.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

/**
 * The official Python SDK (`mcp` 2.3 from PyPI) in a venv: MCP_PYTHON names its interpreter, else
 * the venv .ci/run provisions under ~/.cache/agent-gateway.
 */
const PYTHON = process.env.MCP_PYTHON ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'agent-gateway', 'mcp-2.3.0', 'bin', 'python');

describe('MCP 2026-07-28 on /mcp', () => {
  let up: Upstream;
  let proc: CliProcess | undefined;
  let env: Record<string, string>;
  let base: string;
  let t: Tenant;
  let mcp: string;
  const api = () => apiClient(base);
  const tasksClient = (token: string): Client2026 => client2026(mcp, token, { extensions: { [TASKS]: {} } });
  const createItem = (name: string) => ({ name: 'gateway_call', arguments: { service: 'widgets', action: 'create_item', params: { name } } });
  const upstreamCreates = (name: string) => up.requests.filter((r) => r.method === 'POST' && JSON.stringify(r.body ?? '').includes(name)).length;
  const pollTask = (c: Client2026, taskId: string, done: (task: any) => boolean) =>
    until(() => c.request('tasks/get', { taskId }), done, 60_000);

  /** The Python SDK answering every URL elicitation with `action`: its JSON lines as they come. */
  const pythonElicitingSdk = (item: string, action: string) => {
    const script = path.join(import.meta.dirname, '..', 'support', 'python', 'mcp_sdk_2026_elicit.py');
    const child = spawn(PYTHON, [script, mcp, t.auto, 'widgets', item, action], { stdio: ['ignore', 'pipe', 'pipe'] });
    const steps: any[] = [];
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => steps.push(JSON.parse(line)));
    children.push(child);
    return {
      /** The first line of one of these steps. */
      step: (...names: string[]): Promise<any> => until(async () => steps.find((s) => names.includes(s.step)), Boolean, 150_000),
      stderr: () => stderr,
    };
  };
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    up = await startUpstream();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    mcp = `${base}/mcp`;
    env = gatewayEnv(port, { DATABASE_URL: await createTestDatabase(), TEMPORAL_ADDRESS: inject('temporalAddress') });
    proc = await startServe(env);
    t = await setUpTenant(base, env, env.DATABASE_URL!, up.url);
  }, 240_000);
  afterAll(async () => {
    for (const child of children) child.kill();
    await killHard(proc);
    await up?.close();
  });

  it('answers server/discover with its revision, the tasks extension and resultType', async () => {
    const c = client2026(mcp, t.auto);
    const res = await c.raw('server/discover');
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const result = res.body.result;
    // The SDK names the per-request revisions here; the 2025 ones are negotiated by initialize (mcp.test.ts).
    expect(result.supportedVersions).toEqual([REVISION]);
    expect(result.capabilities.extensions).toEqual({ [TASKS]: {} });
    expect(result.capabilities.tools).toEqual({ listChanged: true });
    expect(result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('agent-action-gateway');
  });

  it('refuses a bad envelope with the error the revision names, keeping the request id', async () => {
    const c = client2026(mcp, t.auto);
    const noMeta = await fetch(mcp, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.auto}`, 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'no-meta', method: 'tools/list', params: {} }),
    });
    expect(noMeta.status).toBe(400);
    expect(await noMeta.json()).toMatchObject({ id: 'no-meta', error: { code: -32602 } });

    // Malformed JSON-RPC: Invalid Request as on the 2025 path (a request with a result is not served).
    const post2026 = async (body: unknown) => {
      const res = await fetch(mcp, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.auto}`, 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/list' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: res.status === 202 ? null : ((await res.json()) as any) };
    };
    const meta = { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} };
    for (const [body, id] of [
      [{ jsonrpc: '2.0', id: 'both', method: 'tools/list', params: { _meta: meta }, result: {} }, 'both'],
      [{ jsonrpc: '2.0', id: 'r-e', result: {}, error: { code: 1, message: 'x' } }, 'r-e'],
      [{ id: 'no-jsonrpc', method: 'tools/list', params: { _meta: meta } }, 'no-jsonrpc'],
      [{ jsonrpc: '2.0', id: [1], method: 'tools/list', params: { _meta: meta } }, null],
    ] as const) {
      expect(await post2026(body), JSON.stringify(body)).toEqual({ status: 400, body: { jsonrpc: '2.0', id, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } } });
    }
    expect((await post2026({ jsonrpc: '2.0', id: 'resp', result: {} })).status).toBe(202);

    const noCaps = await c.raw('tools/list', {}, { meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } });
    expect(noCaps.status).toBe(400);
    expect(noCaps.body.error.code).toBe(-32602);
    expect(noCaps.body.error.message).toContain('clientCapabilities');

    const mismatch = await c.raw('tools/list', {}, { headers: { 'mcp-protocol-version': '2025-11-25' } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe(-32020);
    expect(typeof mismatch.body.id).toBe('number');

    const unknown = await c.raw('tools/list', {}, { headers: { 'mcp-protocol-version': '2099-01-01' }, meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: -32022, data: { requested: '2099-01-01', supported: [REVISION] } });

    const wrongMethod = await c.raw('tools/list', {}, { headers: { 'mcp-method': 'tools/call' } });
    expect([wrongMethod.status, wrongMethod.body.error.code]).toEqual([400, -32020]);
    const wrongName = await c.raw('tools/call', { name: 'gateway_auth', arguments: { operation: 'whoami' } }, { headers: { 'mcp-name': 'gateway_call' } });
    expect([wrongName.status, wrongName.body.error.code]).toEqual([400, -32020]);
    // Whitespace around a header value is not a mismatch (HTTP trims it).
    const spaced = await c.raw('tools/list', {}, { headers: { 'mcp-method': '  tools/list ' } });
    expect(spaced.status).toBe(200);

    // initialize and ping belong to the stateful revisions: not methods of this one.
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'tasks/list', 'tasks/result']) {
      const gone = await c.raw(method, {}, { capabilities: { extensions: { [TASKS]: {} } } });
      expect([gone.status, gone.body.error.code], method).toEqual([404, -32601]);
    }
    // The task methods need the extension on the request itself.
    const undeclared = await c.raw('tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    const unknownTask = await tasksClient(t.auto).raw('tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' });
    // A handler's own error is in-band (HTTP 200, as the SDK answers it); the envelope's errors above are 400.
    expect([unknownTask.status, unknownTask.body.error.code]).toEqual([200, -32602]);

    // A browser client may send the revision's headers (CORS preflight).
    const pre = await fetch(mcp, { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'mcp-method, mcp-name' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Mcp-Method.*Mcp-Name/);
  });

  it('lists and calls the gateway tools, resultType on every result', async () => {
    const c = client2026(mcp, t.auto);
    const list = await c.request('tools/list');
    expect(list.tools.map((x: any) => x.name)).toEqual(['gateway_call', 'gateway_read', 'gateway_search', 'gateway_approve', 'gateway_auth']);
    expect(list).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(list.tools[0].inputSchema.type).toBe('object');
    const whoami = await c.request('tools/call', { name: 'gateway_auth', arguments: { operation: 'whoami' } });
    expect(whoami.resultType).toBe('complete');
    expect(whoami.structuredContent.identity.name).toBe('auto');
    const bad = await c.request('tools/call', { name: 'gateway_call', arguments: { service: 'widgets' } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent.error.code).toBe('invalid_request');
  });

  it('answers a client without the tasks extension with pending_approval, as before', async () => {
    const result = await client2026(mcp, t.auto).request('tools/call', createItem('plain-client'));
    expect(result.resultType).toBe('complete');
    expect(result.structuredContent).toMatchObject({ status: 'pending_approval', relationship: 'self' });
    expect(result.taskId).toBeUndefined();
  });

  it('makes a pending call a task that survives a gateway restart and completes once approved over REST', async () => {
    const c = tasksClient(t.auto);
    const created = await c.request('tools/call', createItem('task-restart'));
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null, pollIntervalMs: 2000 });
    expect(created.requestState).toBeUndefined();
    const taskId = created.taskId;
    const working = await c.request('tasks/get', { taskId });
    expect(working).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(working.statusMessage).toMatch(new RegExp(`${base}/approvals/[0-9a-f-]{36}.*expires at \\d{4}-`));
    expect(working.result).toBeUndefined();
    const call = await api()(t.auto, 'GET', `/v1/calls/${taskId}`);
    expect(call.body.status).toBe('pending_approval');

    // The gateway dies (SIGKILL) and comes back: the task is the call, kept in the database.
    await killHard(proc);
    proc = await startServe(env);
    expect((await c.request('tasks/get', { taskId })).status).toBe('working');

    const resolved = await api()(t.ownerToken, 'POST', `/v1/approvals/${call.body.approval_id}/resolve`, { decision: 'allow_once' });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    const done = await pollTask(c, taskId, (x) => x.status !== 'working');
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBeUndefined();
    expect(done.result.structuredContent).toMatchObject({ status: 'called', call_id: taskId, result: { status_code: 200 } });
    expect(upstreamCreates('task-restart')).toBe(1);
    // The upstream got its key; the task never shows it (setUpTenant's vault secret).
    expect(up.requests.find((r) => r.body.includes('task-restart'))!.headers['x-api-key']).toBe('process-secret');
    expect(JSON.stringify([created, working, done])).not.toContain('process-secret');
  }, 300_000);

  it('resumes an approved task of an agent that resumes by hand when the client polls it', async () => {
    const c = tasksClient(t.manual);
    const created = await c.request('tools/call', createItem('task-manual'));
    expect(created.resultType).toBe('task');
    const call = await api()(t.manual, 'GET', `/v1/calls/${created.taskId}`);
    expect((await api()(t.ownerToken, 'POST', `/v1/approvals/${call.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    const done = await pollTask(c, created.taskId, (x) => x.status !== 'working');
    expect(done.result.structuredContent).toMatchObject({ status: 'called', call_id: created.taskId });
    expect(upstreamCreates('task-manual')).toBe(1);
  }, 120_000);

  it('reports a denial as an error result', async () => {
    const c = tasksClient(t.auto);
    const created = await c.request('tools/call', createItem('task-denied'));
    const call = await api()(t.auto, 'GET', `/v1/calls/${created.taskId}`);
    expect((await api()(t.ownerToken, 'POST', `/v1/approvals/${call.body.approval_id}/resolve`, { decision: 'deny', reason: 'not today' })).status).toBe(200);
    const done = await pollTask(c, created.taskId, (x) => x.status !== 'working');
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(done.result.structuredContent).toMatchObject({ status: 'denied', reason: 'not today' });
    expect(upstreamCreates('task-denied')).toBe(0);
  }, 120_000);

  it('cancels the approval with tasks/cancel, through the workflow like the requester would', async () => {
    const c = tasksClient(t.auto);
    const created = await c.request('tools/call', createItem('task-cancelled'));
    const ack = await c.request('tasks/cancel', { taskId: created.taskId });
    expect(ack).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    const task = await c.request('tasks/get', { taskId: created.taskId });
    expect(task.status).toBe('cancelled');
    const call = await api()(t.auto, 'GET', `/v1/calls/${created.taskId}`);
    expect(call.body).toMatchObject({ status: 'cancelled', approval_status: 'cancelled' });
    const approval = await api()(t.ownerToken, 'GET', `/v1/approvals/${call.body.approval_id}`);
    expect(approval.body).toMatchObject({ status: 'cancelled', decision: 'cancel' });
    // Idempotent on a task that ended; another agent has no such task.
    expect((await c.raw('tasks/cancel', { taskId: created.taskId })).status).toBe(200);
    const other = await tasksClient(t.manual).raw('tasks/cancel', { taskId: created.taskId });
    expect([other.status, other.body.error.code]).toEqual([200, -32602]);
    // Nothing can approve it any more.
    expect((await api()(t.ownerToken, 'POST', `/v1/approvals/${call.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(409);
  }, 120_000);

  it('cancels over REST the same way: the requester only, a pending approval only, strict input', async () => {
    const raised = await api()(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'rest-cancelled' } });
    expect(raised.status).toBe(202);
    const path = `/v1/approvals/${raised.body.approval_id}/cancel`;
    expect((await api()(t.ownerToken, 'POST', path, {})).status).toBe(403);
    const sibling = await api()(t.manual, 'POST', path, {});
    expect(sibling.status, JSON.stringify(sibling.body)).toBe(404);
    const unknownField = await api()(t.auto, 'POST', path, { reason: 'x', extra: true });
    expect([unknownField.status, unknownField.body.error.code]).toEqual([400, 'invalid_request']);
    expect((await api()(t.auto, 'GET', `/v1/calls/${raised.body.call_id}`)).body.approval_status).toBe('pending');
    const cancelled = await api()(t.auto, 'POST', path, { reason: 'changed my mind' });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ id: raised.body.approval_id, status: 'cancelled', relationship: 'self' });
    expect((await api()(t.ownerToken, 'GET', `/v1/approvals/${raised.body.approval_id}`)).body).toMatchObject({ status: 'cancelled', reason: 'changed my mind' });
    expect((await api()(t.auto, 'POST', path, {})).status).toBe(409);
    // The task view of the same call agrees.
    expect((await tasksClient(t.auto).request('tasks/get', { taskId: raised.body.call_id })).status).toBe('cancelled');
  }, 120_000);

  it('holds the retry after the URL elicitation until its own person decides, then answers the result', async () => {
    const c = client2026(mcp, t.auto, { elicitation: { url: {} } });
    const asked = await c.request('tools/call', createItem('elicited'));
    const askedAt = Date.now();
    expect(asked.resultType).toBe('input_required');
    const request = asked.inputRequests.approval;
    expect(request).toMatchObject({ method: 'elicitation/create', params: { mode: 'url' } });
    expect(request.params.url).toBe(`${base}/approvals/${request.params.elicitationId}`);
    // A state this server did not issue for this caller, or an answer that is no elicitation result, is refused.
    const forged = await c.raw('tools/call', { ...createItem('elicited'), inputResponses: {}, requestState: Buffer.from(JSON.stringify({ call_id: '00000000-0000-4000-8000-000000000000', agent_id: '00000000-0000-4000-8000-000000000000' })).toString('base64url') });
    expect([forged.status, forged.body.error.code]).toEqual([200, -32602]);
    for (const inputResponses of [{ approval: { action: 'maybe' } }, { approval: 'accept' }, ['accept']]) {
      const bad = await c.raw('tools/call', { ...createItem('elicited'), inputResponses, requestState: asked.requestState });
      expect([bad.status, bad.body.error.code], JSON.stringify(inputResponses)).toEqual([200, -32602]);
    }
    // A retry that carries no answer to the elicitation is asked again at once (SEP-2322).
    for (const missing of [{ requestState: asked.requestState }, { requestState: asked.requestState, inputResponses: {} }]) {
      const before = Date.now();
      const again = await c.request('tools/call', { ...createItem('elicited'), ...missing });
      expect(Date.now() - before).toBeLessThan(5_000);
      expect(again).toMatchObject({ resultType: 'input_required', inputRequests: { approval: { params: { url: request.params.url } } }, requestState: asked.requestState });
    }
    // The person decides 6 s after being asked; the retry sent at once is held until then.
    const decided = new Promise<number>((resolve, reject) =>
      setTimeout(() => api()(t.ownerToken, 'POST', `/v1/approvals/${request.params.elicitationId}/resolve`, { decision: 'allow_once' }).then((r) => resolve(r.status), reject), 6_000),
    );
    const done = await c.request('tools/call', { ...createItem('elicited'), inputResponses: { approval: { action: 'accept' } }, requestState: asked.requestState });
    expect(await decided).toBe(200);
    expect(Date.now() - askedAt).toBeGreaterThanOrEqual(5_500);
    expect(done.resultType).toBe('complete');
    expect(done.structuredContent).toMatchObject({ status: 'called', call_id: expect.any(String) });
    expect(upstreamCreates('elicited')).toBe(1);
  }, 120_000);

  it('ends the elicitation with the pending answer when nobody decides in time, or at once when declined or dismissed', async () => {
    const c = client2026(mcp, t.auto, { elicitation: { url: {} } });
    // Declined, dismissed: answered at once with the pending call, which stays open.
    for (const action of ['decline', 'cancel'] as const) {
      const asked = await c.request('tools/call', createItem(`elicit-${action}`));
      const started = Date.now();
      const ended = await c.request('tools/call', { ...createItem(`elicit-${action}`), inputResponses: { approval: { action } }, requestState: asked.requestState });
      expect(Date.now() - started, action).toBeLessThan(5_000);
      expect(ended.resultType).toBe('complete');
      expect(ended.isError).toBeUndefined();
      expect(ended.structuredContent).toMatchObject({ status: 'pending_approval', approval_id: asked.inputRequests.approval.params.elicitationId, relationship: 'self' });
      expect(ended.content[0].text).toMatch(action === 'decline' ? /declined/ : /dismissed/);
      expect(ended.content[0].text).toContain(`gateway_call {"approval_id": "${ended.structuredContent.approval_id}"}`);
      expect((await api()(t.auto, 'GET', `/v1/calls/${ended.structuredContent.call_id}`)).body.approval_status).toBe('pending');
    }
    // Accepted but nobody decides: held for the bounded time, then the pending answer (no second
    // input_required); the same retry from a client that declared tasks too gets its task instead.
    const asked = await c.request('tools/call', createItem('elicit-undecided'));
    const retry = { ...createItem('elicit-undecided'), inputResponses: { approval: { action: 'accept' } }, requestState: asked.requestState };
    const both = client2026(mcp, t.auto, { elicitation: { url: {} }, extensions: { [TASKS]: {} } });
    const started = Date.now();
    const [held, heldTask] = await Promise.all([c.request('tools/call', retry), both.request('tools/call', retry)]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15_000);
    expect(held.resultType).toBe('complete');
    expect(held.structuredContent).toMatchObject({ status: 'pending_approval', approval_id: asked.inputRequests.approval.params.elicitationId });
    expect(held.content[0].text).toMatch(/Nobody has decided yet/);
    expect(heldTask).toMatchObject({ resultType: 'task', taskId: held.structuredContent.call_id, status: 'working' });
    expect((await api()(t.ownerToken, 'POST', `/v1/approvals/${held.structuredContent.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    const done = await pollTask(both, heldTask.taskId, (x) => x.status !== 'working');
    expect(done.result.structuredContent).toMatchObject({ status: 'called', call_id: heldTask.taskId });
    expect(upstreamCreates('elicit-undecided')).toBe(1);
  }, 180_000);

  it('gives a client that declares both tasks and URL elicitation a task, not an elicitation', async () => {
    const c = client2026(mcp, t.auto, { elicitation: { url: {} }, extensions: { [TASKS]: {} } });
    const created = await c.request('tools/call', createItem('elicit-or-task'));
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created.inputRequests).toBeUndefined();
    expect((await c.request('tasks/cancel', { taskId: created.taskId })).resultType).toBe('complete');
  }, 120_000);

  it('streams the approval events and nothing unrequested on subscriptions/listen', async () => {
    const c = tasksClient(t.auto);
    const quiet = await c.listen({ promptsListChanged: true });
    const stream = await c.listen({ toolsListChanged: true }, { 'io.modelcontextprotocol/logLevel': 'info' });
    try {
      expect(stream.status).toBe(200);
      const ack = await stream.waitFor(() => true);
      expect(ack).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { toolsListChanged: true } } });
      const subscriptionId = ack.params._meta['io.modelcontextprotocol/subscriptionId'];
      expect(subscriptionId).toEqual(expect.any(Number));
      expect((await quiet.waitFor(() => true)).params.notifications).toEqual({});
      const created = await c.request('tools/call', createItem('listened'));
      const call = await api()(t.auto, 'GET', `/v1/calls/${created.taskId}`);
      await api()(t.ownerToken, 'POST', `/v1/approvals/${call.body.approval_id}/resolve`, { decision: 'deny' });
      const event = await stream.waitFor((m) => m.method === 'notifications/message' && m.params.data.approval_id === call.body.approval_id);
      expect(event.params._meta['io.modelcontextprotocol/subscriptionId']).toBe(subscriptionId);
      expect(event.params.data.type).toMatch(/^approval\./);
      // The other stream asked for no log level and got none.
      await new Promise((r) => setTimeout(r, 500));
      expect(quiet.messages.filter((m) => m.method === 'notifications/message')).toEqual([]);
    } finally {
      stream.close();
      quiet.close();
    }
  }, 120_000);

  it('tells a listen stream that asked for it when the tool list changes (self-approval turned on)', async () => {
    // An OAuth client of the admin: self-approval is a flag of its binding.
    const request = async (method: string, p: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) => {
      const res = await fetch(base + p, {
        method,
        headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
    };
    const token = (await oauthClientToken({ url: base, request }, { email: env.GATEWAY_ADMIN_EMAIL!, password: env.GATEWAY_ADMIN_PASSWORD! }, 'listen client')).access_token;
    const c = client2026(mcp, token);
    const agentId = (await c.request('tools/call', { name: 'gateway_auth', arguments: { operation: 'whoami' } })).structuredContent.identity.id;
    const binding = (await api()(t.adminToken, 'GET', '/v1/oauth/bindings')).body.bindings.find((b: any) => b.agent_id === agentId);
    expect((await c.request('tools/list')).tools.map((x: any) => x.name)).not.toContain('gateway_approve_self');
    const stream = await c.listen({ toolsListChanged: true });
    try {
      const ack = await stream.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
      expect((await api()(t.adminToken, 'PATCH', `/v1/oauth/bindings/${binding.id}`, { self_approve_enabled: true })).status).toBe(200);
      const changed = await stream.waitFor((m) => m.method === 'notifications/tools/list_changed');
      expect(changed.params._meta['io.modelcontextprotocol/subscriptionId']).toBe(ack.params._meta['io.modelcontextprotocol/subscriptionId']);
      expect((await c.request('tools/list')).tools.map((x: any) => x.name)).toContain('gateway_approve_self');
    } finally {
      stream.close();
    }
  }, 120_000);

  it.skipIf(!existsSync(PYTHON))('serves the official Python SDK (mcp 2.3) at 2026-07-28: discover, list, call', async () => {
    const script = path.join(import.meta.dirname, '..', 'support', 'python', 'mcp_sdk_2026.py');
    const { stdout } = await promisify(execFile)(PYTHON, [script, mcp, t.auto, 'widgets', 'python-sdk'], { timeout: 120_000 });
    const steps = Object.fromEntries(stdout.trim().split('\n').map((l) => JSON.parse(l)).map((s: any) => [s.step, s]));
    expect(steps.connected.protocol_version).toBe(REVISION);
    expect(steps.connected.server).toBe('agent-action-gateway');
    expect(steps.tools.names).toContain('gateway_call');
    expect(steps.whoami).toMatchObject({ is_error: false, structured: { identity: { name: 'auto' } } });
    expect(steps.call).toMatchObject({ is_error: false, structured: { status: 'pending_approval', relationship: 'self' } });
    const call = await api()(t.auto, 'GET', `/v1/calls/${steps.call.structured.call_id}`);
    expect(call.body.status).toBe('pending_approval');
  }, 180_000);

  it('ends a URL-elicited call of the official TypeScript SDK v2 with its result, or at once when declined or dismissed', async () => {
    // The SDK's own multi round-trip driver answers the URL elicitation (with `action`) and retries.
    const tsSdk = async (action: 'accept' | 'decline' | 'cancel') => {
      // 'auto': probe server/discover and speak 2026-07-28 (the SDK's default is the initialize handshake).
      const client = new Client({ name: 'gateway-test-ts-sdk-v2', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: 'auto' } });
      const elicited: Array<{ mode?: string; url?: string }> = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        elicited.push(request.params as (typeof elicited)[number]);
        return { action };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { authorization: `Bearer ${t.auto}` } } }));
      return { client, elicited };
    };

    const accepting = await tsSdk('accept');
    expect(accepting.client.getNegotiatedProtocolVersion()).toBe(REVISION);
    const started = Date.now();
    const calling = accepting.client.callTool({ name: 'gateway_call', arguments: { service: 'widgets', action: 'create_item', params: { name: 'ts-sdk-elicited' } } });
    const [request] = await until(async () => accepting.elicited, (e) => e.length > 0, 60_000);
    // The SDK's 2026-era URL elicitation carries no elicitationId: the approval is named by its URL.
    expect(request).toMatchObject({ mode: 'url', url: expect.stringMatching(new RegExp(`^${base}/approvals/[0-9a-f-]{36}$`)) });
    const approvalId = request!.url!.split('/').pop();
    await new Promise((r) => setTimeout(r, 6_000));
    expect((await api()(t.ownerToken, 'POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    const result = await calling;
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_500);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 'called' });
    expect(accepting.elicited).toHaveLength(1);
    expect(upstreamCreates('ts-sdk-elicited')).toBe(1);
    await accepting.client.close();

    for (const action of ['decline', 'cancel'] as const) {
      const sdk = await tsSdk(action);
      const before = Date.now();
      const ended = await sdk.client.callTool({ name: 'gateway_call', arguments: { service: 'widgets', action: 'create_item', params: { name: `ts-sdk-${action}` } } });
      expect(Date.now() - before, action).toBeLessThan(5_000);
      expect(ended.structuredContent).toMatchObject({ status: 'pending_approval', relationship: 'self' });
      expect((ended.content as Array<{ text: string }>)[0]!.text).toMatch(action === 'decline' ? /declined/ : /dismissed/);
      expect(sdk.elicited).toHaveLength(1);
      await sdk.client.close();
    }
  }, 180_000);

  it.skipIf(!existsSync(PYTHON))('ends a URL-elicited call of the official Python SDK with its result when the person decides seconds later', async () => {
    const sdk = pythonElicitingSdk('python-elicited', 'accept');
    const elicited = await sdk.step('elicited');
    expect(elicited).toMatchObject({ mode: 'url', url: `${base}/approvals/${elicited.elicitation_id}` });
    await new Promise((r) => setTimeout(r, 6_000));
    expect((await api()(t.ownerToken, 'POST', `/v1/approvals/${elicited.elicitation_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    const result = await sdk.step('result', 'failed');
    expect(result, sdk.stderr()).toMatchObject({ step: 'result', is_error: false, structured: { status: 'called' }, elicitations: 1 });
    expect(result.seconds).toBeGreaterThanOrEqual(5.5);
    expect(upstreamCreates('python-elicited')).toBe(1);
  }, 180_000);

  it.skipIf(!existsSync(PYTHON))('ends the exchange of the official Python SDK at once when its person declines or dismisses the page', async () => {
    for (const action of ['decline', 'cancel']) {
      const sdk = pythonElicitingSdk(`python-${action}`, action);
      const result = await sdk.step('result', 'failed');
      expect(result, sdk.stderr()).toMatchObject({ step: 'result', is_error: false, structured: { status: 'pending_approval', relationship: 'self' }, elicitations: 1 });
      expect(result.seconds, action).toBeLessThan(10);
      expect(result.texts[0]).toMatch(action === 'decline' ? /declined/ : /dismissed/);
      expect((await api()(t.auto, 'GET', `/v1/calls/${result.structured.call_id}`)).body.approval_status).toBe('pending');
    }
  }, 180_000);
});
