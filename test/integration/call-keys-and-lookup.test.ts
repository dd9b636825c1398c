// A caller can always learn what happened (issue 24): every answer names its call, GET
// /v1/calls/{id} reads it back (for the agent, its chain and admins only), and an Idempotency-Key
// (REST header, MCP `idempotency_key`) makes a retry attach to the first call instead of sending again.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { approvalEventData } from '../../server/calls/approval-event-data.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { holdRequests, startUpstream, upstreamServiceDoc, type RecordedRequest, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

describe('call ids, GET /v1/calls/{id} and Idempotency-Key', () => {
  let gw: TestGateway;
  let up: Upstream;
  let human: ReturnType<TestGateway['as']>;
  let humanToken: string;
  let agent: { id: string; key: string };
  let sub: { id: string; key: string };
  let other: { id: string; key: string };
  let foreignAdmin: ReturnType<TestGateway['as']>;
  let mcp: Client;

  const named = (name: string) => (r: RecordedRequest) => r.method === 'POST' && r.body.includes(`"${name}"`);
  const hits = (pred: (r: RecordedRequest) => boolean) => up.requests.filter(pred).length;
  const keyed = (token: string, key: string, body: unknown) =>
    gw.request('POST', '/v1/actions/call', { body, headers: { authorization: `Bearer ${token}`, 'idempotency-key': key } });
  /** Holds matching upstream requests until released (the "slow upstream"). */
  const hold = (match: (r: RecordedRequest) => boolean) => holdRequests(up, match);

  /**
   * Starts `read`, holds it at the executions table with a lock until it waits there, then commits
   * `writes` in one transaction and releases it: the read falls between two rows one writer changed.
   */
  const commitWhileHeldAtExecutions = async <T,>(read: () => Promise<T>, writes: [string, unknown[]][]): Promise<T> => {
    const writer = new pg.Client({ connectionString: gw.databaseUrl });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query('LOCK TABLE executions IN ACCESS EXCLUSIVE MODE');
      const reading = read();
      await until(
        () => writer.query(`SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'executions'::regclass AND NOT granted`),
        (r) => r.rows[0].n > 0,
        30_000,
      );
      for (const [text, values] of writes) await writer.query(text, values);
      await writer.query('COMMIT');
      return await reading;
    } finally {
      await writer.query('ROLLBACK').catch(() => undefined);
      await writer.end();
    }
  };

  beforeAll(async () => {
    up = await startUpstream();
    // Raw HTTP to the loopback upstream below is allowed (it is private: refused at once otherwise).
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const owner = await seedUser(gw.databaseUrl, { orgId, email: 'keys-owner@example.test' });
    humanToken = await gw.login(owner.email, owner.password);
    human = gw.as(humanToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'keys-secret' })).status).toBe(201);
    const make = async (body: Record<string, unknown>) => {
      const r = await human('POST', '/v1/identities/agents', body);
      expect(r.status, r.text).toBe(201);
      return { id: r.body.identity.id as string, key: r.body.key.token as string };
    };
    agent = await make({ name: 'keyed' });
    sub = await make({ name: 'keyed-sub', parent_id: agent.id });
    other = await make({ name: 'unrelated' });
    for (const a of [agent, sub]) {
      expect((await human('POST', `/v1/identities/${a.id}/rules`, { effect: 'allow', pattern: 'widgets:*:*' })).status).toBe(201);
    }
    const foreign = await seedUser(gw.databaseUrl, { email: 'admin@other-org.test', role: 'admin' });
    expect(foreign.orgId).not.toBe(orgId);
    foreignAdmin = gw.as(await gw.login(foreign.email, foreign.password));
    mcp = new Client({ name: 'keys-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.key}` } } }));
  });
  afterAll(async () => {
    await mcp?.close();
    await gw?.stop();
    await up?.close();
  });

  it('names the call in every answer: called, pending_approval, denied and errors', async () => {
    const called = await gw.as(agent.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'ids-1' } });
    expect(called.status).toBe(200);
    expect(called.body.call_id).toMatch(/^[0-9a-f-]{36}$/);
    const pending = await gw.as(other.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'ids-pending' } });
    expect(pending.status).toBe(202);
    expect(pending.body.call_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await human('POST', `/v1/identities/${other.id}/rules`, { effect: 'deny', pattern: 'widgets:delete_item:*' })).status).toBe(201);
    const denied = await gw.as(other.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'ids-denied' } });
    expect(denied.body).toMatchObject({ status: 'denied', call_id: expect.any(String) });
    up.handle((_req, res) => res.destroy()); // the upstream hangs up: an error outcome
    const failed = await gw.as(agent.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'ids-error' } });
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.body.error.details.call_id).toMatch(/^[0-9a-f-]{36}$/);
    const view = await gw.as(agent.key)('GET', `/v1/calls/${failed.body.error.details.call_id}`);
    expect(view.body).toMatchObject({ status: 'failed', error: { code: failed.body.error.code } });
    const deniedView = await gw.as(other.key)('GET', `/v1/calls/${denied.body.call_id}`);
    expect(deniedView.body).toMatchObject({ status: 'denied', error: { code: 'denied' } });
  });

  it('GET /v1/calls/{id}: the agent, its chain and admins see it; another agent and another org get 404', async () => {
    const made = await gw.as(sub.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'visible' } });
    expect(made.status).toBe(200);
    const path = `/v1/calls/${made.body.call_id}`;
    for (const [who, as] of [
      ['the agent itself', gw.as(sub.key)],
      ['its parent agent', gw.as(agent.key)],
      ['its person', human],
      ['an admin', gw.as(gw.adminToken)],
    ] as const) {
      const r = await as('GET', path);
      expect(r.status, who).toBe(200);
      expect(r.body, who).toMatchObject({
        call_id: made.body.call_id,
        status: 'called',
        service: 'widgets',
        action: 'get_item',
        requester_id: sub.id,
        http_status_code: 200,
        result: { status_code: 200, body: { ok: true } },
        approval_id: null,
        execution_id: null,
      });
    }
    for (const [who, as] of [
      ['an unrelated agent', gw.as(other.key)],
      ['another org', foreignAdmin],
    ] as const) {
      const r = await as('GET', path);
      expect(r.status, who).toBe(404);
      expect(r.body.error.code, who).toBe('not_found');
      expect(r.text, who).not.toContain('visible');
    }
    expect((await human('GET', '/v1/calls/not-a-uuid')).status).toBe(400);
    expect((await human('GET', '/v1/calls/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('GET /v1/calls/{id} follows a call through its approval to the execution', async () => {
    const pending = await gw.as(other.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'via-approval' } });
    expect(pending.status).toBe(202);
    const before = await gw.as(other.key)('GET', `/v1/calls/${pending.body.call_id}`);
    expect(before.body).toMatchObject({ status: 'pending_approval', approval_id: pending.body.approval_id, approval_status: 'pending', execution_id: null });
    expect((await human('POST', `/v1/approvals/${pending.body.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    const after = await until(
      () => gw.as(other.key)('GET', `/v1/calls/${pending.body.call_id}`),
      (r) => r.body.execution_status === 'executed',
      30_000,
    );
    expect(after.body).toMatchObject({ status: 'executed', approval_status: 'allowed', execution_id: expect.any(String), http_status_code: 200, result: { status_code: 200 } });
  });

  it('GET /v1/calls/{id} reads the call, its approval and its execution as of one moment', async () => {
    const pending = await gw.as(other.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'one-moment' } });
    expect((await human('POST', `/v1/approvals/${pending.body.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    const path = `/v1/calls/${pending.body.call_id}`;
    await until(() => gw.as(other.key)('GET', path), (r) => r.body.status === 'executed', 30_000);
    // A writer that changes the call's status and its execution's together (as the execution's
    // final write does) commits while the read is between the two rows.
    const read = await commitWhileHeldAtExecutions(
      () => gw.as(other.key)('GET', path),
      [
        [`UPDATE calls SET status = 'execution_failed' WHERE id = $1`, [pending.body.call_id]],
        [`UPDATE executions SET status = 'failed' WHERE approval_id = $1`, [pending.body.approval_id]],
      ],
    );
    // Both rows as they were when the read began: never the new execution beside the old call.
    expect(read.body).toMatchObject({ status: 'executed', execution_status: 'executed' });
    expect((await gw.as(other.key)('GET', path)).body).toMatchObject({ status: 'execution_failed', execution_status: 'failed' });
  });

  it('an approval event reads the approval and its execution as of one moment', async () => {
    const pending = await gw.as(other.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'event-moment' } });
    expect((await human('POST', `/v1/approvals/${pending.body.approval_id}/resolve`, { decision: 'allow', reason: 'first' })).status).toBe(200);
    await until(() => gw.as(other.key)('GET', `/v1/calls/${pending.body.call_id}`), (r) => r.body.status === 'executed', 30_000);
    // As above: a writer changes the approval and its execution together.
    const read = await commitWhileHeldAtExecutions(
      () => approvalEventData(gw.pool, pending.body.approval_id),
      [
        [`UPDATE approvals SET reason = 'second' WHERE id = $1`, [pending.body.approval_id]],
        [`UPDATE executions SET status = 'failed' WHERE approval_id = $1`, [pending.body.approval_id]],
      ],
    );
    expect(read).toMatchObject({ reason: 'first', execution: { status: 'executed' } });
    expect(await approvalEventData(gw.pool, pending.body.approval_id)).toMatchObject({ reason: 'second', execution: { status: 'failed' } });
  });

  it('GET /v1/calls/{id} settles a call whose workflow never started (the process stopped after writing its row): failed, nothing sent, with its audit row', async () => {
    const made = await gw.as(agent.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'never-started-src' } });
    expect(made.body.status).toBe('called');
    // The state a crash between the row's insert and the workflow's start leaves: a row, no workflow.
    const copy = async (id: string, age: string) =>
      gw.pool.query(sql.unsafe`
        INSERT INTO calls (id, org_id, requester_id, user_id, service, template, action, runtime, risk, permission_keys, description,
                           request_redacted, request_envelope, disclosed, request_id, request_digest, status, created_at)
        SELECT ${id}, org_id, requester_id, user_id, service, template, action, runtime, risk, permission_keys, description,
               request_redacted, request_envelope, disclosed, request_id, request_digest, 'checking', now() - ${age}::interval
        FROM calls WHERE id = ${made.body.call_id}`);
    const stale = randomUUID();
    const young = randomUUID();
    await copy(stale, '2 minutes');
    await copy(young, '1 second');
    const view = await gw.as(agent.key)('GET', `/v1/calls/${stale}`);
    expect(view.body).toMatchObject({ status: 'failed', error: { code: 'unavailable', message: expect.stringMatching(/never started.*nothing was sent/) } });
    const audit = await gw.pool.anyFirst(sql.type(z.object({ decision: z.string().nullable() }))`SELECT decision FROM audit_log WHERE call_id = ${stale}`);
    expect(audit).toEqual(['not_started']);
    // Read again: the same answer, no second audit row. A row just written is left to its workflow.
    expect((await gw.as(agent.key)('GET', `/v1/calls/${stale}`)).body.status).toBe('failed');
    expect(await gw.pool.anyFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM audit_log WHERE call_id = ${stale}`)).toEqual([1]);
    expect((await gw.as(agent.key)('GET', `/v1/calls/${young}`)).body.status).toBe('checking');
  });

  it('a retry with the same Idempotency-Key after the connection was cut returns the first outcome; the upstream saw one request', async () => {
    const release = hold(named('cut-mid-call'));
    const body = { service: 'widgets', action: 'create_item', params: { name: 'cut-mid-call' } };
    const key = `cut-${Date.now()}`;
    // The client gives up while the upstream is still answering (its connection is cut).
    const aborted = fetch(`${gw.url}/v1/actions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.key}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(1_000),
    });
    await expect(aborted).rejects.toThrow();
    expect(hits(named('cut-mid-call'))).toBe(1);
    // The retry attaches to the running call and waits for its outcome.
    const retry = keyed(agent.key, key, body);
    setTimeout(release, 500);
    const answered = await retry;
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body).toMatchObject({ status: 'called', result: { status_code: 201 } });
    // Asked again once the call has closed: the recorded outcome, same call.
    const again = await keyed(agent.key, key, body);
    expect(again.body).toEqual(answered.body);
    expect(hits(named('cut-mid-call'))).toBe(1);
    expect((await gw.as(agent.key)('GET', `/v1/calls/${answered.body.call_id}`)).body).toMatchObject({ status: 'called', result: { status_code: 201 } });
  });

  it('the same key with another request is 409 idempotency_key_reused and sends nothing; keys are per identity', async () => {
    const key = `reuse-${Date.now()}`;
    const first = await keyed(agent.key, key, { service: 'widgets', action: 'create_item', params: { name: 'reuse-first' } });
    expect(first.status).toBe(200);
    const second = await keyed(agent.key, key, { service: 'widgets', action: 'create_item', params: { name: 'reuse-second' } });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'idempotency_key_reused', details: { call_id: first.body.call_id } });
    expect(hits(named('reuse-second'))).toBe(0);
    // Another identity's same key is its own call.
    const theirs = await keyed(sub.key, key, { service: 'widgets', action: 'create_item', params: { name: 'reuse-second' } });
    expect(theirs.status).toBe(200);
    expect(theirs.body.call_id).not.toBe(first.body.call_id);
    expect(hits(named('reuse-second'))).toBe(1);
    // A raw HTTP call and a pending approval keep their key too.
    const raw = { service: 'http', method: 'POST', path: `${up.url}/raw-keyed`, body: { name: 'raw-keyed' } };
    const r1 = await keyed(other.key, `raw-${key}`, raw);
    const r2 = await keyed(other.key, `raw-${key}`, raw);
    expect(r1.status).toBe(202);
    expect(r2.body).toEqual(r1.body);
    for (const bad of ['', 'x'.repeat(256), 'with space', 'tab\there']) {
      const r = await keyed(agent.key, bad, { service: 'widgets', action: 'get_item', params: { id: 'bad-key' } }).catch(() => null);
      if (bad === '' || bad.includes('\t')) continue; // fetch itself refuses or drops such header values
      expect(r?.status, JSON.stringify(bad)).toBe(400);
      expect(r?.body.error.details.field).toBe('Idempotency-Key');
    }
    expect(up.requests.some((r) => r.url === '/items/bad-key')).toBe(false);
  });

  it('the MCP gateway_call takes idempotency_key the same way', async () => {
    const call = async (args: Record<string, unknown>) => (await mcp.callTool({ name: 'gateway_call', arguments: args })) as CallToolResult;
    const args = { service: 'widgets', action: 'create_item', params: { name: 'mcp-keyed' }, idempotency_key: `mcp-${Date.now()}` };
    const first = await call(args);
    expect(first.isError, JSON.stringify(first)).toBeFalsy();
    const firstBody = first.structuredContent as any;
    expect(firstBody).toMatchObject({ status: 'called', call_id: expect.any(String) });
    const again = await call(args);
    expect(again.structuredContent).toEqual(firstBody);
    expect(hits(named('mcp-keyed'))).toBe(1);
    const reused = await call({ ...args, params: { name: 'mcp-keyed-other' } });
    expect(reused.isError).toBe(true);
    expect((reused.structuredContent as any).error.code).toBe('idempotency_key_reused');
    expect(hits(named('mcp-keyed-other'))).toBe(0);
    const mixed = await call({ approval_id: '00000000-0000-4000-8000-000000000000', idempotency_key: 'k' });
    expect((mixed.structuredContent as any).error.code).toBe('invalid_request');
  });
});
