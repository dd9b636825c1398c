// Deciding many approvals at once (issue 44 item 3): POST /v1/approvals/resolve decides each
// approval through the single resolve's path — its own authority check, its own workflow update —
// and answers per id. A batch allow of 20 sends 20 requests, once each; an approver without
// authority over 3 of them gets those 3 refused and the rest decided; remember applies to each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

type As = ReturnType<TestGateway['as']>;
interface Agent {
  id: string;
  call: As;
}

describe('deciding approvals in a batch', () => {
  let gw: TestGateway;
  let up: Upstream;
  let approver: As;
  let stranger: As;
  let worker: Agent;
  let others: Agent;

  const makeAgent = async (owner: As, name: string): Promise<Agent> => {
    const res = await owner('POST', '/v1/identities/agents', { name });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.identity.id as string, call: gw.as(res.body.key.token) };
  };
  /** Raises one pending approval for `agent` (distinct names: no de-duplication). */
  const raise = async (agent: Agent, name: string): Promise<string> => {
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.approval_id as string;
  };
  const raiseMany = async (agent: Agent, prefix: string, n: number) => {
    const ids: string[] = [];
    for (let i = 1; i <= n; i++) ids.push(await raise(agent, `${prefix}-${i}`));
    return ids;
  };
  /** The names the upstream was sent items to create, in arrival order. */
  const sentNames = () => up.requests.filter((r) => r.method === 'POST' && r.url === '/items').map((r) => (JSON.parse(r.body) as { name: string }).name);
  /** Waits until every approval's call has run (the send goes on after the decision is answered). */
  const allExecuted = (as: As, ids: string[]) =>
    until(
      () => Promise.all(ids.map(async (id) => (await as('GET', `/v1/approvals/${id}`)).body.execution?.status as string | undefined)),
      (statuses) => statuses.every((s) => s === 'executed'),
      60_000,
    );

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const a = await seedUser(gw.databaseUrl, { orgId, email: 'batch-approver@example.test' });
    const s = await seedUser(gw.databaseUrl, { orgId, email: 'batch-stranger@example.test' });
    approver = gw.as(await gw.login(a.email, a.password));
    stranger = gw.as(await gw.login(s.email, s.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await approver('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_batch_approver' })).status).toBe(201);
    expect((await admin('PATCH', '/v1/org/settings', { max_pending_per_agent: 100 })).status).toBe(200);
    worker = await makeAgent(approver, 'batch-worker');
    others = await makeAgent(stranger, 'batch-others');
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('a batch allow of 20 approvals sends 20 requests, once each, and answers each as decided', async () => {
    const ids = await raiseMany(worker, 'twenty', 20);
    const before = sentNames().length;
    const res = await approver('POST', '/v1/approvals/resolve', { ids, decision: 'allow_once', reason: 'batch of twenty' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results.map((r: { id: string }) => r.id)).toEqual(ids);
    for (const r of res.body.results) expect(r).toMatchObject({ status: 'decided', approval: { id: r.id, status: 'allowed' } });

    await allExecuted(approver, ids);
    const sent = sentNames().slice(before);
    expect(sent).toHaveLength(20);
    expect([...sent].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `twenty-${i + 1}`).sort());
    // Deciding the same batch again decides nothing more and sends nothing: each is refused as no longer pending.
    const again = await approver('POST', '/v1/approvals/resolve', { ids, decision: 'allow_once' });
    expect(again.status).toBe(200);
    for (const r of again.body.results) expect(r).toMatchObject({ status: 'refused', error: { code: 'conflict' } });
    expect(sentNames().slice(before)).toHaveLength(20);
  });

  it('refuses the 3 approvals outside the approver’s authority with not_in_your_chain and decides the rest', async () => {
    const mine = await raiseMany(worker, 'mine', 17);
    const theirs = await raiseMany(others, 'theirs', 3);
    // Theirs in the middle of the batch: a refusal does not stop what comes after it.
    const ids = [...mine.slice(0, 8), ...theirs, ...mine.slice(8)];
    const before = sentNames().length;
    const res = await approver('POST', '/v1/approvals/resolve', { ids, decision: 'allow' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const byId = new Map(res.body.results.map((r: { id: string }) => [r.id, r]));
    expect(byId.size).toBe(20);
    for (const id of theirs) {
      expect(byId.get(id)).toEqual({ id, status: 'refused', error: { code: 'not_in_your_chain', message: expect.any(String) } });
      // Still waiting for someone who may decide it.
      expect((await stranger('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
    }
    for (const id of mine) expect(byId.get(id)).toMatchObject({ status: 'decided', approval: { id, status: 'allowed' } });

    await allExecuted(approver, mine);
    const sent = sentNames().slice(before);
    expect([...sent].sort()).toEqual(Array.from({ length: 17 }, (_, i) => `mine-${i + 1}`).sort());
    expect(sent.some((n) => n.startsWith('theirs-'))).toBe(false);
  });

  it('denies a batch with the reason, and refuses an unknown id as not_found without stopping the rest', async () => {
    const ids = await raiseMany(worker, 'deny', 3);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const res = await approver('POST', '/v1/approvals/resolve', { ids: [ids[0], unknown, ...ids.slice(1)], decision: 'deny', reason: 'not today' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results[1]).toEqual({ id: unknown, status: 'refused', error: { code: 'not_found', message: 'approval not found' } });
    for (const id of ids) {
      expect(res.body.results.find((r: { id: string }) => r.id === id)).toMatchObject({ status: 'decided', approval: { status: 'denied' } });
      expect((await approver('GET', `/v1/approvals/${id}`)).body).toMatchObject({ status: 'denied', reason: 'not today' });
    }
  });

  it('refuses bad input with invalid_request and decides nothing', async () => {
    const [id] = await raiseMany(worker, 'bad-input', 1);
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const cases: Array<[unknown, string]> = [
      [{ ids: [], decision: 'allow' }, 'ids'],
      [{ ids: Array.from({ length: 101 }, (_, i) => uuid(i)), decision: 'allow' }, 'ids'],
      [{ ids: [id, id!.toUpperCase()], decision: 'allow' }, 'ids.1'],
      [{ ids: [id, 'not-a-uuid'], decision: 'allow' }, 'ids.1'],
      [{ ids: [id], decision: 'allow', surprise: true }, ''],
      // An edit is made for one call's request: not part of a batch.
      [{ ids: [id], decision: 'allow', params: { name: 'edited' } }, ''],
      [{ ids: [id], decision: 'maybe' }, 'decision'],
      [{ decision: 'allow' }, 'ids'],
    ];
    for (const [body, path] of cases) {
      const res = await approver('POST', '/v1/approvals/resolve', body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    // A combination no approval could take is judged once, before any is decided.
    const noTtl = await approver('POST', '/v1/approvals/resolve', { ids: [id], decision: 'allow_always', remember_keys: ['widgets:*'] });
    expect(noTtl.status).toBe(400);
    expect(noTtl.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'ttl' } });
    expect((await approver('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
  });

  it('lets an agent decide its subagent’s approvals in a batch, and refuses one outside its subtree', async () => {
    const sub = await worker.call('POST', '/v1/identities/agents', { name: 'batch-helper', parent_id: worker.id });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const helper = { id: sub.body.identity.id as string, call: gw.as(sub.body.key.token) };
    const ids = [...(await raiseMany(helper, 'helper', 2)), ...(await raiseMany(others, 'outside', 1))];
    const res = await worker.call('POST', '/v1/approvals/resolve', { ids, decision: 'deny', reason: 'agent says no' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status)).toEqual(['decided', 'decided', 'not_in_your_chain']);
  });

  // Last: the rule it plants covers this agent's create_item calls from then on.
  it('remembers with a batch for each approval: each is allowed with the keys, and the next such call is covered', async () => {
    const ids = await raiseMany(worker, 'remember', 3);
    const first = await approver('GET', `/v1/approvals/${ids[0]}`);
    // The broadest tier is the same for every create_item call of this agent.
    const tier = first.body.suggested_tiers.at(-1) as { keys: string[] };
    const res = await approver('POST', '/v1/approvals/resolve', { ids, decision: 'allow_always', remember_keys: tier.keys, ttl: '1h' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const r of res.body.results) expect(r).toMatchObject({ status: 'decided', approval: { status: 'allowed' } });
    await allExecuted(approver, ids);
    const next = await worker.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'remember-covered' } });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.status).toBe('called');
  });
});
