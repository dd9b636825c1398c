// Approvals as their viewers read and decide them: the actionable inbox pages in SQL (issue 13,
// defect 1) and a workflow's refusal reaches the caller with its type and details (defect 2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

describe('approvals', () => {
  let gw: TestGateway;
  let up: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let human: ReturnType<TestGateway['as']>;
  type Agent = { id: string; call: ReturnType<TestGateway['as']> };
  let parent: Agent;
  let child: Agent;
  let sibling: Agent;
  let manual: Agent;

  const makeAgent = async (body: Record<string, unknown>): Promise<Agent> => {
    const res = await human('POST', '/v1/identities/agents', body);
    expect(res.status).toBe(201);
    return { id: res.body.identity.id as string, call: gw.as(res.body.key.token) };
  };
  /** Raises one pending approval for `agent` (distinct params: no de-duplication). */
  const raise = async (agent: Agent, name: string): Promise<string> => {
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.approval_id as string;
  };
  /** Every page of a listing, following next_cursor; each page is full except the last. */
  const allPages = async (as: ReturnType<TestGateway['as']>, query: string, limit: number) => {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 50; i++) {
      const res = await as('GET', `/v1/approvals?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(...res.body.approvals.map((a: { id: string }) => a.id));
      sizes.push(res.body.approvals.length);
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    return { ids, sizes };
  };

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'inbox-owner@example.test' });
    human = gw.as(await gw.login(m.email, m.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_inbox_test' })).status).toBe(201);
    expect((await admin('PATCH', '/v1/org/settings', { max_pending_per_agent: 100 })).status).toBe(200);
    parent = await makeAgent({ name: 'parent' });
    child = await makeAgent({ name: 'child', parent_id: parent.id });
    sibling = await makeAgent({ name: 'sibling' });
    manual = await makeAgent({ name: 'manual', auto_call_on_approve: false });
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('pages the actionable inbox in SQL: full pages and a next_cursor, though most approvals are not the viewer’s to decide', async () => {
    // Oldest first: three the parent agent may decide (its child's), then many it may not
    // (a sibling's, its own, one already decided), all newer, so they fill any LIMIT taken first.
    const childIds = [await raise(child, 'c-1'), await raise(child, 'c-2'), await raise(child, 'c-3')];
    const siblingIds: string[] = [];
    for (let i = 1; i <= 6; i++) siblingIds.push(await raise(sibling, `s-${i}`));
    const ownIds = [await raise(parent, 'p-1'), await raise(parent, 'p-2')];
    const decided = await raise(child, 'c-decided');
    expect((await human('POST', `/v1/approvals/${decided}/resolve`, { decision: 'deny' })).status).toBe(200);

    const asParent = await allPages(parent.call, 'scope=actionable', 2);
    expect(asParent.ids).toEqual([...childIds].reverse());
    expect(asParent.sizes).toEqual([2, 1]);

    // The person above them all may decide every open one but none decided; each page full.
    const asHuman = await allPages(human, 'scope=actionable', 4);
    const open = [...childIds, ...siblingIds, ...ownIds].reverse();
    expect(asHuman.ids).toEqual(open);
    expect(asHuman.sizes).toEqual([4, 4, 3]);
    // The requester never sees its own approval as actionable.
    const asChild = await allPages(child.call, 'scope=actionable', 5);
    expect(asChild.ids).toEqual([]);
    expect(asChild.sizes).toEqual([0]);

    // Each listed approval is the same view GET /v1/approvals/{id} gives.
    const first = await parent.call('GET', '/v1/approvals?scope=actionable&limit=1');
    const one = await parent.call('GET', `/v1/approvals/${first.body.approvals[0].id}`);
    expect(first.body.approvals[0]).toEqual(one.body);
    expect(one.body).toMatchObject({ relationship: 'downstream', status: 'pending', requester: { id: child.id, kind: 'subagent', name: 'child' } });

    // Without a scope, an agent sees its own subtree; the sibling's stay out of view.
    const parentAll = await allPages(parent.call, 'status=pending', 3);
    expect(new Set(parentAll.ids)).toEqual(new Set([...childIds, ...ownIds]));
    expect(parentAll.sizes.slice(0, -1).every((n) => n === 3)).toBe(true);
  });

  it('answers a decision the workflow refuses with its typed error and details', async () => {
    const id = await raise(manual, 'refused-twice');
    const allowed = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' });
    expect(allowed.status).toBe(200);
    // The workflow is still running (the call waits to be resumed): its validator refuses.
    const again = await human('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: { reason: 'approval_not_pending', status: 'allowed' } });
    // Remember keys outside the suggested tiers: refused by the workflow as invalid input.
    const other = await raise(manual, 'remember-wrong');
    const wrong = await human('POST', `/v1/approvals/${other}/resolve`, { decision: 'allow_always', remember_keys: ['elsewhere:*:*'], ttl: '1h' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_remember_keys', field: 'remember_keys' } });
    // The requester resuming before anyone decided: not replayable, with the approval's status.
    const early = await manual.call('POST', '/v1/actions/call', { approval_id: other });
    expect(early.status).toBe(409);
    expect(early.body.error.details).toMatchObject({ status: 'pending' });
  });
});
