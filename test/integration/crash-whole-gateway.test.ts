// At most once on every path (issue 24), shown with real SIGKILLs:
// - the whole embedded gateway (the process, its PostgreSQL and its Temporal) killed while covered
//   POSTs wait on a slow upstream, and while many approvals are being allowed at once;
// - the worker alone (a split deployment: `serve --role api` and `serve --role worker`) killed
//   while covered POSTs wait on a slow upstream.
// Every call ends in one final state; no request reaches the upstream twice; an allowed call is
// never left to expire.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { resolveTemporalCli } from '../../server/embedded/temporal-cli.ts';
import { createTestDatabase } from '../support/gateway.ts';
import {
  apiClient,
  embeddedDatabaseUrl,
  gatewayEnv,
  killHard,
  killWholeGateway,
  setUpTenant,
  startServe,
  startServeHoldingAfterAnswer,
  stopGently,
  type Api,
  type ApiResponse,
  type Tenant,
} from '../support/gateway-process.ts';
import type { CliProcess } from '../support/processes.ts';
import { startUpstream, type RecordedRequest, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

const FINAL = ['executed', 'failed', 'cancelled', 'expired'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An upstream that holds every request matching `slow` for `ms` (the "slow upstream"), answering 201/200. */
function slowUpstream(up: Upstream, slow: (r: RecordedRequest) => boolean, ms: number) {
  up.handle((req, res: http.ServerResponse) => {
    const answer = () => {
      if (res.destroyed) return;
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, url: req.url }));
    };
    if (slow(req)) setTimeout(answer, ms);
    else answer();
  });
}

const named = (name: string) => (r: RecordedRequest) => r.method === 'POST' && r.body.includes(`"${name}"`);

/** Retries through an outage (no answer, 500, 503, 504) until `untilMs`; any other answer is final. */
async function persist(fn: () => Promise<ApiResponse>, untilMs: number): Promise<ApiResponse | null> {
  while (Date.now() < untilMs) {
    try {
      const r = await fn();
      if (![500, 503, 504].includes(r.status)) return r;
    } catch {
      /* connection refused or reset while the gateway is down */
    }
    await sleep(250);
  }
  return null;
}

