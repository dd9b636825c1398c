// Rules with conditions (issue 44): a rule applies only when its key pattern matches AND its CEL
// condition holds on the call's redacted request. Real PostgreSQL, Temporal and upstream.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { paymentsDoc } from '../support/payments.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

describe('rules with conditions', () => {
  let gw: TestGateway;
  let up: Upstream;
  let hooks: Upstream;
  let human: ReturnType<TestGateway['as']>;

  const makeAgent = async (name: string, parentId?: string) => {
    const res = await human('POST', '/v1/identities/agents', { name, ...(parentId ? { parent_id: parentId } : {}) });
    expect(res.status).toBe(201);
    return { id: res.body.identity.id as string, token: res.body.key.token as string, call: gw.as(res.body.key.token as string) };
  };
  const refund = (agent: { call: ReturnType<TestGateway['as']> }, amount: unknown) =>
    agent.call('POST', '/v1/actions/call', { service: 'pay', action: 'create_refund', params: { amount } });
  const sentAmounts = () => up.requests.filter((r) => r.url === '/refunds').map((r) => (JSON.parse(r.body) as { amount: unknown }).amount);

  beforeAll(async () => {
    up = await startUpstream();
    hooks = await startUpstream();
    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'payer@example.test' });
    human = gw.as(await gw.login(m.email, m.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: paymentsDoc(up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'PAY_KEY', value: 'sk_pay_test' })).status).toBe(201);
    expect((await admin('POST', '/v1/webhooks', { url: `${hooks.url}/gateway-events`, events: ['approval.raised'] })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
    await hooks?.close();
  });

  it('refuses a bad condition at save with its position, and stores nothing', async () => {
    const agent = await makeAgent('strict');
    const bad = await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', condition: 'body.amount <= ' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect(bad.body.error.details).toMatchObject({ field: 'condition', position: 15 });
    expect(bad.body.error.message).toContain('position 15');
    for (const condition of ['amount <= 50', 'body.s.matches("(a+)+$")', `body.a == "${'x'.repeat(1_001)}"`, `${'('.repeat(30)}true${')'.repeat(30)}`]) {
      const res = await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', condition });
      expect(res.status, condition.slice(0, 40)).toBe(400);
    }
    expect((await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules).toEqual([]);
  });

  it('body.amount <= 50 covers 40 and raises 60, naming the condition', async () => {
    const agent = await makeAgent('refunder');
    const rule = await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*', condition: 'body.amount <= 50' });
    expect(rule.status).toBe(201);
    expect(rule.body).toMatchObject({ condition: 'body.amount <= 50', budget: null });

    const covered = await refund(agent, 40);
    expect(covered.status).toBe(200);
    expect(covered.body.status).toBe('called');
    expect(sentAmounts()).toContain(40);

    const raised = await refund(agent, 60);
    expect(raised.body).toMatchObject({ status: 'pending_approval', gap_reasons: ['body.amount <= 50 was false: amount is 60'] });
    expect(sentAmounts()).not.toContain(60);
    const view = await human('GET', `/v1/approvals/${raised.body.approval_id}`);
    expect(view.status).toBe(200);
    expect(view.body.gap_reasons).toEqual(['body.amount <= 50 was false: amount is 60']);
    // The approval.raised webhook says it too.
    await expect
      .poll(() => hooks.requests.map((r) => JSON.parse(r.body) as { type: string; data: { approval_id?: string; gap_reasons?: string[] } }).find((e) => e.type === 'approval.raised' && e.data.approval_id === raised.body.approval_id)?.data.gap_reasons, { timeout: 30_000 })
      .toEqual(['body.amount <= 50 was false: amount is 60']);

    // The audit row of the covered call names the rule and its condition.
    const audit = await human('GET', '/v1/audit?limit=200');
    const calledRow = audit.body.entries.find((e: any) => e.event === 'call.called' && e.call_id === covered.body.call_id);
    expect(calledRow?.details.covered_by).toEqual([{ rule_id: rule.body.id, identity_id: agent.id, pattern: 'pay:create_refund:*', condition: 'body.amount <= 50' }]);

  });

  it('a deny with a condition wins over an allow; the allow still covers when it is false', async () => {
    const agent = await makeAgent('capped');
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'pay:create_refund:*' })).status).toBe(201);
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'deny', pattern: 'pay:*:*', condition: 'body.amount > 100' })).status).toBe(201);
    const denied = await refund(agent, 150);
    expect(denied.body).toMatchObject({ status: 'denied' });
    expect(denied.body.reason).toContain('when body.amount > 100');
    expect(sentAmounts()).not.toContain(150);
    const allowed = await refund(agent, 99);
    expect(allowed.body.status).toBe('called');
    expect(sentAmounts()).toContain(99);
  });

  it('allow_remember with remember_condition plants a rule that carries it (a bad one changes nothing)', async () => {
    const agent = await makeAgent('remembered');
    const raised = await refund(agent, 80);
    expect(raised.body.status).toBe('pending_approval');
    const keys = raised.body.suggested_tiers[0].keys as string[];
    const bad = await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_remember', remember_keys: keys, ttl: '1d', remember_condition: 'body.amount <' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'remember_condition' });
    expect((await human('GET', `/v1/approvals/${raised.body.approval_id}`)).body.status).toBe('pending');
    const ok = await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_remember', remember_keys: keys, ttl: '1d', remember_condition: 'body.amount <= 100' });
    expect(ok.status).toBe(200);
    await expect
      .poll(async () => (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules.filter((r: any) => r.source === 'approval'), { timeout: 30_000 })
      .toHaveLength(1);
    const rules = (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules;
    expect(rules[0]).toMatchObject({ condition: 'body.amount <= 100', source: 'approval' });
    expect((await refund(agent, 90)).body.status).toBe('called');
    expect((await refund(agent, 150)).body).toMatchObject({ status: 'pending_approval', gap_reasons: ['body.amount <= 100 was false: amount is 150'] });
  });

  it('offers a tier "up to this amount" derived from the call; remembered, it covers calls within it and raises one outside', async () => {
    const agent = await makeAgent('derived');
    const raised = await refund(agent, 80);
    expect(raised.body.status).toBe('pending_approval');
    const derived = { keys: ['pay:create_refund:*'], description: 'Any create_refund on pay, up to this amount: body.amount <= 80', condition: 'body.amount <= 80' };
    // After the key tiers, whose indexes do not move.
    expect(raised.body.suggested_tiers).toEqual([{ keys: ['pay:create_refund:*'], description: 'Any create_refund on pay' }, { keys: ['pay:*:*'], description: 'Any action on pay' }, derived]);
    expect((await human('GET', `/v1/approvals/${raised.body.approval_id}`)).body.suggested_tiers).toEqual(raised.body.suggested_tiers);

    const chosen = raised.body.suggested_tiers[2] as typeof derived;
    const ok = await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_remember', remember_keys: chosen.keys, ttl: '1d', remember_condition: chosen.condition });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    await expect
      .poll(async () => (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules.map((r: any) => ({ pattern: r.pattern, condition: r.condition, source: r.source })), { timeout: 30_000 })
      .toEqual([{ pattern: 'pay:create_refund:*', condition: 'body.amount <= 80', source: 'approval' }]);
    expect((await refund(agent, 80)).body.status).toBe('called');
    expect((await refund(agent, 12.5)).body.status).toBe('called');
    expect((await refund(agent, 81)).body).toMatchObject({ status: 'pending_approval', gap_reasons: ['body.amount <= 80 was false: amount is 81'] });
  });

  it('MCP: gateway_call offers the derived tier, and gateway_approve remembers it with its condition', async () => {
    const lead = await makeAgent('lead');
    const helper = await makeAgent('lead-helper', lead.id);
    // Every agent on the chain must be covered: the lead is, so the helper's gap is the lead's to decide.
    expect((await human('POST', `/v1/identities/${lead.id}/rules`, { effect: 'allow', pattern: 'pay:*:*' })).status).toBe(201);
    const connect = async (token: string) => {
      const client = new Client({ name: 'rule-conditions-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client;
    };
    const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
    const asLead = await connect(lead.token);
    const asHelper = await connect(helper.token);
    try {
      const raised = await call(asHelper, 'gateway_call', { service: 'pay', action: 'create_refund', params: { amount: 70 } });
      const pending = raised.structuredContent as { status: string; approval_id: string; suggested_tiers: { keys: string[]; description: string; condition?: string }[] };
      expect(pending.status).toBe('pending_approval');
      const tier = pending.suggested_tiers.find((t) => t.condition);
      expect(tier).toEqual({ keys: ['pay:create_refund:*'], description: 'Any create_refund on pay, up to this amount: body.amount <= 70', condition: 'body.amount <= 70' });
      const approved = await call(asLead, 'gateway_approve', { approval_id: pending.approval_id, resolution: 'allow_remember', remember_keys: tier!.keys, ttl: '1d', remember_condition: tier!.condition });
      expect(approved.isError, JSON.stringify(approved)).toBeFalsy();
      await expect
        .poll(async () => (await human('GET', `/v1/identities/${helper.id}/rules`)).body.rules.map((r: any) => [r.pattern, r.condition]), { timeout: 30_000 })
        .toEqual([['pay:create_refund:*', 'body.amount <= 70']]);
      expect((await refund(helper, 70)).body.status).toBe('called');
      expect((await refund(helper, 71)).body).toMatchObject({ status: 'pending_approval', gap_reasons: ['body.amount <= 70 was false: amount is 71'] });
    } finally {
      await asLead.close();
      await asHelper.close();
    }
  });
});
