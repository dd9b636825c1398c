// Shutdown while a workflow task is held by a local activity that keeps failing (issue 14 made an
// approved call's decision, re-check and record local activities): one SIGTERM must still stop
// `gateway serve` within seconds. The worker gives up on the held task after its force time (the
// task runs again on a live worker), and the process exits even if the SDK leaves a thread behind.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'slonik';
import { freePort } from '../../server/embedded/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { apiClient, gatewayEnv, killHard, setUpTenant, startServe, type Tenant } from '../support/gateway-process.ts';
import type { CliProcess } from '../support/processes.ts';
import { withPool } from '../support/seed.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

describe('gateway serve on SIGTERM', () => {
  let up: Upstream;
  let proc: CliProcess | undefined;
  let base: string;
  let databaseUrl: string;
  let t: Tenant;

  beforeAll(async () => {
    up = await startUpstream();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    databaseUrl = await createTestDatabase();
    const env = gatewayEnv(port, { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: inject('temporalAddress') });
    proc = await startServe(env);
    t = await setUpTenant(base, env, databaseUrl, up.url);
  });
  afterAll(async () => {
    await killHard(proc);
    await up?.close();
  });

  it('stops within seconds even while a local activity (the re-check before a send) keeps failing', async () => {
    const api = apiClient(base);
    // An agent without auto-call: its allow is only recorded, and its resume runs the re-check as
    // a local activity (an auto-call allow is re-checked inside its regular activity, issue 28).
    const raised = await api(t.manual, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'held' } });
    expect(raised.status).toBe(202);
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    // A fault in PostgreSQL itself: every update of an execution fails, so the re-check's local
    // activity (which marks the execution `executing`) retries, for minutes with backoff, inside
    // the workflow task that holds it.
    await withPool(databaseUrl, async (p) => {
      await p.query(sql.unsafe`CREATE FUNCTION refuse_execution_updates() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`);
      await p.query(sql.unsafe`CREATE TRIGGER refuse_execution_updates BEFORE UPDATE ON executions FOR EACH ROW EXECUTE FUNCTION refuse_execution_updates()`);
    });
    const resolving = api(t.manual, 'POST', '/v1/actions/call', { approval_id: raised.body.approval_id }).catch((err: unknown) => err);
    // The re-check is being retried: the SDK logs each failed attempt of the local activity.
    const retrying = /"isLocal":true[^\n]*"activityType":"prepareExecution"|"activityType":"prepareExecution"[^\n]*"isLocal":true/;
    const deadline = Date.now() + 30_000;
    while (!retrying.test(proc!.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(proc!.output()).toMatch(retrying);

    const signalled = performance.now();
    proc!.child.kill('SIGTERM');
    const code = await proc!.exited;
    const seconds = (performance.now() - signalled) / 1000;
    // The worker's force time is 15 s; the rest of the shutdown takes a few more.
    expect(seconds).toBeLessThan(30);
    expect(code).toBe(0);
    expect(proc!.output()).toContain('the Temporal worker was stopped before its tasks finished');
    await resolving;
  }, 90_000);
});