/** A keyed covered call, as a careful client makes it: the same Idempotency-Key on every retry. */
function keyedCall(base: string, token: string, key: string, body: unknown, timeoutMs = 120_000): Promise<ApiResponse> {
  return fetch(`${base}/v1/actions/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json().catch(() => null) }));
}

async function allowAll(api: Api, t: Tenant, agentToken: string): Promise<void> {
  const me = await api(agentToken, 'GET', '/v1/identities/me');
  const r = await api(t.ownerToken, 'POST', `/v1/identities/${me.body.identity?.id ?? me.body.id}/rules`, { effect: 'allow', pattern: 'widgets:*:*' });
  if (r.status !== 201) throw new Error(`rule: ${r.status} ${JSON.stringify(r.body)}`);
}

describe('SIGKILL of the whole embedded gateway (process, PostgreSQL and Temporal)', () => {
  let up: Upstream;
  let dir: string;
  let env: Record<string, string>;
  let proc: CliProcess | undefined;
  let api: Api;
  let t: Tenant;

  beforeAll(async () => {
    up = await startUpstream();
    dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-whole-kill-'));
    await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own OS user
    const port = await freePort();
    env = gatewayEnv(port, {
      DATA_DIR: dir,
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_CLI_PATH: await resolveTemporalCli({}),
    });
    proc = await startServe(env);
    api = apiClient(env.PUBLIC_URL!);
    t = await setUpTenant(env.PUBLIC_URL!, env, await embeddedDatabaseUrl(dir), up.url);
    await allowAll(api, t, t.manual);
    // Room for the burst of approvals below (the per-agent cap would supersede the oldest).
    expect((await api(t.adminToken, 'PATCH', '/v1/org/settings', { max_pending_per_agent: 100 })).status).toBe(200);
  }, 300_000);
  afterAll(async () => {
    await stopGently(proc);
    await up?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('covered POSTs in flight against a slow upstream: no second send, every call reaches a final state', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `whole-covered-${i}`);
    slowUpstream(up, (r) => names.some((n) => named(n)(r)), 4_000);
    const body = (name: string) => ({ service: 'widgets', action: 'create_item', params: { name } });
    const first = names.map((name) => keyedCall(env.PUBLIC_URL!, t.manual, `key-${name}`, body(name)).catch(() => null));
    await until(async () => names.filter((n) => up.requests.some(named(n))).length, (n) => n === names.length, 60_000);
    await sleep(500);
    await killWholeGateway(proc!, dir);
    await Promise.all(first);
    proc = await startServe(env);

    // The caller retries with its key and learns the outcome: the call ran (its answer was
    // recorded) or may have run (outcome_unknown), never "sent again".
    const answers = await Promise.all(names.map((name) => persist(() => keyedCall(env.PUBLIC_URL!, t.manual, `key-${name}`, body(name)), Date.now() + 120_000)));
    for (const [i, a] of answers.entries()) {
      expect(a, names[i]).not.toBeNull();
      if (a!.status === 200) expect(a!.body).toMatchObject({ status: 'called' });
      else expect(a!.body.error, names[i]).toMatchObject({ code: 'outcome_unknown', details: { call_id: expect.any(String) } });
      const callId = a!.body.call_id ?? a!.body.error.details.call_id;
      const view = await api(t.manual, 'GET', `/v1/calls/${callId}`);
      expect(view.body.status, names[i]).toBe(a!.status === 200 ? 'called' : 'failed');
    }
    await sleep(4_500); // anything still held at the upstream has answered
    for (const n of names) expect(up.requests.filter(named(n)), n).toHaveLength(1);
  }, 300_000);

  /** A call's row and its final audit rows, read from the gateway's database. */
  async function callRecord(description: string) {
    const db = new pg.Client({ connectionString: await embeddedDatabaseUrl(dir) });
    await db.connect();
    try {
      const call = (await db.query('SELECT id, status, error FROM calls WHERE description = $1', [description])).rows;
      const audit = call.length
        ? (await db.query(`SELECT event FROM audit_log WHERE call_id = $1 AND event IN ('call.called', 'call.failed')`, [call[0].id])).rows.map((r) => r.event as string)
        : [];
      return { calls: call as Array<{ id: string; status: string; error: { code?: string } | null }>, audit };
    } finally {
      await db.end();
    }
  }

  it('eagerly started covered POSTs (no key) in flight against a slow upstream: one send each, one final state and one final audit row each', async () => {
    const names = Array.from({ length: 4 }, (_, i) => `eager-covered-${i}`);
    slowUpstream(up, (r) => names.some((n) => named(n)(r)), 4_000);
    const first = names.map((name) => api(t.manual, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } }).catch(() => null));
    await until(async () => names.filter((n) => up.requests.some(named(n))).length, (n) => n === names.length, 60_000);
    await sleep(500);
    await killWholeGateway(proc!, dir);
    await Promise.all(first);
    proc = await startServe(env);
    for (const name of names) {
      const rec = await until(() => callRecord(`Create item "${name}"`), (r) => r.calls.length === 1 && ['called', 'failed'].includes(r.calls[0]!.status), 120_000);
      if (rec.calls[0]!.status === 'failed') expect(rec.calls[0]!.error, name).toMatchObject({ code: 'outcome_unknown' });
      expect(rec.audit, name).toHaveLength(1);
    }
    await sleep(4_500);
    for (const n of names) expect(up.requests.filter(named(n)), n).toHaveLength(1);
  }, 300_000);

  it('killed between the in-process answer and the first task\'s completion: the caller\'s answer stands — one send, one audit row, the same outcome on GET and in the workflow', async () => {
    slowUpstream(up, () => false, 0);
    // The harness holds the task 60 s after the answer left: the kill lands inside that window.
    await stopGently(proc);
    proc = await startServeHoldingAfterAnswer(env, 60_000);
    const name = 'eager-answered';
    const answered = await api(t.manual, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body).toMatchObject({ status: 'called', result: { status_code: 201 } });
    expect(proc.output()).toContain('fault: holding checkThenExecute');
    await killWholeGateway(proc!, dir);
    proc = await startServe(env);
    // The task runs again on the restarted worker: it finds the committed final state and sends nothing.
    const view = await until(() => api(t.manual, 'GET', `/v1/calls/${answered.body.call_id}`).catch(() => null), (r) => r?.status === 200, 60_000);
    expect(view!.body).toMatchObject({ status: 'called', http_status_code: 201, result: { status_code: 201 } });
    const rec = await callRecord(`Create item "${name}"`);
    expect(rec.audit).toEqual(['call.called']);
    expect(up.requests.filter(named(name))).toHaveLength(1);
    const connection = await connectTemporal({ address: `127.0.0.1:${env.TEMPORAL_PORT}` });
    try {
      const result = await new Client({ connection }).workflow.getHandle(callWorkflowId(answered.body.call_id)).result();
      expect(result).toMatchObject({ status: 'called', result: { status_code: 201 } });
    } finally {
      await connection.close();
    }
  }, 300_000);

  it('many approvals allowed at once: every allowed call executes (or ends outcome_unknown), none is left to expire', async () => {
    slowUpstream(up, () => false, 0);
    const names = Array.from({ length: 24 }, (_, i) => `whole-resolve-${i}`);
    const approvals: string[] = [];
    for (const name of names) {
      const r = await api(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      approvals.push(r.body.approval_id);
    }
    // All resolves at once; the kill lands while they are being recorded.
    const resolving = approvals.map((id) => api(t.ownerToken, 'POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' }).catch(() => null));
    await until(async () => up.requests.filter((r) => names.some((n) => named(n)(r))).length, (n) => n >= 1, 60_000);
    await killWholeGateway(proc!, dir);
    await Promise.all(resolving);
    proc = await startServe(env);

    // A person who saw no answer allows again (a 409 "already allowed" is fine).
    const deadline = Date.now() + 120_000;
    await Promise.all(approvals.map((id) => persist(() => api(t.ownerToken, 'POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' }), deadline)));
    for (const [i, id] of approvals.entries()) {
      const view = await until(
        () => api(t.ownerToken, 'GET', `/v1/approvals/${id}`).catch(() => null),
        (r) => r?.status === 200 && FINAL.includes(r.body.execution?.status),
        90_000,
      );
      const exec = view!.body.execution;
      expect(view!.body.status, names[i]).toBe('allowed');
      if (exec.status === 'executed') expect(up.requests.filter(named(names[i]!)), names[i]).toHaveLength(1);
      else expect(exec, names[i]).toMatchObject({ status: 'failed', error: { code: 'outcome_unknown' } });
    }
    for (const n of names) expect(up.requests.filter(named(n)).length, n).toBeLessThanOrEqual(1);
  }, 400_000);
});

describe('SIGKILL of the worker alone (split deployment: API and worker processes)', () => {
  let up: Upstream;
  let apiProc: CliProcess | undefined;
  let workerProc: CliProcess | undefined;
  let env: Record<string, string>;
  let workerEnv: Record<string, string>;
  let workerUrl: string;
  let api: Api;
  let t: Tenant;

  beforeAll(async () => {
    up = await startUpstream();
    const databaseUrl = await createTestDatabase();
    env = gatewayEnv(await freePort(), { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: inject('temporalAddress') });
    workerEnv = { ...env, PORT: String(await freePort()) };
    workerUrl = `http://127.0.0.1:${workerEnv.PORT}`;
    apiProc = await startServe(env, 'api');
    workerProc = await startServe(workerEnv, 'worker', workerUrl);
    api = apiClient(env.PUBLIC_URL!);
    t = await setUpTenant(env.PUBLIC_URL!, env, databaseUrl, up.url);
    await allowAll(api, t, t.manual);
  }, 300_000);
  afterAll(async () => {
    await stopGently(apiProc);
    await stopGently(workerProc);
    await up?.close();
  });

  it('covered POSTs in flight against a slow upstream: the waiting callers get a final answer, nothing is sent twice', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `worker-covered-${i}`);
    slowUpstream(up, (r) => names.some((n) => named(n)(r)), 4_000);
    const body = (name: string) => ({ service: 'widgets', action: 'create_item', params: { name } });
    // The API process survives: the callers' own requests stay open and get their answers.
    const calls = names.map((name) => keyedCall(env.PUBLIC_URL!, t.manual, `key-${name}`, body(name), 180_000));
    await until(async () => names.filter((n) => up.requests.some(named(n))).length, (n) => n === names.length, 60_000);
    await killHard(workerProc);
    workerProc = await startServe(workerEnv, 'worker', workerUrl);
    const answers = await Promise.all(calls);
    for (const [i, a] of answers.entries()) {
      if (a.status === 200) expect(a.body, names[i]).toMatchObject({ status: 'called' });
      else expect(a.body.error, names[i]).toMatchObject({ code: 'outcome_unknown' });
      const callId = a.body.call_id ?? a.body.error.details.call_id;
      expect((await api(t.manual, 'GET', `/v1/calls/${callId}`)).body.status, names[i]).toBe(a.status === 200 ? 'called' : 'failed');
    }
    await sleep(4_500);
    for (const n of names) expect(up.requests.filter(named(n)), n).toHaveLength(1);
  }, 300_000);
});
