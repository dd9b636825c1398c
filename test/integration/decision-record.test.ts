// The statements behind an approval's transitions (issue 14 cut their round trips): a decision is
// one atomic statement (approval, execution, call status, audit row), and a person's event is
// stored and announced by one statement, never twice for the same transition.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as calls from '../../server/calls/store.ts';
import { publishUserEvent } from '../../server/events/store.ts';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { seedUser } from '../support/seed.ts';
import { openSse } from '../support/sse.ts';
import { holdRequests, startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

describe('the statements of an approval transition', () => {
  let gw: TestGateway;
  let up: Upstream;
  let human: ReturnType<TestGateway['as']>;
  let humanToken: string;
  let orgId: string;
  let userId: string;
  let agent: ReturnType<TestGateway['as']>;
  let manualAgent: ReturnType<TestGateway['as']>;

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'owner@example.test' });
    userId = m.userId;
    humanToken = await gw.login(m.email, m.password);
    human = gw.as(humanToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk-decision-test' })).status).toBe(201);
    const made = await human('POST', '/v1/identities/agents', { name: 'assistant' });
    agent = gw.as(made.body.key.token);
    const careful = await human('POST', '/v1/identities/agents', { name: 'careful', auto_call_on_approve: false });
    manualAgent = gw.as(careful.body.key.token);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  const raise = async (name: string, autoCall = true) => {
    const res = await (autoCall ? agent : manualAgent)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status).toBe(202);
    const row = await calls.getApproval(gw.pool, res.body.approval_id);
    return row!;
  };
  const auditCount = (approvalId: string) => gw.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM audit_log WHERE approval_id = ${approvalId}`);
  const entry = (approvalId: string, callId: string) => ({ orgId, event: 'approval.resolved' as const, callId, approvalId, decision: 'allow_once', details: { status: 'allowed' } });

  it('writes the approval, the execution, the call status and the audit row together, or none of them', async () => {
    const a = await raise('atomic');
    const auditBefore = await auditCount(a.id);
    const callBefore = await calls.getCall(gw.pool, a.call_id);
    const decision = (runtime: string) =>
      calls.recordDecision(
        gw.pool,
        {
          approvalId: a.id,
          update: { status: 'allowed', decision: 'allow_once', reason: null, resolvedBy: userId, resolved: true },
          execution: { id: randomUUID(), runtime, expiresAt: new Date(Date.now() + 60_000) },
          call: { id: a.call_id, status: 'allowed', open: true },
        },
        entry(a.id, a.call_id),
      );
    // The execution insert fails its check: nothing else of the decision is written either.
    await expect(decision('carrier-pigeon')).rejects.toThrow();
    expect((await calls.getApproval(gw.pool, a.id))!.status).toBe('pending');
    expect(await calls.getExecutionByApproval(gw.pool, a.id)).toBeNull();
    expect((await calls.getCall(gw.pool, a.call_id))!.status).toBe(callBefore!.status);
    expect(await auditCount(a.id)).toBe(auditBefore);

    await decision('http');
    expect((await calls.getApproval(gw.pool, a.id))!).toMatchObject({ status: 'allowed', decision: 'allow_once', resolved_by: userId });
    expect((await calls.getExecutionByApproval(gw.pool, a.id))!.status).toBe('pending');
    expect((await calls.getCall(gw.pool, a.call_id))!.status).toBe('allowed');
    expect(await auditCount(a.id)).toBe(auditBefore + 1);
  });

  it('writes nothing for an approval that does not exist, and says so', async () => {
    const a = await raise('missing');
    const ghost = randomUUID();
    await expect(
      calls.recordDecision(gw.pool, { approvalId: ghost, update: { status: 'denied', decision: 'deny', resolved: true }, call: { id: a.call_id, status: 'denied', open: false } }, entry(ghost, a.call_id)),
    ).rejects.toThrow(`approval ${ghost} not found`);
    expect(await auditCount(ghost)).toBe(0);
    expect((await calls.getCall(gw.pool, a.call_id))!.status).not.toBe('denied');
  });

  it('writes an allow and reads what its send needs in one statement: once, and the same reads on a retry', async () => {
    const a = await raise('one-round');
    const callBefore = (await calls.getCall(gw.pool, a.call_id))!;
    const auditBefore = await auditCount(a.id);
    const executionId = randomUUID();
    const allow = () =>
      calls.recordDecisionForSend(
        gw.pool,
        {
          approvalId: a.id,
          update: { status: 'allowed', decision: 'allow_once', reason: null, resolvedBy: userId, resolved: true },
          execution: { id: executionId, runtime: 'http', expiresAt: new Date(Date.now() + 60_000) },
          call: { id: a.call_id, status: 'allowed', open: true },
        },
        entry(a.id, a.call_id),
        { requesterId: callBefore.requester_id, keys: callBefore.permission_keys, alongside: (org, user) => sql.fragment`json_build_object('org', ${org}, 'user', ${user})` },
      );
    const first = await allow();
    expect(first.written).toBe(true);
    // The requester's chain (requester first) with its rules, the stored request as the API wrote
    // it, and what rode along for the requester's org and user.
    expect(first.chain.map((c) => c.id)).toEqual([callBefore.requester_id, userId]);
    expect(first.call).toEqual({ request_envelope: callBefore.request_envelope, request_redacted: callBefore.request_redacted });
    expect(first.also).toEqual({ org: orgId, user: userId });
    expect((await calls.getExecutionByApproval(gw.pool, a.id))!).toMatchObject({ id: executionId, status: 'pending' });
    expect((await calls.getCall(gw.pool, a.call_id))!.status).toBe('allowed');
    expect(await auditCount(a.id)).toBe(auditBefore + 1);

    // A retry (the activity's completion lost) writes nothing more and reads the same.
    const retry = await allow();
    expect(retry.written).toBe(false);
    expect(retry.chain.map((c) => c.id)).toEqual(first.chain.map((c) => c.id));
    expect(retry.call).toEqual(first.call);
    expect(await auditCount(a.id)).toBe(auditBefore + 1);

    const ghost = randomUUID();
    await expect(
      calls.recordDecisionForSend(
        gw.pool,
        { approvalId: ghost, update: { status: 'denied', decision: 'deny', resolved: true }, call: { id: a.call_id, status: 'denied', open: false } },
        entry(ghost, a.call_id),
        { requesterId: callBefore.requester_id, keys: callBefore.permission_keys },
      ),
    ).rejects.toThrow(`approval ${ghost} not found`);
    expect(await auditCount(ghost)).toBe(0);
  });

  it('records a decision only after the workflow accepted it; an auto-call allow is re-checked and sent in the same activity', async () => {
    const a = await raise('local-steps');
    expect((await human('POST', `/v1/approvals/${a.id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    await until(() => human('GET', `/v1/approvals/${a.id}`), (r) => r.body.execution?.status === 'executed');
    // The row is final once the record step commits; its marker is in the history once the
    // workflow task that ran it completes: the workflow's end says so.
    const handle = gw.temporal.workflow.getHandle(callWorkflowId(a.call_id));
    await handle.result();
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : []));
    // The decision is a regular activity (issue 24): its statement runs only once the update's
    // acceptance is in the history, so a crash can never leave a committed decision the workflow
    // did not see. The API runs a worker here, so the auto-call's re-check and send run in that
    // same activity: no workflow task between decision and send.
    expect(scheduled).toEqual(['allowThenSend']);
    const accepted = events.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    const decision = events.findIndex((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'allowThenSend');
    expect(accepted).toBeGreaterThanOrEqual(0);
    expect(decision).toBeGreaterThan(accepted);
    // One workflow version before the first release: no patch markers at all.
    expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
    const markers = historyText(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity'));
    for (const step of ['checkThenExecute', 'raiseApproval', 'recordExecutionResult']) expect(markers).toContain(step);
    for (const step of ['recordDecision', 'prepareExecution']) expect(markers).not.toContain(step);
    // Each step wrote its row once: the decision, the execution's start and its end.
    const rows = await gw.pool.any(sql.type(z.object({ event: z.string() }))`SELECT event FROM audit_log WHERE approval_id = ${a.id} ORDER BY id`);
    expect(rows.map((r) => r.event)).toEqual(['approval.raised', 'approval.resolved', 'execution.started', 'execution.executed']);
  });

  it('without an auto-call, an allow is only recorded; the resume runs the re-check and send as before', async () => {
    const a = await raise('local-steps-manual', false);
    expect((await human('POST', `/v1/approvals/${a.id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    const history = await gw.temporal.workflow.getHandle(callWorkflowId(a.call_id)).fetchHistory();
    const scheduled = (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : []));
    expect(scheduled).toEqual(['recordDecision']);
  });

  it('stores and announces a person’s event once, with the id it was stored under', async () => {
    // Real approvals the person may read: a stream delivers only events about those.
    const [first, second] = [await raise('event-once-1', false), await raise('event-once-2', false)];
    const s = await openSse(`${gw.url}/v1/events`, { authorization: `Bearer ${humanToken}` });
    try {
      const approvalId = first.id;
      const e = { orgId, userId, type: 'approval.resolved', data: { approval_id: approvalId, status: 'denied' }, dedupeKey: `evt_${approvalId}_resolved_denied` };
      await publishUserEvent(gw.pool, e);
      await publishUserEvent(gw.pool, e);
      const resolvedOf = (id: string) => (x: { event?: string; data?: { approval_id?: string } }) => x.event === 'approval.resolved' && x.data?.approval_id === id;
      const got = await s.waitFor(resolvedOf(approvalId));
      const stored = await gw.pool.any(sql.type(z.object({ id: z.string() }))`SELECT id::text FROM user_events WHERE dedupe_key = ${e.dedupeKey}`);
      expect(stored).toHaveLength(1);
      expect(got.id).toBe(stored[0]!.id);
      // A second announcement would have arrived by the time a later one does.
      const later = second.id;
      await publishUserEvent(gw.pool, { ...e, data: { approval_id: later, status: 'denied' }, dedupeKey: `evt_${later}_resolved_denied` });
      await s.waitFor(resolvedOf(later));
      expect(s.events.filter(resolvedOf(approvalId))).toHaveLength(1);
    } finally {
      s.close();
    }
  });

  // Last in this file: it leaves the upstream's handler holding this test's requests.
  it('answers the approver of an auto-call allow once the request has left, not before, and without waiting for the upstream’s answer', async () => {
    const tag = 'answer-after-departure';
    const release = holdRequests(up, (r) => r.body.includes(tag));
    const a = await raise(tag);
    try {
      const resolved = await human('POST', `/v1/approvals/${a.id}/resolve`, { decision: 'allow_once' });
      const answeredAt = Date.now();
      expect(resolved.status).toBe(200);
      expect(resolved.body).toMatchObject({ id: a.id, status: 'allowed' });
      // The approver's answer follows the request out (its work never delays the request): by the
      // time it came, the send was marked (the mark is written just before the request leaves).
      // The upstream's server may read the request a moment after this process read the answer.
      const execution = (await human('GET', `/v1/approvals/${a.id}`)).body.execution;
      const markedAt = (await calls.getExecution(gw.pool, execution.id))?.send_marked_at;
      expect(markedAt).toBeInstanceOf(Date);
      expect(markedAt!.getTime()).toBeLessThanOrEqual(answeredAt);
      await until(async () => up.requests.filter((r) => r.body.includes(tag)).length, (n) => n === 1);
      // The upstream still holds its own answer, so the execution is still running.
      expect((await human('GET', `/v1/approvals/${a.id}`)).body.execution?.status).toBe('executing');
    } finally {
      release();
    }
    await until(() => human('GET', `/v1/approvals/${a.id}`), (r) => r.body.execution?.status === 'executed');
  });
});
