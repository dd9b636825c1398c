// The REST pieces the dashboard needs: GET /v1/events (people's SSE stream), GET
// /v1/approvals/{id}/blast-radius and PATCH /v1/identities/{id}, against a real gateway,
// PostgreSQL, Temporal and a loopback upstream; a second API replica on the same database.
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneUserEvents } from '../../server/events/store.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, withPool } from '../support/seed.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

describe('the people\'s event stream and blast radius', () => {
  let gw: TestGateway;
  let replica: TestGateway;
  let up: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let alice: ReturnType<TestGateway['as']>;
  let aliceToken: string;
  let bobToken: string;
  let aliceAgent: { id: string; key: string };
  let bobAgent: { id: string; key: string };
  const streams: SseStream[] = [];

  const stream = async (g: TestGateway, token: string, headers: Record<string, string> = {}, q = '') => {
    const s = await openSse(`${g.url}/v1/events${q}`, { authorization: `Bearer ${token}`, ...headers });
    streams.push(s);
    return s;
  };
  const create = (agentKey: string, name: string) =>
    gw.as(agentKey)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    // A second API process on the same database: its streams see events the first one's worker records.
    replica = await startTestGateway({ role: 'api', databaseUrl: gw.databaseUrl, taskQueue: gw.taskQueue, env: { GATEWAY_MASTER_KEY: gw.config.masterKey!.toString('base64') } });
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const a = await seedUser(gw.databaseUrl, { orgId, email: 'alice@example.test' });
    const b = await seedUser(gw.databaseUrl, { orgId, email: 'bob@example.test' });
    aliceToken = await gw.login(a.email, a.password);
    bobToken = await gw.login(b.email, b.password);
    alice = gw.as(aliceToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_events_test' })).status).toBe(201);
    const mk = async (token: string, name: string) => {
      const res = await gw.as(token)('POST', '/v1/identities/agents', { name });
      expect(res.status).toBe(201);
      return { id: res.body.identity.id as string, key: res.body.key.token as string };
    };
    aliceAgent = await mk(aliceToken, 'alice-bot');
    bobAgent = await mk(bobToken, 'bob-bot');
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await replica?.stop();
    await gw?.stop();
    await up?.close();
  });

  it('is for signed-in people only, and checks its input strictly', async () => {
    expect((await gw.request('GET', '/v1/events')).status).toBe(401);
    const asAgent = await gw.as(aliceAgent.key)('GET', '/v1/events');
    expect(asAgent.status).toBe(403);
    expect(asAgent.body.error.code).toBe('forbidden');
    const bad = await gw.request('GET', '/v1/events', { headers: { authorization: `Bearer ${aliceToken}`, 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect((await gw.as(aliceToken)('GET', '/v1/events?last_event_id=1&x=2')).status).toBe(400);
  });

  it('scopes events: a member sees their own chain, an admin the org, on any replica', async () => {
    const aliceOnReplica = await stream(replica, aliceToken);
    const bobStream = await stream(gw, bobToken);
    const adminStream = await stream(replica, gw.adminToken);
    // The admin of another organisation sees none of this one.
    const stranger = await seedUser(gw.databaseUrl, { email: 'other-admin@example.test', role: 'admin' });
    const strangerStream = await stream(gw, await gw.login(stranger.email, stranger.password));
    for (const s of [aliceOnReplica, bobStream, adminStream, strangerStream]) {
      expect(s.status).toBe(200);
      await s.waitFor((e) => e.event === 'ready');
    }
    const mine = await create(aliceAgent.key, 'scoped-a');
    expect(mine.status).toBe(202);
    const theirs = await create(bobAgent.key, 'scoped-b');
    expect(theirs.status).toBe(202);
    const raised = await aliceOnReplica.waitFor((e) => e.event === 'approval.raised' && e.data.approval_id === mine.body.approval_id);
    expect(raised.id).toMatch(/^\d+$/);
    expect(raised.data).toMatchObject({ status: 'pending', risk: 'med', action_description: 'Create item "scoped-a"', requester_id: aliceAgent.id });
    await bobStream.waitFor((e) => e.data.approval_id === theirs.body.approval_id);
    await adminStream.waitFor((e) => e.data.approval_id === mine.body.approval_id);
    await adminStream.waitFor((e) => e.data.approval_id === theirs.body.approval_id);
    // Bob's event reached the admin, so it was delivered; Alice's stream never carried it.
    expect(aliceOnReplica.events.some((e) => e.data.approval_id === theirs.body.approval_id)).toBe(false);
    expect(bobStream.events.some((e) => e.data.approval_id === mine.body.approval_id)).toBe(false);
    expect(strangerStream.events.filter((e) => e.event !== 'ready')).toEqual([]);

    // Resolution and execution follow on the same stream.
    expect((await alice('POST', `/v1/approvals/${mine.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    await aliceOnReplica.waitFor((e) => e.event === 'approval.resolved' && e.data.approval_id === mine.body.approval_id && e.data.status === 'allowed');
    const executed = await aliceOnReplica.waitFor((e) => e.event === 'approval.executed' && e.data.approval_id === mine.body.approval_id);
    expect(executed.data.execution).toMatchObject({ status: 'executed', http_status_code: 200 });
    expect(JSON.stringify(executed.data)).not.toContain('body_keys'); // no result bodies on the stream
  });

  it('resumes from Last-Event-ID with what was missed, and signals a gap once it is pruned', async () => {
    const first = await stream(gw, aliceToken);
    const ready = await first.waitFor((e) => e.event === 'ready');
    first.close();
    const missed = await create(aliceAgent.key, 'while-away');
    expect(missed.status).toBe(202);
    const denyRes = await alice('POST', `/v1/approvals/${missed.body.approval_id}/resolve`, { decision: 'deny', reason: 'not now' });
    expect(denyRes.status).toBe(200);
    await until(
      () => withPool(gw.databaseUrl, (p) => p.oneFirst(sql.unsafe`SELECT count(*)::int FROM user_events WHERE approval_id = ${missed.body.approval_id}`)),
      (n) => n === 2,
    );
    const resumed = await stream(replica, aliceToken, { 'last-event-id': ready.id! });
    const r1 = await resumed.waitFor((e) => e.event === 'approval.raised' && e.data.approval_id === missed.body.approval_id);
    const r2 = await resumed.waitFor((e) => e.event === 'approval.resolved' && e.data.approval_id === missed.body.approval_id);
    expect(r2.data).toMatchObject({ status: 'denied', reason: 'not now' });
    expect(BigInt(r2.id!)).toBeGreaterThan(BigInt(r1.id!));
    await resumed.waitFor((e) => e.event === 'ready');
    expect(resumed.events.filter((e) => e.event === 'gap')).toEqual([]);

    // The same resume point after everything up to now was pruned: a gap, then live again.
    await withPool(gw.databaseUrl, (p) => pruneUserEvents(p, new Date(Date.now() + 1000)));
    const late = await stream(gw, aliceToken, {}, `?last_event_id=${ready.id}`);
    const gap = await late.waitFor((e) => e.event === 'gap');
    expect(gap.data.reason).toMatch(/refetch/);
    const after = await create(aliceAgent.key, 'after-gap');
    await late.waitFor((e) => e.event === 'approval.raised' && e.data.approval_id === after.body.approval_id);
  });

  it('weighs a tier: the other pending approvals it would cover and the past calls it would have covered', async () => {
    const agentRes = await alice('POST', '/v1/identities/agents', { name: 'radius-bot' });
    const bot = gw.as(agentRes.body.key.token);
    const botId = agentRes.body.identity.id as string;
    // A past call of the same kind, covered then by a rule since revoked: in the audit log.
    const rule = await alice('POST', `/v1/identities/${botId}/rules`, { effect: 'allow', pattern: 'widgets:create_item:old' });
    expect((await bot('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'old' } })).status).toBe(200);
    expect((await alice('POST', `/v1/identities/${botId}/rules/${rule.body.id}/revoke`)).status).toBe(204);
    const one = await bot('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'first' } });
    const two = await bot('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'second' } });
    expect([one.status, two.status]).toEqual([202, 202]);
    const read = await bot('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'x' } });
    expect(read.status).toBe(202);
    expect(one.body.suggested_tiers.map((t: any) => t.keys)).toEqual([['widgets:create_item:first'], ['widgets:create_item:*'], ['widgets:*:*']]);

    const narrow = await alice('GET', `/v1/approvals/${one.body.approval_id}/blast-radius?tier=0`);
    expect(narrow.status).toBe(200);
    expect(narrow.body).toMatchObject({ approval_id: one.body.approval_id, tier: { index: 0, keys: ['widgets:create_item:first'] }, pending_covered: [], audit: { window_days: 30, calls_covered: 0 } });
    expect(narrow.body.rule_targets).toEqual([{ id: botId, kind: 'agent', name: 'radius-bot' }]);

    const broad = await alice('GET', `/v1/approvals/${one.body.approval_id}/blast-radius?tier=1`);
    expect(broad.status).toBe(200);
    expect(broad.body.pending_covered.map((a: any) => a.id)).toEqual([two.body.approval_id]);
    expect(broad.body.pending_covered[0]).toMatchObject({ action_description: 'Create item "second"', requester: { id: botId, name: 'radius-bot' } });
    // The "old" call and the "second" one (its raise is a call too); this approval's own call is not counted.
    expect(broad.body.audit.calls_covered).toBe(2);
    expect(narrow.body.audit.calls_scanned).toBeGreaterThanOrEqual(3);

    const widest = await alice('GET', `/v1/approvals/${one.body.approval_id}/blast-radius?tier=2`);
    expect(widest.body.pending_covered.map((a: any) => a.id).sort()).toEqual([two.body.approval_id, read.body.approval_id].sort());

    // Bob is not in the chain; bad input is a clear 400 and changes nothing.
    expect((await gw.as(bobToken)('GET', `/v1/approvals/${one.body.approval_id}/blast-radius?tier=1`)).status).toBe(404);
    for (const q of ['', '?tier=9', '?tier=-1', '?tier=a', '?tier=1&more=1']) {
      const res = await alice('GET', `/v1/approvals/${one.body.approval_id}/blast-radius${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await alice('GET', '/v1/approvals/not-a-uuid/blast-radius?tier=0')).status).toBe(400);
  });

  it('changes an agent\'s settings for people only, strictly', async () => {
    const parent = await alice('POST', '/v1/identities/agents', { name: 'settings-parent' });
    const child = await alice('POST', '/v1/identities/agents', { name: 'settings-child', parent_id: parent.body.identity.id });
    const childId = child.body.identity.id as string;
    expect(child.body.identity.inherit_permissions).toBe(false);
    const on = await alice('PATCH', `/v1/identities/${childId}`, { inherit_permissions: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ id: childId, inherit_permissions: true, auto_call_on_approve: true });
    const off = await alice('PATCH', `/v1/identities/${childId}`, { auto_call_on_approve: false });
    expect(off.body).toMatchObject({ inherit_permissions: true, auto_call_on_approve: false });
    // An agent flag only a subagent has; bad bodies; agents and strangers may not.
    const onAgent = await alice('PATCH', `/v1/identities/${parent.body.identity.id}`, { inherit_permissions: true });
    expect(onAgent.status).toBe(400);
    for (const body of [{}, { inherit_permissions: 'yes' }, { inherit_permissions: true, colour: 'x' }, { name: '' }]) {
      const res = await alice('PATCH', `/v1/identities/${childId}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await gw.as(parent.body.key.token)('PATCH', `/v1/identities/${childId}`, { inherit_permissions: false })).status).toBe(403);
    expect((await gw.as(bobToken)('PATCH', `/v1/identities/${childId}`, { inherit_permissions: false })).status).toBe(404);
    expect((await alice('GET', `/v1/identities/${childId}`)).body).toMatchObject({ inherit_permissions: true, auto_call_on_approve: false });
  });
});
