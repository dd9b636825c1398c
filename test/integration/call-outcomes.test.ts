// What a call answers when its first answer is lost on the way (issue: defects 2, 10, 16a): the
// call row, GET /v1/calls/{id}, a keyed retry, a resume and the audit all tell what happened — a
// call that ran is never reported as never started or failed, and every 503 names its call.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startGrpcFaultProxy, type GrpcFaultProxy } from '../support/grpc-fault-proxy.ts';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.ts';
import { holdRequests, startUpstream, upstreamServiceDoc, type RecordedRequest, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

describe('call outcomes that outlive their first answer', () => {
  let gw: TestGateway;
  let up: Upstream;
  let human: ReturnType<TestGateway['as']>;
  let covered: { id: string; key: string };
  let asking: { id: string; key: string };

  const named = (name: string) => (r: RecordedRequest) => r.method === 'POST' && r.body.includes(`"${name}"`);
  const hits = (name: string) => up.requests.filter(named(name)).length;
  const keyed = (token: string, key: string, body: unknown) =>
    gw.request('POST', '/v1/actions/call', { body, headers: { authorization: `Bearer ${token}`, 'idempotency-key': key } });
  const auditOf = (callId: string) =>
    gw.pool.any(sql.type(z.object({ event: z.string(), decision: z.string().nullable() }))`
      SELECT event, decision FROM audit_log WHERE call_id = ${callId} ORDER BY id`);

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const owner = await seedUser(gw.databaseUrl, { orgId, email: 'outcomes-owner@example.test' });
    human = gw.as(await gw.login(owner.email, owner.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'outcomes-secret' })).status).toBe(201);
    const make = async (name: string) => {
      const r = await human('POST', '/v1/identities/agents', { name });
      expect(r.status, r.text).toBe(201);
      return { id: r.body.identity.id as string, key: r.body.key.token as string };
    };
    covered = await make('covered');
    asking = await make('asking');
    expect((await human('POST', `/v1/identities/${covered.id}/rules`, { effect: 'allow', pattern: 'widgets:*:*' })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('a call its workflow claimed is never closed as "never started, nothing was sent", however old its row', async () => {
    const made = await gw.as(covered.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'claimed-src' } });
    expect(made.body.status).toBe('called');
    // A row past the start's grace, still `checking`, whose workflow got as far as its check (the
    // send mark) and is not found: it may have sent, so nothing may say it did not.
    const claimed = randomUUID();
    await gw.pool.query(sql.unsafe`
      INSERT INTO calls (id, org_id, requester_id, user_id, service, template, action, runtime, risk, permission_keys, description,
                         request_redacted, request_envelope, disclosed, request_id, request_digest, status, created_at, send_marked_at)
      SELECT ${claimed}, org_id, requester_id, user_id, service, template, action, runtime, risk, permission_keys, description,
             request_redacted, request_envelope, disclosed, request_id, request_digest, 'checking', now() - '2 minutes'::interval, now() - '2 minutes'::interval
      FROM calls WHERE id = ${made.body.call_id}`);
    const view = await gw.as(covered.key)('GET', `/v1/calls/${claimed}`);
    expect(view.body).toMatchObject({ status: 'checking', finished_at: null });
    expect(view.body.error).toBeUndefined();
    expect(await auditOf(claimed)).toEqual([]);
  });

  it('a keyed retry of a call that went through an approval answers the execution\'s result once it ran, as a resume does', async () => {
    const body = { service: 'widgets', action: 'create_item', params: { name: 'keyed-approved' } };
    const key = `approved-${Date.now()}`;
    const first = await keyed(asking.key, key, body);
    expect(first.status, first.text).toBe(202);
    expect(first.body.status).toBe('pending_approval');
    // Still pending: the retry answers the first answer.
    expect((await keyed(asking.key, key, body)).body).toEqual(first.body);
    expect((await human('POST', `/v1/approvals/${first.body.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    await until(() => gw.as(asking.key)('GET', `/v1/calls/${first.body.call_id}`), (r) => r.body.execution_status === 'executed', 30_000);
    const retry = await keyed(asking.key, key, body);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body).toMatchObject({ status: 'called', result: { status_code: 200 }, call_id: first.body.call_id });
    const resumed = await gw.as(asking.key)('POST', '/v1/actions/call', { approval_id: first.body.approval_id });
    expect(resumed.body).toEqual(retry.body);
    expect(hits('keyed-approved')).toBe(1);
  });

  it('a resume of an execution that was sending when its workflow went answers 502 outcome_unknown with the call id, never "failed", and GET and the audit agree', async () => {
    const release = holdRequests(up, named('sending-when-gone'));
    const raised = await gw.as(asking.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'sending-when-gone' } });
    expect(raised.status, raised.text).toBe(202);
    expect((await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    // The request is at the upstream (the execution reads `executing`) when the workflow is lost.
    await until(async () => hits('sending-when-gone'), (n) => n === 1, 30_000);
    await gw.temporal.workflow.getHandle(callWorkflowId(raised.body.call_id)).terminate('lost for the test');
    release();

    const resumed = await gw.as(asking.key)('POST', '/v1/actions/call', { approval_id: raised.body.approval_id });
    expect(resumed.status, resumed.text).toBe(502);
    expect(resumed.body.error).toMatchObject({ code: 'outcome_unknown', details: { call_id: raised.body.call_id } });
    const view = await gw.as(asking.key)('GET', `/v1/calls/${raised.body.call_id}`);
    expect(view.body).toMatchObject({ execution_status: 'failed', error: { code: 'outcome_unknown' } });
    const approval = await human('GET', `/v1/approvals/${raised.body.approval_id}`);
    expect(approval.body.execution).toMatchObject({ status: 'failed', error: { code: 'outcome_unknown' } });
    expect((await auditOf(raised.body.call_id)).filter((a) => a.event === 'execution.failed')).toEqual([{ event: 'execution.failed', decision: 'outcome_unknown' }]);
    // Asked again: the same answer, from the closed record.
    const again = await gw.as(asking.key)('POST', '/v1/actions/call', { approval_id: raised.body.approval_id });
    expect(again.status).toBe(502);
    expect(again.body.error).toMatchObject({ code: 'outcome_unknown', details: { call_id: raised.body.call_id } });
    expect(hits('sending-when-gone')).toBe(1);
  });
});

describe('a call whose start answer is lost between the API and Temporal (split roles)', () => {
  let api: TestGateway;
  let worker: TestGateway;
  let relay: TcpRelay;
  let up: Upstream;
  let agentKey: string;

  const named = (name: string) => (r: RecordedRequest) => r.method === 'POST' && r.body.includes(`"${name}"`);
  const hits = (name: string) => up.requests.filter(named(name)).length;
  const keyed = (key: string, body: unknown) =>
    api.request('POST', '/v1/actions/call', { body, headers: { authorization: `Bearer ${agentKey}`, 'idempotency-key': key } });

  beforeAll(async () => {
    up = await startUpstream();
    // The API reaches Temporal through the relay; the worker directly.
    relay = await startTcpRelay(inject('temporalAddress'));
    api = await startTestGateway({ role: 'api', env: { TEMPORAL_ADDRESS: relay.address } });
    worker = await startTestGateway({ role: 'worker', databaseUrl: api.databaseUrl, taskQueue: api.taskQueue, env: { GATEWAY_MASTER_KEY: api.config.masterKey!.toString('base64') } });
    const admin = api.as(api.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const owner = await seedUser(api.databaseUrl, { orgId, email: 'lost-answer-owner@example.test' });
    const human = api.as(await api.login(owner.email, owner.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'lost-answer-secret' })).status).toBe(201);
    const made = await human('POST', '/v1/identities/agents', { name: 'lost-answer' });
    expect(made.status, made.text).toBe(201);
    agentKey = made.body.key.token;
    expect((await human('POST', `/v1/identities/${made.body.identity.id}/rules`, { effect: 'allow', pattern: 'widgets:*:*' })).status).toBe(201);
  });
  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await relay?.close();
    await up?.close();
  });

  /**
   * Runs a covered call whose workflow runs it to its end while what Temporal answers the API is
   * lost, and the connection then breaks (as when Temporal restarts): the client sends the start
   * again, to a workflow that has completed. Returns the first answer and the call id.
   */
  async function callWithLostAnswer(name: string, headers: Record<string, string>) {
    const release = holdRequests(up, named(name));
    const answer = api.request('POST', '/v1/actions/call', { body: bodyOf(name), headers: { authorization: `Bearer ${agentKey}`, ...headers } });
    await until(async () => hits(name), (n) => n === 1, 30_000);
    relay.loseReplies();
    release();
    const callId = await api.pool.oneFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM calls WHERE description = ${`Create item "${name}"`}`);
    await until(() => api.pool.oneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM calls WHERE id = ${callId}`), (s) => s === 'called', 30_000);
    // Asked on the worker's own (direct) connection: the workflow has completed.
    await until(async () => (await worker.temporal.workflow.getHandle(callWorkflowId(callId)).describe()).status.name, (s) => s === 'COMPLETED', 30_000);
    relay.cut();
    return { first: await answer, callId };
  }
  const bodyOf = (name: string) => ({ service: 'widgets', action: 'create_item', params: { name } });

  /** The row, GET, the audit and the upstream say the call ran once and answered 201. */
  async function expectCalledOnce(name: string, callId: string) {
    const view = await api.as(agentKey)('GET', `/v1/calls/${callId}`);
    expect(view.body).toMatchObject({ status: 'called', http_status_code: 201, result: { status_code: 201 } });
    expect(view.body.error).toBeUndefined();
    const audit = await api.pool.any(sql.type(z.object({ event: z.string(), decision: z.string().nullable() }))`
      SELECT event, decision FROM audit_log WHERE call_id = ${callId} ORDER BY id`);
    expect(audit).toEqual([{ event: 'call.called', decision: 'covered' }]);
    expect(hits(name)).toBe(1);
  }

  it('a keyed covered call that ran while its start\'s answer was lost answers its result; its row, GET, a keyed retry and the audit agree', async () => {
    const key = `lost-${Date.now()}`;
    const { first, callId } = await callWithLostAnswer('lost-keyed', { 'idempotency-key': key });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ status: 'called', result: { status_code: 201 }, call_id: callId });
    expect((await keyed(key, bodyOf('lost-keyed'))).body).toEqual(first.body);
    await expectCalledOnce('lost-keyed', callId);
  });

  it('an unkeyed covered call that ran while its start\'s answer was lost answers its result, never "could not be started"', async () => {
    const { first, callId } = await callWithLostAnswer('lost-unkeyed', {});
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ status: 'called', result: { status_code: 201 }, call_id: callId });
    await expectCalledOnce('lost-unkeyed', callId);
  });
});

describe('a call whose start RPC fails after Temporal took it (split roles, through a gRPC proxy)', () => {
  let api: TestGateway;
  let worker: TestGateway;
  let proxy: GrpcFaultProxy;
  let up: Upstream;
  let agentKey: string;
  let manualKey: string;
  let human: ReturnType<TestGateway['as']>;
  const DEADLINE_EXCEEDED = 4;
  const NOT_FOUND = 5;

  const named = (name: string) => (r: RecordedRequest) => r.method === 'POST' && r.body.includes(`"${name}"`);
  const hits = (name: string) => up.requests.filter(named(name)).length;
  const bodyOf = (name: string) => ({ service: 'widgets', action: 'create_item', params: { name } });
  const call = (name: string, headers: Record<string, string> = {}) =>
    api.request('POST', '/v1/actions/call', { body: bodyOf(name), headers: { authorization: `Bearer ${agentKey}`, ...headers } });

  beforeAll(async () => {
    up = await startUpstream();
    proxy = await startGrpcFaultProxy(inject('temporalAddress'));
    api = await startTestGateway({ role: 'api', env: { TEMPORAL_ADDRESS: proxy.address } });
    worker = await startTestGateway({ role: 'worker', databaseUrl: api.databaseUrl, taskQueue: api.taskQueue, env: { GATEWAY_MASTER_KEY: api.config.masterKey!.toString('base64') } });
    const admin = api.as(api.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const owner = await seedUser(api.databaseUrl, { orgId, email: 'rpc-fault-owner@example.test' });
    human = api.as(await api.login(owner.email, owner.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'rpc-fault-secret' })).status).toBe(201);
    const made = await human('POST', '/v1/identities/agents', { name: 'rpc-fault' });
    expect(made.status, made.text).toBe(201);
    agentKey = made.body.key.token;
    const manual = await human('POST', '/v1/identities/agents', { name: 'rpc-fault-manual', auto_call_on_approve: false });
    expect(manual.status, manual.text).toBe(201);
    manualKey = manual.body.key.token;
    expect((await human('POST', `/v1/identities/${made.body.identity.id}/rules`, { effect: 'allow', pattern: 'widgets:*:*' })).status).toBe(201);
    // Update-with-Start reaches Temporal and the call runs, but its reply is replaced by a deadline error.
    proxy.failAfterReply('ExecuteMultiOperation', DEADLINE_EXCEEDED, 'context deadline exceeded');
  });
  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await proxy?.close();
    await up?.close();
  });

  /** The row, GET and the audit say the call ran once and answered 200. */
  async function expectCalledOnce(name: string, callId: string) {
    const view = await api.as(agentKey)('GET', `/v1/calls/${callId}`);
    expect(view.body).toMatchObject({ status: 'called', http_status_code: 200, result: { status_code: 200 } });
    expect(view.body.error).toBeUndefined();
    const audit = await api.pool.any(sql.type(z.object({ event: z.string(), decision: z.string().nullable() }))`
      SELECT event, decision FROM audit_log WHERE call_id = ${callId} ORDER BY id`);
    expect(audit).toEqual([{ event: 'call.called', decision: 'covered' }]);
    expect(hits(name)).toBe(1);
  }

  it('an unkeyed covered call is followed to its result, never marked "could not be started"', async () => {
    const before = proxy.calls('ExecuteMultiOperation');
    const first = await call('rpc-fault-unkeyed');
    expect(proxy.calls('ExecuteMultiOperation')).toBeGreaterThan(before);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    await expectCalledOnce('rpc-fault-unkeyed', first.body.call_id);
  });

  it('a keyed covered call answers its result, and a keyed retry answers the same without sending again', async () => {
    const key = `rpc-fault-${Date.now()}`;
    const first = await call('rpc-fault-keyed', { 'idempotency-key': key });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect((await call('rpc-fault-keyed', { 'idempotency-key': key })).body).toEqual(first.body);
    await expectCalledOnce('rpc-fault-keyed', first.body.call_id);
  });

  it('a start that never reached Temporal is started again once Temporal answers, and runs once', async () => {
    proxy.heal('ExecuteMultiOperation');
    proxy.refuseNext('ExecuteMultiOperation', DEADLINE_EXCEEDED, 'context deadline exceeded');
    const before = proxy.calls('ExecuteMultiOperation');
    const first = await call('rpc-refused');
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(proxy.calls('ExecuteMultiOperation') - before).toBe(2);
    await expectCalledOnce('rpc-refused', first.body.call_id);
  });

  it('a resume answered "not found" while Temporal still runs the workflow (just after a restart) is sent again, not settled as gone', async () => {
    proxy.heal('ExecuteMultiOperation');
    const raised = await api.as(manualKey)('POST', '/v1/actions/call', bodyOf('not-yet-visible'));
    expect(raised.status, raised.text).toBe(202);
    expect((await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    proxy.refuseNext('UpdateWorkflowExecution', NOT_FOUND, 'workflow not found');
    const resumed = await api.as(manualKey)('POST', '/v1/actions/call', { approval_id: raised.body.approval_id });
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'called', result: { status_code: 200 }, call_id: raised.body.call_id });
    expect((await human('GET', `/v1/approvals/${raised.body.approval_id}`)).body.execution).toMatchObject({ status: 'executed' });
    expect(hits('not-yet-visible')).toBe(1);
  });
});
