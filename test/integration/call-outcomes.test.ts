// What a call answers when its first answer is lost on the way (issue: defects 2, 10, 16a): the
// call row, GET /v1/calls/{id}, a keyed retry, a resume and the audit all tell what happened — a
// call that ran is never reported as never started or failed, and every 503 names its call.
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
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
