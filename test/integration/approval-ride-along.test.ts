// The approval a /v1/approvals/{id} request names rides along its authentication (issue 28: one
// statement less before an allow reaches its workflow). What it reads must be exactly what the
// approval read would have read on its own, for every viewer (the requester's user, an admin, a
// member outside the chain, the requesting agent, another org), kept for that request's principal
// only and taken once; a path that names no approval (or a malformed id) reads nothing.
import type { Request } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../server/auth/middleware.ts';
import { findSession } from '../../server/auth/store.ts';
import { hashToken } from '../../server/auth/tokens.ts';
import { approvalAlong } from '../../server/approvals/request-approval.ts';
import { alongApproval, type ReadAlong } from '../../server/auth/read-along.ts';
import { approvalViews } from '../../server/approvals/store.ts';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { findAgentKeyWithChain } from '../../server/identities/store.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

const along = (path: string) => approvalAlong({ path } as Request);

describe('the approval read with the authentication', () => {
  let gw: TestGateway;
  let up: Upstream;
  let pool: DatabasePool;
  let orgId: string;
  let adminId: string;
  let owner: { id: string; token: string };
  let outsider: { id: string; token: string };
  let stranger: { id: string; token: string; orgId: string };
  let agent: { id: string; key: string };
  let approvalId: string;

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    pool = await createDatabasePool(gw.databaseUrl, { maxPoolSize: 2 });
    const admin = gw.as(gw.adminToken);
    const me = (await admin('GET', '/v1/identities/me')).body;
    orgId = me.org.id;
    adminId = me.identity.id;
    const o = await seedUser(gw.databaseUrl, { orgId, email: 'owner@ride-along.test' });
    owner = { id: o.userId, token: await gw.login(o.email, o.password) };
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'outsider@ride-along.test' });
    outsider = { id: m.userId, token: await gw.login(m.email, m.password) };
    const s = await seedUser(gw.databaseUrl, { email: 'stranger@elsewhere.test', role: 'admin' });
    stranger = { id: s.userId, token: await gw.login(s.email, s.password), orgId: s.orgId };
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    const as = gw.as(owner.token);
    expect((await as('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk-approval-ride-along' })).status).toBe(201);
    const made = await as('POST', '/v1/identities/agents', { name: 'asks' });
    agent = { id: made.body.identity.id, key: made.body.key.token };
    const raised = await gw.as(agent.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'ride-along' } });
    expect(raised.status, raised.text).toBe(202);
    approvalId = raised.body.approval_id;
  });

  afterAll(async () => {
    await pool?.end();
    await gw?.stop();
    await up?.close();
  });

  /** What the approval read reads on its own for this viewer. */
  const standalone = async (viewerOrg: string, viewerId: string) =>
    (await approvalViews(pool, { orgId: viewerOrg, viewerId, admin: false, scope: 'visible', id: approvalId, limit: 1 }))[0] ?? null;

  it('reads what the approval read reads, for a session of every kind of viewer and for an agent key', async () => {
    const path = `/approvals/${approvalId}/resolve`;
    const sessions = [
      { token: gw.adminToken, org: orgId, id: adminId, relationship: 'not_in_your_chain' },
      { token: owner.token, org: orgId, id: owner.id, relationship: 'downstream' },
      { token: outsider.token, org: orgId, id: outsider.id, relationship: 'not_in_your_chain' },
      { token: stranger.token, org: stranger.orgId, id: stranger.id, relationship: null },
    ];
    for (const v of sessions) {
      const found = await findSession(pool, hashToken(v.token), along(path)!.sql);
      expect(found, v.id).not.toBeNull();
      const read: ReadAlong = {};
      along(path)!.keep(read, found!.alongside);
      const kept = alongApproval(read, approvalId);
      expect(kept, v.id).toEqual(await standalone(v.org, v.id));
      expect(kept?.relationship ?? null, v.id).toBe(v.relationship);
    }
    const key = await findAgentKeyWithChain(pool, hashToken(agent.key), along(path)!.sql);
    const read: ReadAlong = {};
    along(path)!.keep(read, key!.alongside);
    const kept = alongApproval(read, approvalId);
    expect(kept).toEqual(await standalone(orgId, agent.id));
    expect(kept!.relationship).toBe('self');
    expect(kept!.call).toMatchObject({ service: 'widgets', action: 'create_item' });
  });

  it('is handed on for that request and that approval only', async () => {
    const found = await findSession(pool, hashToken(owner.token), along(`/approvals/${approvalId}`)!.sql);
    const read: ReadAlong = {};
    along(`/approvals/${approvalId}`)!.keep(read, found!.alongside);
    expect(alongApproval({}, approvalId)).toBeUndefined();
    expect(alongApproval(undefined, approvalId)).toBeUndefined();
    expect(alongApproval(read, '00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(alongApproval(read, approvalId)!.id).toBe(approvalId);
    expect(alongApproval(read, approvalId.toUpperCase())!.id).toBe(approvalId);
    // Without a ride-along the session still authenticates, with nothing alongside.
    expect((await findSession(pool, hashToken(owner.token)))?.alongside).toBeNull();
  });

  it('rides along only a path that names an approval by a well-formed id', () => {
    for (const path of ['/approvals', '/approvals/not-a-uuid', `/approvals/${approvalId}x`, `/calls/${approvalId}`, `/approvals/${approvalId}/resolve/extra`, "/approvals/1' OR '1'='1"]) {
      expect(along(path), path).toBeUndefined();
    }
    for (const path of [`/approvals/${approvalId}`, `/approvals/${approvalId}/resolve`, `/approvals/${approvalId}/edit-preview`, `/approvals/${approvalId.toUpperCase()}/cancel`]) {
      expect(along(path), path).toBeDefined();
    }
  });

  it('through the gateway: the viewer sees and decides what it may, by bearer session and by cookie', async () => {
    const stranger404 = await gw.as(stranger.token)('GET', `/v1/approvals/${approvalId}`);
    expect(stranger404.status).toBe(404);
    const outsiderDecides = await gw.as(outsider.token)('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'deny' });
    expect(outsiderDecides.status).toBe(403);
    expect(outsiderDecides.body.error.code).toBe('not_in_your_chain');
    const byCookie = await gw.request('GET', `/v1/approvals/${approvalId}`, { headers: { cookie: `${SESSION_COOKIE}=${owner.token}`, 'sec-fetch-site': 'same-origin' } });
    expect(byCookie.status, byCookie.text).toBe(200);
    expect(byCookie.body).toMatchObject({ id: approvalId, status: 'pending', relationship: 'downstream' });
    const denied = await gw.as(owner.token)('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'deny', reason: 'not today' });
    expect(denied.status, denied.text).toBe(200);
    expect(denied.body).toMatchObject({ id: approvalId, status: 'denied' });
    const after = await gw.as(owner.token)('GET', `/v1/approvals/${approvalId}`);
    expect(after.body.status).toBe('denied');
  });
});
