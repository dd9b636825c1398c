// The durable call end to end: real PostgreSQL, real Temporal, a real upstream on loopback.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { verify } from '../../core/webhooks/signing.ts';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const SECRET = 'sk_upstream_KNOWN_SECRET_8642';
const PASSWORD = 'hunter2-KNOWN-PASSWORD';


describe('the durable call', () => {
  let gw: TestGateway;
  let up: Upstream;
  let hooks: Upstream;
  let hookSecret: string;
  let admin: ReturnType<TestGateway['as']>;
  let human: ReturnType<TestGateway['as']>;
  let humanId: string;
  let agent: { id: string; key: string; call: ReturnType<TestGateway['as']> };
  let manual: { id: string; key: string; call: ReturnType<TestGateway['as']> };
  let sibling: { id: string; key: string; call: ReturnType<TestGateway['as']> };
  let sub: { id: string; key: string; call: ReturnType<TestGateway['as']> };

  const makeAgent = async (body: Record<string, unknown>, as = human) => {
    const res = await as('POST', '/v1/identities/agents', body);
    expect(res.status).toBe(201);
    return { id: res.body.identity.id as string, key: res.body.key.token as string, call: gw.as(res.body.key.token) };
  };
  const allow = (identityId: string, pattern: string) => human('POST', `/v1/identities/${identityId}/rules`, { effect: 'allow', pattern });

  beforeAll(async () => {
    up = await startUpstream();
    hooks = await startUpstream();
    gw = await startTestGateway({ env: { GATEWAY_EXECUTION_WINDOW_SECONDS: '3' } });
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'owner@example.test' });
    humanId = m.userId;
    human = gw.as(await gw.login(m.email, m.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: SECRET })).status).toBe(201);
    agent = await makeAgent({ name: 'assistant' });
    manual = await makeAgent({ name: 'careful', auto_call_on_approve: false });
    sibling = await makeAgent({ name: 'sibling' });
    sub = await makeAgent({ name: 'helper', parent_id: agent.id }, human);
    const hook = await admin('POST', '/v1/webhooks', {
      url: `${hooks.url}/gateway-events`,
      events: ['approval.raised', 'approval.resolved', 'approval.executed', 'approval.execution_failed'],
    });
    expect(hook.status).toBe(201);
    hookSecret = hook.body.secret;
  });
  afterAll(async () => {
    // `RECORD_HISTORIES=current npx vitest run test/integration/calls.test.ts` writes the workflow's
    // histories to test/fixtures/histories/ for replay-recorded.test.ts.
    if (process.env.RECORD_HISTORIES && gw) await recordHistories(gw, process.env.RECORD_HISTORIES);
    await gw?.stop();
    await up?.close();
    await hooks?.close();
  });

  it('executes a covered call at once, injecting the vault secret', async () => {
    expect((await allow(agent.id, 'widgets:get_item:*')).status).toBe(201);
    const before = up.requests.length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'a1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'called', action_description: 'Read item a1', result: { status_code: 200, body: { ok: true, method: 'GET', url: '/items/a1' } } });
    expect(typeof res.body.result.duration_ms).toBe('number');
    expect(up.requests.length).toBe(before + 1);
    expect(up.requests.at(-1)!.headers['x-api-key']).toBe(SECRET);
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
  });

  it('answers a covered call in-process from its eagerly started first task (role all), the same answer the workflow and the call row keep', async () => {
    const firstAnswerCounts = () => gw.exchange.firstAnswers.counts();
    const before = firstAnswerCounts();
    const hits = up.requests.length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'eager-1' } });
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(firstAnswerCounts().delivered).toBe(before.delivered + 1);
    // The answer left before the workflow task completed; the workflow ends with the same outcome,
    // summarised: an operator reads the status and time in the Temporal UI, never the upstream's body.
    const handle = gw.temporal.workflow.getHandle(callWorkflowId(res.body.call_id));
    const kept = (await handle.result()) as { status: string; result: Record<string, unknown> };
    expect(kept).toMatchObject({ status: 'called', result: { status_code: 200, duration_ms: expect.any(Number) } });
    expect(Object.keys(kept.result).sort()).toEqual(['duration_ms', 'status_code']);
    expect((await agent.call('GET', `/v1/calls/${res.body.call_id}`)).body).toMatchObject({ status: 'called', http_status_code: 200 });
    expect(up.requests.length).toBe(hits + 1);
    // A call that needs an approval is answered by the workflow's update (its first answer is deferred).
    const pending = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'eager-2' } });
    expect(pending.body.status).toBe('pending_approval');
    expect(firstAnswerCounts().deferred).toBe(before.deferred + 1);
  });

  it('validates calls strictly before starting anything', async () => {
    for (const body of [
      { service: 'widgets', action: 'get_item', params: {} },
      { service: 'widgets', action: 'get_item', params: { id: 'x', extra: 1 } },
      { service: 'widgets', action: 'nope' },
      { service: 'widgets', action: 'get_item', bogus: true },
      { approval_id: 'not-a-uuid' },
      { service: 'http', method: 'GET', path: 'not a url' },
    ]) {
      const res = await agent.call('POST', '/v1/actions/call', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await agent.call('POST', '/v1/actions/call', { service: 'nothing-here', action: 'x' })).status).toBe(404);
  });

  it('denies at once when a deny rule matches anywhere on the chain', async () => {
    await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'deny', pattern: 'widgets:delete_item:*' });
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'z' } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('denied');
    expect(res.body.reason).toContain('widgets:delete_item:*');
  });

  let autoApprovalId: string;
  it('raises an approval for a gap, and replays it automatically once allowed', async () => {
    const before = up.requests.length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'report', folder: 'q3', password: PASSWORD } });
    expect(res.status).toBe(202);
    const p = res.body;
    expect(p).toMatchObject({
      status: 'pending_approval',
      action_description: 'Create item "report" in q3',
      relationship: 'self',
      auto_call_on_approve: true,
      risk: 'med',
      permission_keys: ['widgets:create_item:report'],
    });
    expect(p.approval_url).toBe(`${gw.config.publicUrl}/approvals/${p.approval_id}`);
    expect(Date.parse(p.expires_at)).toBeGreaterThan(Date.now());
    expect(p.suggested_tiers.map((t: any) => t.keys)).toEqual([['widgets:create_item:report'], ['widgets:create_item:*'], ['widgets:*:*']]);
    expect(up.requests.length).toBe(before);
    autoApprovalId = p.approval_id;

    const view = await human('GET', `/v1/approvals/${p.approval_id}`);
    expect(view.body).toMatchObject({ status: 'pending', relationship: 'downstream', requester: { id: agent.id, kind: 'agent' } });
    expect(view.body.action.request.body.password).toBe('[REDACTED]');

    const resolved = await human('POST', `/v1/approvals/${p.approval_id}/resolve`, { decision: 'allow_once' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: p.approval_id, status: 'allowed', relationship: 'downstream', derived_keys: ['widgets:create_item:report'] });
    expect(resolved.body.execution).toMatchObject({ status: 'pending', runtime: 'http' });

    const done = await until(() => human('GET', `/v1/approvals/${p.approval_id}`), (r) => r.body.execution?.status === 'executed');
    expect(done.body.execution).toMatchObject({ triggered_by: 'auto', http_status_code: 200 });
    expect(up.requests.length).toBe(before + 1);
    expect(JSON.parse(up.requests.at(-1)!.body)).toEqual({ name: 'report', folder: 'q3', password: PASSWORD });
    // The requester reading it with approval_id gets the stored result.
    const resumed = await agent.call('POST', '/v1/actions/call', { approval_id: p.approval_id });
    expect(resumed.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(up.requests.length).toBe(before + 1);
  });

  it('sends signed approval.raised, approval.resolved and approval.executed webhooks', async () => {
    const events = await until(
      async () => hooks.requests.map((r) => ({ r, body: JSON.parse(r.body) })).filter((e) => e.body.data?.approval_id === autoApprovalId),
      (list) => ['approval.raised', 'approval.resolved', 'approval.executed'].every((t) => list.some((e) => e.body.type === t)),
    );
    for (const { r } of events) expect(verify(r.headers as Record<string, string>, r.body, hookSecret)).toBe(true);
    const executed = events.find((e) => e.body.type === 'approval.executed')!.body;
    expect(executed.data.execution).toMatchObject({ status: 'executed', triggered_by: 'auto', http_status_code: 200 });
    expect(JSON.stringify(events.map((e) => e.body))).not.toContain(PASSWORD);
    // One delivery per event, even if activities were retried.
    const ids = events.map((e) => e.body.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps secrets and redacted fields out of workflow history, audit and the database', async () => {
    const a = await human('GET', `/v1/approvals/${autoApprovalId}`);
    const callId = await gw.pool.oneFirst(sql.type(z.object({ call_id: z.string() }))`SELECT call_id FROM approvals WHERE id = ${a.body.id}`);
    const history = historyText(await gw.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory());
    // The decoded payloads are there (the check would be empty otherwise)...
    expect(history).toContain('Create item \\"report\\" in q3');
    expect(history).toContain('widgets:create_item:report');
    // ...and neither the vault secret nor the redacted password is.
    expect(history).not.toContain(SECRET);
    expect(history).not.toContain(PASSWORD);
    const audit = await admin('GET', '/v1/audit?limit=200');
    expect(audit.status).toBe(200);
    const events = audit.body.entries.map((e: any) => e.event);
    expect(events).toEqual(expect.arrayContaining(['call.called', 'call.denied', 'approval.raised', 'approval.resolved', 'execution.executed']));
    expect(JSON.stringify(audit.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(audit.body)).not.toContain(SECRET);
    expect(gw.logs.join('\n')).not.toContain(SECRET);
    expect(gw.logs.join('\n')).not.toContain(PASSWORD);
  });

  it('with auto_call_on_approve=false the requester resumes by approval_id; two concurrent resumes execute once', async () => {
    const before = up.requests.length;
    const res = await manual.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'manual-1' } });
    expect(res.body).toMatchObject({ status: 'pending_approval', auto_call_on_approve: false });
    const id = res.body.approval_id;
    await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' });
    await new Promise((r) => setTimeout(r, 300));
    expect(up.requests.length).toBe(before);
    expect((await sibling.call('POST', '/v1/actions/call', { approval_id: id })).status).toBe(404);
    const [r1, r2] = await Promise.all([
      manual.call('POST', '/v1/actions/call', { approval_id: id }),
      manual.call('POST', '/v1/actions/call', { approval_id: id }),
    ]);
    // One resume executes. The other either collides with it (409 conflict) or, when it arrives
    // after the execution finished, reads the stored result (200): never a second request.
    const statuses = [r1.status, r2.status].sort();
    expect([[200, 409], [200, 200]]).toContainEqual(statuses);
    const ok = r1.status === 200 ? r1 : r2;
    expect(ok.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    const other = ok === r1 ? r2 : r1;
    if (other.status === 409) expect(other.body.error.code).toBe('conflict');
    else expect(other.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(up.requests.length).toBe(before + 1);
    const view = await human('GET', `/v1/approvals/${id}`);
    expect(view.body.execution).toMatchObject({ status: 'executed', triggered_by: 'agent' });
  });

  it('expires an allowed call that is not resumed within the execution window', async () => {
    const res = await manual.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'too-late' } });
    const id = res.body.approval_id;
    await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' });
    const expired = await until(() => human('GET', `/v1/approvals/${id}`), (r) => r.body.execution?.status === 'expired', 10_000);
    expect(expired.body.status).toBe('allowed');
    const late = await manual.call('POST', '/v1/actions/call', { approval_id: id });
    expect(late.status).toBe(409);
  });

  it('denies with a reason the requester sees', async () => {
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'nope' } });
    const id = res.body.approval_id;
    const denied = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny', reason: 'not this quarter' });
    expect(denied.body).toMatchObject({ status: 'denied' });
    expect(denied.body.execution).toBeUndefined();
    const again = await agent.call('POST', '/v1/actions/call', { approval_id: id });
    expect(again.body).toEqual({ status: 'denied', reason: 'not this quarter', call_id: expect.any(String) });
    expect((await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' })).status).toBe(409);
  });

  it('allow_remember plants a rule after the replay succeeds; the next matching call skips approval', async () => {
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'first' } });
    const id = res.body.approval_id;
    const badKeys = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_always', remember_keys: ['widgets:*:*:extra'], ttl: '1h' });
    expect(badKeys.status).toBe(400);
    const badTtl = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_always', remember_keys: ['widgets:create_item:*'], ttl: '1w' });
    expect(badTtl.status).toBe(400);
    const ok = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_always', remember_keys: ['widgets:create_item:*'], ttl: '1h' });
    expect(ok.status).toBe(200);
    await until(() => human('GET', `/v1/approvals/${id}`), (r) => r.body.execution?.status === 'executed');
    const rules = await until(() => human('GET', `/v1/identities/${agent.id}/rules`), (r) => r.body.rules.some((x: any) => x.source === 'approval'));
    const planted = rules.body.rules.find((x: any) => x.source === 'approval');
    expect(planted).toMatchObject({ effect: 'allow', pattern: 'widgets:create_item:*', approval_id: id });
    expect(Date.parse(planted.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    const second = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'second' } });
    expect(second.body.status).toBe('called');
  });

  it('bubbles from a covered agent resolver up to the user', async () => {
    // The subagent's parent is covered for this key, so the parent is the first resolver.
    await allow(agent.id, 'widgets:delete_item:keep-*');
    const res = await sub.call('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'sub-1' } });
    // The answer and the record agree on the caller's relationship to the requester (itself).
    expect(res.body).toMatchObject({ status: 'pending_approval', relationship: 'self' });
    const id = res.body.approval_id;
    expect((await sub.call('GET', `/v1/approvals/${id}`)).body).toMatchObject({ relationship: 'self', resolver_id: agent.id });
    const atAgent = await agent.call('GET', `/v1/approvals/${id}`);
    expect(atAgent.body).toMatchObject({ resolver_id: agent.id, relationship: 'downstream' });
    const bubbled = await agent.call('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' });
    expect(bubbled.status).toBe(200);
    expect(bubbled.body.status).toBe('bubbled');
    expect((await human('GET', `/v1/approvals/${id}`)).body.resolver_id).toBe(humanId);
    // Past the user (issue 29): to the user's approver, else the org's admins; above them, nobody.
    expect((await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' })).status).toBe(200);
    expect((await human('GET', `/v1/approvals/${id}`)).body.routing.stage).toBe('admins');
    expect((await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' })).status).toBe(409);
    const allowed = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' });
    expect(allowed.body.status).toBe('allowed');
    const assigned = await human('GET', '/v1/approvals?scope=assigned&status=allowed');
    expect(assigned.body.approvals.map((a: any) => a.id)).toContain(id);
  });

  it('refuses resolvers outside the requester chain and the requester itself', async () => {
    const res = await manual.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'guarded' } });
    expect(res.body.status).toBe('pending_approval');
    const id = res.body.approval_id;
    const bySibling = await sibling.call('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' });
    expect(bySibling.status).toBe(403);
    expect(bySibling.body.error.code).toBe('not_in_your_chain');
    const bySelf = await manual.call('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' });
    expect(bySelf.status).toBe(403);
    // Another agent's subagent is no ancestor either.
    const bySub = await sub.call('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' });
    expect(bySub.status).toBe(403);
    expect(bySub.body.error.code).toBe('not_in_your_chain');
    expect((await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'maybe' })).status).toBe(400);
    // Org admins may step in.
    expect((await admin('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny', reason: 'admin says no' })).body.status).toBe('denied');
    const listed = await human('GET', '/v1/approvals?scope=mine&limit=2');
    expect(listed.body.approvals).toHaveLength(2);
    expect(listed.body.next_cursor).toBeTruthy();
    const forged = Buffer.from('2020-01-01T00:00:00.000Z|not-a-uuid').toString('base64url');
    expect((await human('GET', `/v1/approvals?cursor=${forged}`)).status).toBe(400);
    const next = await human('GET', `/v1/approvals?scope=mine&limit=2&cursor=${listed.body.next_cursor}`);
    expect(next.body.approvals[0].id).not.toBe(listed.body.approvals[1].id);
  });

  it('expires a pending approval when its timer fires, and de-duplicates identical pending requests', async () => {
    expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 2 })).status).toBe(200);
    const first = await manual.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'dup' } });
    const second = await manual.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'dup' } });
    expect(second.body.approval_id).toBe(first.body.approval_id);
    const expired = await until(() => human('GET', `/v1/approvals/${first.body.approval_id}`), (r) => r.body.status === 'expired', 10_000);
    expect(expired.body.status).toBe('expired');
    expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 900 })).status).toBe(200);
    expect((await human('PATCH', '/v1/org/settings', { approval_ttl_seconds: 5 })).status).toBe(403);
    expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 0 })).status).toBe(400);
  });

  it('supersedes the oldest pending approval beyond the per-agent cap', async () => {
    await admin('PATCH', '/v1/org/settings', { max_pending_per_agent: 2 });
    const ids: string[] = [];
    for (const name of ['cap-1', 'cap-2', 'cap-3']) {
      ids.push((await manual.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } })).body.approval_id);
    }
    const oldest = await until(() => human('GET', `/v1/approvals/${ids[0]}`), (r) => r.body.status === 'superseded');
    expect(oldest.body.status).toBe('superseded');
    expect((await human('GET', `/v1/approvals/${ids[2]}`)).body.status).toBe('pending');
    await admin('PATCH', '/v1/org/settings', { max_pending_per_agent: 10 });
  });

  it('returns the final state as the workflow result (what the Temporal UI and `temporal workflow result` show)', async () => {
    const callIdOf = (approvalId: string) => gw.pool.oneFirst(sql.type(z.object({ call_id: z.string() }))`SELECT call_id FROM approvals WHERE id = ${approvalId}`);
    const resultOf = (callId: string) => gw.temporal.workflow.getHandle(callWorkflowId(callId)).result();
    // An approved call, executed on allow: the approval record with its execution summary.
    const executed = await until(() => human('GET', `/v1/approvals/${autoApprovalId}`), (r) => r.body.execution?.status === 'executed');
    const result: any = await resultOf(await callIdOf(autoApprovalId));
    expect(result).toMatchObject({
      id: autoApprovalId,
      status: 'allowed',
      permission_keys: ['widgets:create_item:report'],
      execution: { id: executed.body.execution.id, status: 'executed', triggered_by: 'auto', http_status_code: 200, result: { status_code: 200 } },
    });
    expect(typeof result.execution.result.duration_ms).toBe('number');
    // A summary only: no upstream body, no secret, no redacted field.
    expect(result.execution.result.body).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);

    // A denied approval ends with its record too; a covered call with its own outcome.
    const denied = await manual.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'final-deny' } });
    expect((await human('POST', `/v1/approvals/${denied.body.approval_id}/resolve`, { decision: 'deny', reason: 'not now' })).status).toBe(200);
    expect(await resultOf(await callIdOf(denied.body.approval_id))).toMatchObject({ id: denied.body.approval_id, status: 'denied' });
    const coveredCallId = await gw.pool.oneFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM calls WHERE status = 'called' ORDER BY created_at LIMIT 1`);
    expect(await resultOf(coveredCallId)).toMatchObject({ status: 'called', result: { status_code: 200 } });
  });

  it('ends a call deduplicated into another pending approval with that approval\'s outcome (workflow result and status)', async () => {
    const joiner = await makeAgent({ name: 'joiner' });
    const before = up.requests.length;
    const params = { service: 'widgets', action: 'create_item', params: { name: 'joined' } };
    const first = await joiner.call('POST', '/v1/actions/call', params);
    const joined = await joiner.call('POST', '/v1/actions/call', params);
    expect(joined.body).toMatchObject({ status: 'pending_approval', approval_id: first.body.approval_id });
    expect(joined.body.call_id).not.toBe(first.body.call_id);
    expect((await human('POST', `/v1/approvals/${first.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    const handle = gw.temporal.workflow.getHandle(callWorkflowId(joined.body.call_id));
    const result: any = await handle.result();
    expect(result).toMatchObject({ id: first.body.approval_id, status: 'allowed', execution: { status: 'executed', http_status_code: 200 } });
    const status = (await handle.describe()).searchAttributes.GatewayStatus;
    expect(status).toEqual(['executed']);
    // The shared approval ran once, for both calls.
    expect(up.requests.length).toBe(before + 1);
  });

  it('lets operators filter calls in Temporal by org, agent, service, action and status', async () => {
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const found = await until(
      async () => {
        const listed: Array<{ id: string; description: unknown }> = [];
        for await (const wf of gw.temporal.workflow.list({ query: `GatewayOrg = '${orgId}' AND GatewayAgent = '${agent.id}' AND GatewayService = 'widgets' AND GatewayAction = 'get_item' AND GatewayStatus = 'called'` })) {
          listed.push({ id: wf.workflowId, description: wf.memo?.description });
        }
        return listed;
      },
      (listed) => listed.length >= 2,
    );
    // The agent's two covered reads, and nothing else.
    expect(found.map((w) => w.description).sort()).toEqual(['Read item a1', 'Read item eager-1']);
    for (const w of found) expect(w.id).toMatch(/^call-[0-9a-f-]{36}$/);
  });

  it('replays every recorded call history deterministically with the current workflow code', async () => {
    const callIds = await gw.pool.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM calls ORDER BY created_at`);
    expect(callIds.length).toBeGreaterThan(10);
    const histories = (async function* () {
      for (const id of callIds) {
        const handle = gw.temporal.workflow.getHandle(callWorkflowId(id));
        yield { workflowId: handle.workflowId, history: await handle.fetchHistory() };
      }
    })();
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: inject('workflowBundlePath') } }, histories)) {
      expect(result.error, `${result.workflowId}: ${String(result.error)}`).toBeUndefined();
      replayed++;
    }
    expect(replayed).toBe(callIds.length);
  });
});

/** One call of each shape this suite leaves behind, by what its rows say, and its history. */
async function recordHistories(gw: TestGateway, version: string): Promise<void> {
  const callId = z.object({ id: z.string() });
  const pick = (where: ReturnType<typeof sql.fragment>) =>
    gw.pool.maybeOneFirst(sql.type(callId)`
      SELECT c.id FROM calls c LEFT JOIN approvals a ON a.call_id = c.id LEFT JOIN executions e ON e.approval_id = a.id
      WHERE ${where} ORDER BY c.created_at LIMIT 1`);
  const shapes: Record<string, ReturnType<typeof sql.fragment>> = {
    covered: sql.fragment`c.status = 'called' AND a.id IS NULL`,
    'allowed-auto': sql.fragment`e.status = 'executed' AND e.triggered_by = 'auto' AND a.decision <> 'allow_remember'`,
    'allowed-manual': sql.fragment`e.status = 'executed' AND e.triggered_by = 'agent'`,
    'allowed-remember': sql.fragment`e.status = 'executed' AND a.decision = 'allow_remember'`,
    'execution-expired': sql.fragment`e.status = 'expired'`,
    denied: sql.fragment`a.status = 'denied' AND a.decision = 'deny'`,
    pending: sql.fragment`a.status = 'pending'`,
    joined: sql.fragment`c.status = 'deduplicated'`,
  };
  const dir = path.resolve(import.meta.dirname, '..', 'fixtures', 'histories');
  for (const [shape, where] of Object.entries(shapes)) {
    const id = await pick(where);
    if (!id) throw new Error(`no call of shape ${shape} to record`);
    const history = await gw.temporal.workflow.getHandle(callWorkflowId(id)).fetchHistory();
    await writeFile(path.join(dir, `${version}-${shape}.json`), JSON.stringify(temporal.api.history.v1.History.fromObject(history as never).toJSON()));
  }
}

describe('an eagerly started call whose in-process answer is slow to come', () => {
  let gw: TestGateway;
  let up: Upstream;
  beforeAll(async () => {
    up = await startUpstream();
    // No patience at all: every call also asks its workflow at once, so the fallback path runs.
    gw = await startTestGateway({ env: { GATEWAY_EAGER_ANSWER_PATIENCE_MS: '0' } });
    const admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: SECRET })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('answers from whichever comes first — the activity in this process, the workflow\'s update, or the closed workflow\'s record — and sends once', async () => {
    const admin = gw.as(gw.adminToken);
    const agent = await admin('POST', '/v1/identities/agents', { name: 'impatient' });
    expect((await admin('POST', `/v1/identities/${agent.body.identity.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    const call = gw.as(agent.body.key.token);
    // Slow ones (the workflow is still open when the update arrives) and fast ones (it may have closed).
    up.handle((req, res) => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, url: req.url }));
      };
      if (req.url?.includes('slow')) setTimeout(answer, 800);
      else answer();
    });
    const ids = [...Array.from({ length: 4 }, (_, i) => `slow-${i}`), ...Array.from({ length: 12 }, (_, i) => `fast-${i}`)];
    const answers = await Promise.all(ids.map((id) => call('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id } })));
    for (const [i, a] of answers.entries()) {
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body, ids[i]).toMatchObject({ status: 'called', result: { status_code: 200, body: { url: `/items/${ids[i]}` } } });
    }
    for (const id of ids) expect(up.requests.filter((r) => r.url === `/items/${id}`), id).toHaveLength(1);
  });

  it('answers an allow from the update once the send is recorded when no in-process answer is awaited, and sends once', async () => {
    const admin = gw.as(gw.adminToken);
    const agent = await admin('POST', '/v1/identities/agents', { name: 'impatient-approved' });
    const call = gw.as(agent.body.key.token);
    up.handle((req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, url: req.url }));
    });
    const raised = await call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'impatient-allow' } });
    expect(raised.status).toBe(202);
    const allowed = await admin('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_once' });
    expect(allowed.status).toBe(200);
    // The update's result comes after the send: the record says so already.
    expect(allowed.body).toMatchObject({ status: 'allowed', execution: { status: 'pending' } });
    const done = await until(() => admin('GET', `/v1/approvals/${raised.body.approval_id}`), (r) => r.body.execution?.status === 'executed');
    expect(done.body.execution.http_status_code).toBe(201);
    expect(up.requests.filter((r) => r.body.includes('impatient-allow'))).toHaveLength(1);
  });
});
