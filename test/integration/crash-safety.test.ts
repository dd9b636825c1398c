// Crash safety (issue 11): the process running API and worker is SIGKILLed at the moments that
// matter — approvals pending, right after an allow, while the upstream is answering — and every
// allowed call still reaches one final state: executed exactly once where that is safe, `failed`
// with `outcome_unknown` where a non-idempotent request may have left, never sent twice.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client } from '@temporalio/client';
import { freePort } from '../../server/embedded/processes.ts';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { apiClient, gatewayEnv, killHard, setUpTenant, startServe, stopGently, type Tenant } from '../support/gateway-process.ts';
import type { CliProcess } from '../support/processes.ts';
import { withPool } from '../support/seed.ts';
import { holdRequests, startUpstream, upstreamServiceDoc, type RecordedRequest, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { sql } from 'slonik';
import { z } from 'zod';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

describe('crash safety (SIGKILL of the API + worker process)', () => {
  let up: Upstream;
  let proc: CliProcess | undefined;
  let env: Record<string, string>;
  let base: string;
  let databaseUrl: string;
  let t: Tenant;
  let temporal: Client;
  const api = (token: string, method: string, path: string, body?: unknown) => apiClient(base)(token, method, path, body);
  const start = async () => {
    proc = await startServe(env);
  };
  const restart = async () => {
    await killHard(proc);
    await start();
  };
  const call = (token: string, params: Record<string, unknown>, action = 'create_item', service = 'widgets') =>
    api(token, 'POST', '/v1/actions/call', { service, action, params }).then((r) => r.body);
  const finalExecution = (approvalId: string) =>
    until(
      () => api(t.ownerToken, 'GET', `/v1/approvals/${approvalId}`),
      (r) => r.status === 200 && ['executed', 'failed', 'cancelled', 'expired'].includes(r.body.execution?.status),
      90_000,
    ).then((r) => r.body.execution);
  /** Holds matching upstream requests until released (the "slow upstream"). */
  const holdUpstream = (match: (r: RecordedRequest) => boolean) => holdRequests(up, match);
  const hits = (pred: (r: RecordedRequest) => boolean) => up.requests.filter(pred);
  const named = (name: string) => (r: RecordedRequest) => r.method === 'POST' && r.body.includes(`"${name}"`);

  beforeAll(async () => {
    up = await startUpstream();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    databaseUrl = await createTestDatabase();
    env = gatewayEnv(port, { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: inject('temporalAddress') });
    await start();
    t = await setUpTenant(base, env, databaseUrl, up.url);
    // A second service whose upstream de-duplicates by an idempotency key header.
    const keyed = { ...upstreamServiceDoc('keyed', up.url), 'x-gateway-idempotency_key_header': 'Idempotency-Key' };
    expect((await api(t.adminToken, 'POST', '/v1/templates', { scope: 'org', document: keyed })).status).toBe(201);
    temporal = new Client({ connection: await connectTemporal({ address: inject('temporalAddress') }) });
  });
  afterAll(async () => {
    await stopGently(proc);
    await up?.close();
    await temporal?.connection.close();
  });

  it('executes each approved call exactly once after a restart, and fires timers set before the crash', async () => {
    const a1 = await call(t.auto, { name: 'after-crash-auto' });
    const a2 = await call(t.manual, { name: 'after-crash-manual' });
    expect(a1.status).toBe('pending_approval');
    expect(a2.status).toBe('pending_approval');
    // A short approval TTL for the next call: its expiry timer is running when the process dies.
    expect((await api(t.adminToken, 'PATCH', '/v1/org/settings', { approval_ttl_seconds: 6 })).status).toBe(200);
    const a3 = await call(t.manual, { name: 'will-expire' });
    expect(a3.status).toBe('pending_approval');
    expect((await api(t.adminToken, 'PATCH', '/v1/org/settings', { approval_ttl_seconds: 900 })).status).toBe(200);
    expect(up.requests).toHaveLength(0);

    await restart();

    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${a1.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${a2.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    const resumed = await api(t.manual, 'POST', '/v1/actions/call', { approval_id: a2.approval_id });
    expect(resumed.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(await finalExecution(a1.approval_id)).toMatchObject({ status: 'executed' });

    const expired = await until(() => api(t.ownerToken, 'GET', `/v1/approvals/${a3.approval_id}`), (r) => r.body.status === 'expired', 30_000);
    expect(expired.body.status).toBe('expired');

    // Exactly once each, even after waiting for stragglers.
    await new Promise((r) => setTimeout(r, 1_000));
    const names = up.requests.map((r) => JSON.parse(r.body).name).sort();
    expect(names).toEqual(['after-crash-auto', 'after-crash-manual']);
  });

  it('kill right after an allow: the call still reaches one final state, and runs at most once', async () => {
    const auto = await call(t.auto, { name: 'kill-after-allow-auto' });
    const manual = await call(t.manual, { name: 'kill-after-allow-manual' });
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${auto.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${manual.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    await restart();

    // The auto replay either ran before the kill, or runs after the restart; if the kill caught
    // it mid-request, it ends `failed` with outcome_unknown instead of running twice.
    const autoExec = await finalExecution(auto.approval_id);
    const autoHits = hits(named('kill-after-allow-auto')).length;
    expect(autoHits).toBeLessThanOrEqual(1);
    if (autoExec.status === 'executed') expect(autoHits).toBe(1);
    else expect(autoExec).toMatchObject({ status: 'failed', error: { code: 'outcome_unknown' } });

    // Nothing ran for the manual one before the kill: the resume after the restart runs it once.
    expect(hits(named('kill-after-allow-manual'))).toHaveLength(0);
    const resumed = await api(t.manual, 'POST', '/v1/actions/call', { approval_id: manual.approval_id });
    expect(resumed.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(hits(named('kill-after-allow-manual'))).toHaveLength(1);
  });

  it('kill while the upstream is slow: a non-idempotent request is never sent twice and ends failed with outcome_unknown', async () => {
    const release = holdUpstream(named('slow-post'));
    const auto = await call(t.auto, { name: 'slow-post' });
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${auto.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    await until(async () => hits(named('slow-post')).length, (n) => n === 1, 30_000);
    await killHard(proc);
    release();
    await start();

    const exec = await finalExecution(auto.approval_id);
    expect(exec).toMatchObject({ status: 'failed', error: { code: 'outcome_unknown' } });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(hits(named('slow-post'))).toHaveLength(1);
    // The requester is told (its resume answers the same), and so is the approver (the audit trail).
    const resumed = await api(t.auto, 'POST', '/v1/actions/call', { approval_id: auto.approval_id });
    expect(resumed.status).toBe(502);
    expect(resumed.body.error.code).toBe('outcome_unknown');
    const audit = await api(t.adminToken, 'GET', '/v1/audit?event=execution.failed&limit=50');
    expect(audit.body.entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ approval_id: auto.approval_id, decision: 'outcome_unknown' })]),
    );
    // The allow and its send ran in one activity, retried after the kill: the
    // decision, the start and the end are each written once.
    const trail = await api(t.adminToken, 'GET', '/v1/audit?limit=200');
    const events = trail.body.entries.filter((e: { approval_id: string }) => e.approval_id === auto.approval_id).map((e: { event: string }) => e.event);
    for (const event of ['approval.resolved', 'execution.started', 'execution.failed']) expect(events.filter((e: string) => e === event)).toHaveLength(1);
  });

  it('kill while the upstream is slow: an idempotent request (GET, or a declared idempotency key) is sent again and executes', async () => {
    const release = holdUpstream((r) => r.url === '/items/slow-get' || named('slow-keyed')(r));
    const get = await call(t.auto, { id: 'slow-get' }, 'get_item');
    const keyed = await call(t.auto, { name: 'slow-keyed' }, 'create_item', 'keyed');
    expect(get.status).toBe('pending_approval');
    expect(keyed.status).toBe('pending_approval');
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${get.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${keyed.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    await until(async () => hits((r) => r.url === '/items/slow-get').length + hits(named('slow-keyed')).length, (n) => n === 2, 30_000);
    await killHard(proc);
    release();
    await start();

    const getExec = await finalExecution(get.approval_id);
    const keyedExec = await finalExecution(keyed.approval_id);
    expect(getExec).toMatchObject({ status: 'executed', http_status_code: 200 });
    expect(keyedExec).toMatchObject({ status: 'executed', http_status_code: 201 });
    expect(hits((r) => r.url === '/items/slow-get')).toHaveLength(2);
    // Both sends of the keyed request carried the execution id as its idempotency key.
    const keyedHits = hits(named('slow-keyed'));
    expect(keyedHits).toHaveLength(2);
    expect(keyedHits.map((r) => r.headers['idempotency-key'])).toEqual([keyedExec.id, keyedExec.id]);
  });

  it('a resume or decision on an approval whose workflow is gone gets workflow_gone, and GET agrees', async () => {
    const allowed = await call(t.manual, { name: 'gone-allowed' });
    const pending = await call(t.manual, { name: 'gone-pending' });
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${allowed.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    const callIdOf = (approvalId: string) =>
      withPool(databaseUrl, (pool) => pool.oneFirst(sql.type(z.object({ call_id: z.string() }))`SELECT call_id FROM approvals WHERE id = ${approvalId}`));
    for (const id of [allowed.approval_id, pending.approval_id]) {
      await temporal.workflow.getHandle(callWorkflowId(await callIdOf(id))).terminate('lost for the test');
    }

    const resumed = await api(t.manual, 'POST', '/v1/actions/call', { approval_id: allowed.approval_id });
    expect(resumed.status).toBe(410);
    expect(resumed.body.error.code).toBe('workflow_gone');
    const allowedView = (await api(t.ownerToken, 'GET', `/v1/approvals/${allowed.approval_id}`)).body;
    expect(allowedView.execution).toMatchObject({ status: 'failed', error: { code: 'workflow_gone' } });

    const resolved = await api(t.ownerToken, 'POST', `/v1/approvals/${pending.approval_id}/resolve`, { decision: 'allow' });
    expect(resolved.status).toBe(410);
    expect(resolved.body.error.code).toBe('workflow_gone');
    expect((await api(t.ownerToken, 'GET', `/v1/approvals/${pending.approval_id}`)).body.status).toBe('cancelled');
    // Asked again, the answer is the settled state, not a different error.
    const again = await api(t.manual, 'POST', '/v1/actions/call', { approval_id: allowed.approval_id });
    expect(again.body.error.code).toBe('workflow_gone');
    expect(hits(named('gone-allowed'))).toHaveLength(0);

    // Each closure is a final state like any other: one audit row and one event for the people's
    // stream, written once although the closed approval was asked about again.
    const finalsOf = (approvalId: string) =>
      withPool(databaseUrl, async (pool) => ({
        audit: await pool.any(sql.type(z.object({ event: z.string(), decision: z.string().nullable(), details: z.unknown() }))`
          SELECT event, decision, details FROM audit_log WHERE approval_id = ${approvalId} AND event IN ('execution.failed', 'approval.cancelled')`),
        events: await pool.anyFirst(sql.type(z.object({ e: z.string() }))`
          SELECT type || ':' || coalesce(data->>'status', '') AS e FROM user_events WHERE approval_id = ${approvalId} ORDER BY id`),
      }));
    const allowedFinals = await finalsOf(allowed.approval_id);
    expect(allowedFinals.audit).toEqual([{ event: 'execution.failed', decision: 'failed', details: { error: { code: 'workflow_gone', message: expect.any(String) } } }]);
    expect(allowedFinals.events.filter((e) => e.startsWith('approval.execution_failed'))).toEqual(['approval.execution_failed:allowed']);
    const pendingFinals = await finalsOf(pending.approval_id);
    expect(pendingFinals.audit).toEqual([{ event: 'approval.cancelled', decision: 'cancelled', details: { error: { code: 'workflow_gone', message: expect.any(String) } } }]);
    expect(pendingFinals.events.filter((e) => e.startsWith('approval.resolved'))).toEqual(['approval.resolved:cancelled']);
  });
});
