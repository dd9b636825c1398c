// Rules with budgets (issue 44): within its budget a rule covers; over it the call raises an
// approval that says so. Counting is one atomic statement in PostgreSQL, so two gateway replicas on
// one database never cover more calls than the budget together. A call a person allows counts too
// once it is sent. Both gateways take budget windows at a pinned moment (never the wall clock),
// so no test straddles a window's edge; moving it starts the next window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { paymentsDoc } from '../support/payments.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

describe('rules with budgets', () => {
  let gw: TestGateway;
  let replica: TestGateway;
  let up: Upstream;
  let human: ReturnType<TestGateway['as']>;
  /** The moment budget windows are taken at: mid-hour, mid-day (UTC), whatever the wall clock says. */
  const PINNED = Date.parse('2026-03-10T12:30:00Z');
  let budgetNow = PINNED;
  const budgetClock = () => new Date(budgetNow);

  const makeAgent = async (name: string, opts: { auto_call_on_approve?: boolean } = {}) => {
    const res = await human('POST', '/v1/identities/agents', { name, ...opts });
    expect(res.status).toBe(201);
    const token = res.body.key.token as string;
    return { id: res.body.identity.id as string, call: gw.as(token), viaReplica: replica.as(token) };
  };
  const refund = (as: ReturnType<TestGateway['as']>, amount: number, note: string) =>
    as('POST', '/v1/actions/call', { service: 'pay', action: 'create_refund', params: { amount, note } });
  const sentNotes = (prefix: string) => up.requests.filter((r) => r.url === '/refunds').map((r) => (JSON.parse(r.body) as { note?: string }).note ?? '').filter((n) => n.startsWith(prefix));

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway({ budgetClock });
    // A second replica (API and worker) on the same database and task queue.
    replica = await startTestGateway({ databaseUrl: gw.databaseUrl, taskQueue: gw.taskQueue, env: { GATEWAY_MASTER_KEY: gw.config.masterKey!.toString('base64') }, budgetClock });
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'budgets@example.test' });
    human = gw.as(await gw.login(m.email, m.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: paymentsDoc(up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'PAY_KEY', value: 'sk_pay_test' })).status).toBe(201);
  });
  afterAll(async () => {
    await replica?.stop();
    await gw?.stop();
    await up?.close();
  });

  it('refuses a malformed budget and a budget on a deny', async () => {
    const agent = await makeAgent('malformed');
    for (const budget of [{ calls: 0, per: '1h' }, { calls: 3, per: '1w' }, { sum: 'amount', max: 5, per: '1d' }, { sum: 'body.amount', max: -1, per: '1d' }]) {
      const res = await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:*:*', budget });
      expect(res.status, JSON.stringify(budget)).toBe(400);
    }
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'deny', pattern: 'pay:*:*', budget: { calls: 1, per: '1h' } })).status).toBe(400);
    expect((await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules).toEqual([]);
  });

  it('a budget of 3 per hour covers 3 and raises the 4th, saying so; the rule shows what it used', async () => {
    const agent = await makeAgent('three-an-hour');
    const rule = await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', budget: { calls: 3, per: '1h' } });
    expect(rule.status).toBe(201);
    for (let i = 1; i <= 3; i++) expect((await refund(agent.call, i, `hourly-${i}`)).body.status).toBe('called');
    const fourth = await refund(agent.call, 4, 'hourly-4');
    expect(fourth.body).toMatchObject({ status: 'pending_approval', gap_reasons: ['at most 3 calls per hour: 3 used'] });
    expect(sentNotes('hourly-').sort()).toEqual(['hourly-1', 'hourly-2', 'hourly-3']);
    const listed = (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules;
    expect(listed[0].budget_usage).toEqual({ used: 3, limit: 3, window_start: '2026-03-10T12:00:00.000Z', resets_at: '2026-03-10T13:00:00.000Z' });
  });

  it('the next window starts afresh: a call past the hour is covered again', async () => {
    const agent = await makeAgent('next-hour');
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', budget: { calls: 1, per: '1h' } })).status).toBe(201);
    try {
      expect((await refund(agent.call, 1, 'window-1')).body.status).toBe('called');
      expect((await refund(agent.call, 2, 'window-2')).body.status).toBe('pending_approval');
      budgetNow = PINNED + 3_600_000;
      expect((await refund(agent.call, 3, 'window-3')).body.status).toBe('called');
      const listed = (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules;
      expect(listed[0].budget_usage).toMatchObject({ used: 1, window_start: '2026-03-10T13:00:00.000Z' });
    } finally {
      budgetNow = PINNED;
    }
    expect(sentNotes('window-').sort()).toEqual(['window-1', 'window-3']);
  });

  // The budget counts calls that were sent: one a person allows is sent, so it is counted, past the
  // limit if need be (the person's allow is never refused by it); the next call still raises.
  it('a call a person allowed is charged to the budget it falls under once it is sent', async () => {
    for (const auto of [true, false]) {
      const agent = await makeAgent(`allowed-${auto ? 'auto' : 'manual'}`, { auto_call_on_approve: auto });
      const note = (n: number) => `allowed-${auto}-${n}`;
      const rule = await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', budget: { calls: 3, per: '1h' } });
      expect(rule.status).toBe(201);
      for (let i = 1; i <= 3; i++) expect((await refund(agent.call, i, note(i))).body.status).toBe('called');
      const over = await refund(agent.call, 4, note(4));
      expect(over.body).toMatchObject({ status: 'pending_approval', gap_reasons: ['at most 3 calls per hour: 3 used'] });
      const allowed = await human('POST', `/v1/approvals/${over.body.approval_id}/resolve`, { decision: 'allow_once' });
      expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
      if (!auto) expect((await agent.call('POST', '/v1/actions/call', { approval_id: over.body.approval_id })).body.status).toBe('called');
      await expect.poll(() => sentNotes(note(4)), { timeout: 30_000 }).toEqual([note(4)]);
      await expect.poll(async () => (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules[0].budget_usage.used, { timeout: 30_000 }).toBe(4);
      expect((await refund(agent.call, 5, note(5))).body).toMatchObject({ status: 'pending_approval', gap_reasons: ['at most 3 calls per hour: 4 used'] });
    }
  });

  it('a call a person allowed that no budgeted rule covers (its condition is false) is not charged', async () => {
    const agent = await makeAgent('allowed-outside');
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', condition: 'body.amount <= 10', budget: { calls: 3, per: '1h' } })).status).toBe(201);
    expect((await refund(agent.call, 5, 'outside-1')).body.status).toBe('called');
    const raised = await refund(agent.call, 50, 'outside-2');
    expect(raised.body.status).toBe('pending_approval');
    expect((await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    await expect.poll(() => sentNotes('outside-2'), { timeout: 30_000 }).toEqual(['outside-2']);
    expect((await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules[0].budget_usage.used).toBe(1);
  });

  it('a sum budget covers while the amounts add up to at most its max', async () => {
    const agent = await makeAgent('sum');
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', budget: { sum: 'body.amount', max: 100, per: '1d' } })).status).toBe(201);
    expect((await refund(agent.call, 60, 'sum-1')).body.status).toBe('called');
    const over = await refund(agent.call, 50, 'sum-2');
    expect(over.body).toMatchObject({ status: 'pending_approval', gap_reasons: ['body.amount adding up to at most 100 per day: 60 used, this call adds 50'] });
    expect((await refund(agent.call, 40, 'sum-3')).body.status).toBe('called');
    expect(sentNotes('sum-').sort()).toEqual(['sum-1', 'sum-3']);
  });

  it('10 concurrent calls against a budget of 5 through two replicas: exactly 5 covered', async () => {
    const agent = await makeAgent('concurrent');
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', budget: { calls: 5, per: '1d' } })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => refund(i % 2 === 0 ? agent.call : agent.viaReplica, i + 1, `race-${i}`)));
    const statuses = answers.map((a) => a.body.status);
    expect(statuses.filter((s) => s === 'called')).toHaveLength(5);
    expect(statuses.filter((s) => s === 'pending_approval')).toHaveLength(5);
    expect(sentNotes('race-')).toHaveLength(5);
    const listed = (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules;
    expect(listed[0].budget_usage).toMatchObject({ used: 5, limit: 5 });
  });
});
