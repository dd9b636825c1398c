// Webhook subscriptions, signed deliveries with Temporal retries, and the audit REST endpoint,
// against real PostgreSQL and a real Temporal server. Receivers are real HTTP servers on loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError } from '@temporalio/client';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { verify, verifyDetailed } from '../../core/webhooks/signing.ts';
import { appendAudit } from '../../server/audit/store.ts';
import { emitWebhookEvent, type WebhookEvent } from '../../server/webhooks/emit.ts';
import type { WebhookDeliveryInput } from '../../workflows/webhook-definitions.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  answeredWith: number;
}

interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A real HTTP endpoint; `answer(n)` picks the status for the n-th request (0-based). */
async function startReceiver(answer: (n: number) => number = () => 204): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = answer(received.length);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answeredWith: status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await sleep(50);
  }
}

describe('webhooks and the audit log (real PostgreSQL and Temporal)', () => {
  let gw: TestGateway;
  let orgId: string;
  let adminId: string;
  let adminName: string;
  let member: SeededUser;
  let outsider: SeededUser;
  let tokens: { admin: string; member: string; outsider: string; agent: string; memberAgent: string };
  let ids: { adminAgent: string; memberAgent: string };
  const receivers: Receiver[] = [];
  /** Every signing secret handed out in this file, for the leak test. */
  const secrets: string[] = [];

  /** Every delivery workflow started in this file, for the leak test. */
  const workflowIds: string[] = [];

  const emit = async (event: WebhookEvent, retry?: WebhookDeliveryInput['retry']) => {
    const result = await emitWebhookEvent({ pool: gw.pool, temporal: gw.temporal, taskQueue: gw.taskQueue }, event, retry ? { retry } : {});
    workflowIds.push(...result.workflowIds);
    return result;
  };

  async function subscribe(url: string, events: string[], description?: string): Promise<{ id: string; secret: string }> {
    const res = await gw.as(tokens.admin)('POST', '/v1/webhooks', { url, events, ...(description ? { description } : {}) });
    expect(res.status).toBe(201);
    secrets.push(res.body.secret);
    return res.body;
  }

  async function receiver(answer?: (n: number) => number): Promise<Receiver> {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    const me = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body;
    orgId = me.org.id;
    adminId = me.identity.id;
    adminName = me.identity.name;
    member = await seedUser(gw.databaseUrl, { orgId, email: 'webhook-member@example.test' });
    outsider = await seedUser(gw.databaseUrl, { email: 'webhook-outsider@example.test', role: 'admin' });
    const memberToken = await gw.login(member.email, member.password);
    const adminAgent = await gw.as(gw.adminToken)('POST', '/v1/identities/agents', { name: 'hook-admin-agent' });
    const memberAgent = await gw.as(memberToken)('POST', '/v1/identities/agents', { name: 'hook-member-agent' });
    expect([adminAgent.status, memberAgent.status]).toEqual([201, 201]);
    tokens = {
      admin: gw.adminToken,
      member: memberToken,
      outsider: await gw.login(outsider.email, outsider.password),
      agent: adminAgent.body.key.token,
      memberAgent: memberAgent.body.key.token,
    };
    ids = { adminAgent: adminAgent.body.identity.id, memberAgent: memberAgent.body.identity.id };
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await gw?.stop();
  });

  describe('subscriptions', () => {
    it('creates a subscription whose secret is shown once, lists without secrets, soft-deletes', async () => {
      const admin = gw.as(tokens.admin);
      const created = await admin('POST', '/v1/webhooks', {
        url: 'https://hooks.example.test/gateway',
        events: ['approval.raised', 'approval.resolved', 'approval.raised'],
        description: 'ops channel',
      });
      expect(created.status).toBe(201);
      secrets.push(created.body.secret);
      expect(created.body).toEqual({
        id: expect.any(String),
        url: 'https://hooks.example.test/gateway',
        events: ['approval.raised', 'approval.resolved'],
        description: 'ops channel',
        created_by: adminId,
        created_at: expect.any(String),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      });

      const list = await admin('GET', '/v1/webhooks');
      expect(list.status).toBe(200);
      const listed = list.body.webhooks.find((w: any) => w.id === created.body.id);
      expect(listed).toEqual({ ...created.body, secret: undefined });
      expect(Object.keys(listed)).not.toContain('secret');
      expect(list.text).not.toContain(created.body.secret);
      expect(list.text).not.toContain('secret');

      const deliveries = await admin('GET', `/v1/webhooks/${created.body.id}/deliveries`);
      expect(deliveries.status).toBe(200);
      expect(deliveries.body).toEqual({ deliveries: [] });

      // Another org sees nothing of it.
      const outsiderAs = gw.as(tokens.outsider);
      expect((await outsiderAs('GET', '/v1/webhooks')).body.webhooks).toEqual([]);
      expect((await outsiderAs('GET', `/v1/webhooks/${created.body.id}/deliveries`)).status).toBe(404);
      expect((await outsiderAs('DELETE', `/v1/webhooks/${created.body.id}`)).status).toBe(404);

      expect((await admin('DELETE', `/v1/webhooks/${created.body.id}`)).status).toBe(204);
      expect((await admin('GET', '/v1/webhooks')).body.webhooks.map((w: any) => w.id)).not.toContain(created.body.id);
      expect((await admin('DELETE', `/v1/webhooks/${created.body.id}`)).status).toBe(404);
      expect((await admin('GET', `/v1/webhooks/${created.body.id}/deliveries`)).status).toBe(404);
      const row = await gw.pool.one(sql.type(z.object({ deleted_at: z.date().nullable() }))`
        SELECT deleted_at FROM webhooks WHERE id = ${created.body.id}`);
      expect(row.deleted_at).toBeInstanceOf(Date);
    });

    it('is for org admins only: members and agents get 403', async () => {
      for (const token of [tokens.member, tokens.agent]) {
        const as = gw.as(token);
        expect((await as('POST', '/v1/webhooks', { url: 'https://x.example.test', events: ['approval.raised'] })).status).toBe(403);
        // Even malformed requests: authorization comes before parsing.
        expect((await as('POST', '/v1/webhooks', { nope: true })).status).toBe(403);
        expect((await as('GET', '/v1/webhooks')).status).toBe(403);
        expect((await as('GET', '/v1/webhooks/00000000-0000-4000-8000-000000000000/deliveries')).status).toBe(403);
        const del = await as('DELETE', '/v1/webhooks/00000000-0000-4000-8000-000000000000');
        expect(del.status).toBe(403);
        expect(del.body.error.code).toBe('forbidden');
      }
    });

    it('validates bodies strictly', async () => {
      const admin = gw.as(tokens.admin);
      const bad: unknown[] = [
        {},
        { url: '/relative', events: ['approval.raised'] },
        { url: 'ftp://example.test/x', events: ['approval.raised'] },
        { url: 'javascript:alert(1)', events: ['approval.raised'] },
        { url: 'https://user:pw@example.test/x', events: ['approval.raised'] },
        { url: 'https://example.test/x', events: [] },
        { url: 'https://example.test/x', events: ['approval.nope'] },
        { url: 'https://example.test/x', events: 'approval.raised' },
        { url: 'https://example.test/x', events: ['approval.raised'], secret: 'whsec_mine' },
        { url: 'https://example.test/x', events: ['approval.raised'], description: 'x'.repeat(1001) },
      ];
      for (const body of bad) {
        const res = await admin('POST', '/v1/webhooks', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
      expect((await admin('GET', '/v1/webhooks/not-a-uuid/deliveries')).status).toBe(400);
      expect((await admin('DELETE', '/v1/webhooks/not-a-uuid')).status).toBe(400);
      expect((await admin('GET', '/v1/webhooks/00000000-0000-4000-8000-000000000000/deliveries')).status).toBe(404);
      expect((await admin('GET', '/v1/webhooks/00000000-0000-4000-8000-000000000000/deliveries?limit=0')).status).toBe(400);
      expect((await admin('GET', '/v1/webhooks/00000000-0000-4000-8000-000000000000/deliveries?x=1')).status).toBe(400);
      // Loopback receivers are allowed (see routes.ts).
      const local = await admin('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['approval.raised'] });
      expect(local.status).toBe(201);
      secrets.push(local.body.secret);
      expect((await admin('DELETE', `/v1/webhooks/${local.body.id}`)).status).toBe(204);
    });
  });

  describe('deliveries', () => {
    it('delivers a signed event to matching subscriptions only', async () => {
      const raisedReceiver = await receiver();
      const resolvedReceiver = await receiver();
      const raisedSub = await subscribe(raisedReceiver.url, ['approval.raised']);
      const resolvedSub = await subscribe(resolvedReceiver.url, ['approval.resolved']);

      const data = { approval_id: '5b0e3f8e-1111-4222-8333-444455556666', action_description: 'Create an issue', risk: 'med' };
      const result = await emit({ orgId, type: 'approval.raised', data });
      expect(result.eventId).toMatch(/^evt_[0-9a-f-]{36}$/);
      expect(result.workflowIds).toEqual([`webhook-${result.eventId}-${raisedSub.id}`]);
      const outcome = await gw.temporal.workflow.getHandle(result.workflowIds[0]!).result();
      expect(outcome).toEqual({ outcome: 'delivered', statusCode: 204, attempt: 1 });

      expect(raisedReceiver.received).toHaveLength(1);
      const got = raisedReceiver.received[0]!;
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['webhook-id']).toBe(result.eventId);
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(verifyDetailed(got.headers, got.body, raisedSub.secret)).toEqual({ ok: true });
      expect(verify(got.headers, got.body, resolvedSub.secret)).toBe(false);
      expect(verify(got.headers, got.body.replace('med', 'low'), raisedSub.secret)).toBe(false);
      const body = JSON.parse(got.body);
      expect(body).toEqual({ id: result.eventId, type: 'approval.raised', created_at: expect.any(String), data });
      expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'data']);
      expect(new Date(body.created_at).toISOString()).toBe(body.created_at);

      // The subscription for other events received nothing, and no workflow was started for it.
      expect(resolvedReceiver.received).toHaveLength(0);
      const deliveries = await gw.as(tokens.admin)('GET', `/v1/webhooks/${raisedSub.id}/deliveries`);
      expect(deliveries.body.deliveries).toEqual([
        {
          id: expect.any(Number),
          event_id: result.eventId,
          event_type: 'approval.raised',
          attempt: 1,
          status_code: 204,
          error: null,
          duration_ms: expect.any(Number),
          attempted_at: expect.any(String),
        },
      ]);
      expect((await gw.as(tokens.admin)('GET', `/v1/webhooks/${resolvedSub.id}/deliveries`)).body.deliveries).toEqual([]);

      // Emitting the same event id again delivers nothing new; other orgs' events never arrive.
      const again = await emit({ orgId, type: 'approval.raised', data, id: result.eventId });
      expect(again.workflowIds).toEqual(result.workflowIds);
      const otherOrg = await emit({ orgId: outsider.orgId, type: 'approval.raised', data });
      expect(otherOrg.workflowIds).toEqual([]);
      await sleep(500);
      expect(raisedReceiver.received).toHaveLength(1);

      for (const sub of [raisedSub, resolvedSub]) await gw.as(tokens.admin)('DELETE', `/v1/webhooks/${sub.id}`);
      // A deleted subscription gets no more events.
      expect((await emit({ orgId, type: 'approval.raised', data })).workflowIds).toEqual([]);
    });

    it('retries a failing receiver with backoff: three attempts, one successful delivery', async () => {
      const flaky = await receiver((n) => (n < 2 ? 503 : 200));
      const sub = await subscribe(flaky.url, ['approval.executed']);
      const result = await emit(
        { orgId, type: 'approval.executed', data: { approval_id: 'a', execution: { status: 'executed', http_status_code: 201 } } },
        { initialIntervalMs: 100 },
      );
      expect(result.workflowIds).toHaveLength(1);
      const outcome = await gw.temporal.workflow.getHandle(result.workflowIds[0]!).result();
      expect(outcome).toEqual({ outcome: 'delivered', statusCode: 200, attempt: 3 });

      expect(flaky.received.map((r) => r.answeredWith)).toEqual([503, 503, 200]);
      expect(flaky.received.filter((r) => r.answeredWith < 300)).toHaveLength(1);
      for (const r of flaky.received) {
        expect(r.headers['webhook-id']).toBe(result.eventId);
        expect(r.body).toBe(flaky.received[0]!.body);
        expect(verify(r.headers, r.body, sub.secret)).toBe(true);
      }

      const deliveries = (await gw.as(tokens.admin)('GET', `/v1/webhooks/${sub.id}/deliveries`)).body.deliveries;
      expect(deliveries.map((d: any) => [d.attempt, d.status_code, d.error])).toEqual([
        [3, 200, null],
        [2, 503, 'endpoint answered HTTP 503'],
        [1, 503, 'endpoint answered HTTP 503'],
      ]);
      expect(deliveries.every((d: any) => d.event_id === result.eventId && d.event_type === 'approval.executed')).toBe(true);
      expect((await gw.as(tokens.admin)('GET', `/v1/webhooks/${sub.id}/deliveries?limit=1`)).body.deliveries).toHaveLength(1);
      await gw.as(tokens.admin)('DELETE', `/v1/webhooks/${sub.id}`);
    });

    it('records network errors per attempt and gives up when the policy says so', async () => {
      const gone = await startReceiver();
      const url = gone.url;
      await gone.close();
      const sub = await subscribe(url, ['approval.execution_failed']);
      const result = await emit({ orgId, type: 'approval.execution_failed', data: { approval_id: 'b' } }, { initialIntervalMs: 50, maximumAttempts: 2 });
      await expect(gw.temporal.workflow.getHandle(result.workflowIds[0]!).result()).rejects.toBeInstanceOf(WorkflowFailedError);
      const deliveries = (await gw.as(tokens.admin)('GET', `/v1/webhooks/${sub.id}/deliveries`)).body.deliveries;
      expect(deliveries.map((d: any) => [d.attempt, d.status_code, d.error])).toEqual([
        [2, null, 'network error: ECONNREFUSED'],
        [1, null, 'network error: ECONNREFUSED'],
      ]);
      await gw.as(tokens.admin)('DELETE', `/v1/webhooks/${sub.id}`);
    });

    it('skips pending deliveries of a subscription deleted before they ran', async () => {
      const r = await receiver(() => 500);
      const sub = await subscribe(r.url, ['approval.resolved']);
      const result = await emit({ orgId, type: 'approval.resolved', data: { decision: 'deny' } }, { initialIntervalMs: 2_000 });
      await waitFor(() => r.received.length === 1);
      expect((await gw.as(tokens.admin)('DELETE', `/v1/webhooks/${sub.id}`)).status).toBe(204);
      const outcome = await gw.temporal.workflow.getHandle(result.workflowIds[0]!).result();
      expect(outcome).toEqual({ outcome: 'skipped', attempt: 2 });
      expect(r.received).toHaveLength(1);
    });

    it('never leaks a signing secret into logs, rows or workflow history', async () => {
      // Its own delivery (two attempts), plus whatever the other tests of this file left behind.
      const r = await receiver((n) => (n === 0 ? 500 : 200));
      const sub = await subscribe(r.url, ['approval.raised', 'approval.resolved'], 'leak probe');
      const result = await emit({ orgId, type: 'approval.resolved', data: { decision: 'allow_once' } }, { initialIntervalMs: 50 });
      expect(await gw.temporal.workflow.getHandle(result.workflowIds[0]!).result()).toMatchObject({ outcome: 'delivered', attempt: 2 });
      await gw.as(tokens.admin)('DELETE', `/v1/webhooks/${sub.id}`);

      const rows = await gw.pool.anyFirst(sql.type(z.object({ row: z.string() }))`
        SELECT t::text AS row FROM webhooks t UNION ALL SELECT d::text FROM webhook_deliveries d`);
      expect(rows.length).toBeGreaterThanOrEqual(3);
      const histories: string[] = [];
      for (const id of workflowIds) histories.push(historyText(await gw.temporal.workflow.getHandle(id).fetchHistory()));
      expect(histories.join('')).toContain('webhookDeliveryWorkflow');
      // Payloads are decoded: the delivered event body is visible to the search.
      expect(histories.join('')).toContain('allow_once');
      const haystacks = { logs: gw.logs.join('\n'), rows: rows.join('\n'), histories: histories.join('\n') };
      expect(haystacks.logs).toContain('webhook delivered');
      for (const secret of secrets) {
        const key = secret.slice('whsec_'.length);
        for (const [where, text] of Object.entries(haystacks)) {
          expect(text.includes(key), `secret found in ${where}`).toBe(false);
        }
      }
    });
  });

  describe('GET /v1/audit', () => {
    const at: Record<string, string> = {};
    let outsiderRow: number;
    const paging: number[] = [];

    beforeAll(async () => {
      const append = async (name: string, e: Parameters<typeof appendAudit>[1]) => {
        const id = await appendAudit(gw.pool, e);
        at[name] = (await gw.pool.oneFirst(sql.type(z.object({ at: z.date() }))`SELECT at FROM audit_log WHERE id = ${id}`)).toISOString();
        await sleep(5);
        return id;
      };
      await append('r1', {
        orgId,
        event: 'call.called',
        userId: adminId,
        actorId: ids.adminAgent,
        identityChain: [ids.adminAgent, adminId],
        service: 'github',
        action: 'list_issues',
        permissionKeys: ['github:list_issues:*'],
        httpStatusCode: 200,
        details: { duration_ms: 12 },
      });
      await append('r2', {
        orgId,
        event: 'approval.raised',
        userId: member.userId,
        actorId: ids.memberAgent,
        identityChain: [ids.memberAgent, member.userId],
        service: 'github',
        action: 'create_issue',
        approvalId: '6f1c2a3b-0000-4000-8000-000000000001',
      });
      await append('r3', {
        orgId,
        event: 'call.denied',
        userId: member.userId,
        actorId: ids.memberAgent,
        identityChain: [ids.memberAgent, member.userId],
        service: 'slack',
        action: 'post_message',
        decision: 'deny',
      });
      outsiderRow = await append('r4', { orgId: outsider.orgId, event: 'call.called', userId: outsider.userId, identityChain: [outsider.userId], service: 'github' });
      for (let i = 0; i < 7; i++) {
        paging.push(await appendAudit(gw.pool, { orgId, event: 'execution.executed', userId: adminId, identityChain: [adminId], service: 'paging' }));
      }
    });

    const list = async (token: string, query = '') => {
      const res = await gw.as(token)('GET', `/v1/audit${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body as { entries: any[]; next_cursor: string | null };
    };
    const events = (entries: any[]) => entries.map((e) => `${e.event}/${e.service}/${e.action}`);

    it('shows an admin the org, newest first, in snake_case', async () => {
      const page = await list(tokens.admin, '?limit=200');
      expect(page.next_cursor).toBeNull();
      expect(page.entries).toHaveLength(10);
      const ids_ = page.entries.map((e) => e.id);
      expect([...ids_].sort((a, b) => b - a)).toEqual(ids_);
      expect(ids_).not.toContain(outsiderRow);
      expect(page.entries.every((e) => e.org_id === orgId)).toBe(true);
      const r1 = page.entries.find((e) => e.event === 'call.called');
      expect(r1).toEqual({
        id: expect.any(Number),
        at: at.r1,
        event: 'call.called',
        org_id: orgId,
        user_id: adminId,
        user_name: adminName,
        actor_id: ids.adminAgent,
        actor_name: 'hook-admin-agent',
        identity_chain: [ids.adminAgent, adminId],
        identity_chain_names: ['hook-admin-agent', adminName],
        service: 'github',
        action: 'list_issues',
        permission_keys: ['github:list_issues:*'],
        decision: null,
        call_id: null,
        approval_id: null,
        execution_id: null,
        http_status_code: 200,
        details: { duration_ms: 12 },
        request_id: null,
      });
      // Default page size is 50.
      expect((await list(tokens.admin)).entries).toHaveLength(10);
    });

    it('filters by identity, service, action, event and time', async () => {
      const admin = tokens.admin;
      expect(events((await list(admin, '?service=github')).entries)).toEqual(['approval.raised/github/create_issue', 'call.called/github/list_issues']);
      expect(events((await list(admin, '?service=github&action=create_issue')).entries)).toEqual(['approval.raised/github/create_issue']);
      expect(events((await list(admin, '?event=call.denied')).entries)).toEqual(['call.denied/slack/post_message']);
      expect(events((await list(admin, `?identity=${ids.memberAgent}`)).entries)).toEqual([
        'call.denied/slack/post_message',
        'approval.raised/github/create_issue',
      ]);
      expect((await list(admin, `?identity=${adminId}`)).entries).toHaveLength(8);
      expect((await list(admin, `?identity=${ids.adminAgent}&service=paging`)).entries).toEqual([]);
      // since is inclusive, until exclusive.
      const between = await list(admin, `?since=${encodeURIComponent(at.r2!)}&until=${encodeURIComponent(at.r3!)}`);
      expect(events(between.entries)).toEqual(['approval.raised/github/create_issue']);
      const sinceR3 = await list(admin, `?since=${encodeURIComponent(at.r3!)}&service=slack`);
      expect(sinceR3.entries).toHaveLength(1);
      expect((await list(admin, `?until=${encodeURIComponent(at.r1!)}`)).entries).toEqual([]);
      const offset = new Date(at.r2!).toISOString().replace('Z', '+00:00');
      expect(events((await list(admin, `?since=${encodeURIComponent(offset)}&service=github`)).entries)).toEqual(['approval.raised/github/create_issue']);
    });

    it('paginates with an opaque cursor over descending ids', async () => {
      const seen: number[] = [];
      let cursor: string | null = null;
      const pages: number[] = [];
      do {
        const page: { entries: any[]; next_cursor: string | null } = await list(
          tokens.admin,
          `?event=execution.executed&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        pages.push(page.entries.length);
        seen.push(...page.entries.map((e) => e.id));
        cursor = page.next_cursor;
        if (cursor) expect(cursor).not.toMatch(/^\d+$/);
      } while (cursor);
      expect(pages).toEqual([3, 3, 1]);
      expect(seen).toEqual([...paging].reverse());
      // Exactly a full last page: no dangling cursor.
      const six = await list(tokens.admin, '?event=execution.executed&limit=6');
      const rest = await list(tokens.admin, `?event=execution.executed&limit=1&cursor=${encodeURIComponent(six.next_cursor!)}`);
      expect(rest.entries.map((e) => e.id)).toEqual([paging[0]]);
      expect(rest.next_cursor).toBeNull();
    });

    it('shows members their own rows and agents the rows of their chain', async () => {
      expect(events((await list(tokens.member)).entries)).toEqual(['call.denied/slack/post_message', 'approval.raised/github/create_issue']);
      expect((await list(tokens.member, `?identity=${ids.adminAgent}`)).entries).toEqual([]);
      expect(events((await list(tokens.memberAgent)).entries)).toEqual(['call.denied/slack/post_message', 'approval.raised/github/create_issue']);
      expect(events((await list(tokens.agent)).entries)).toEqual(['call.called/github/list_issues']);
      expect((await list(tokens.agent, '?service=paging')).entries).toEqual([]);
      const outsiderPage = await list(tokens.outsider);
      expect(outsiderPage.entries.map((e) => e.id)).toEqual([outsiderRow]);
    });

    it('rejects unknown and malformed parameters with 400', async () => {
      const garbage = Buffer.from('nope').toString('base64url');
      for (const q of [
        '?foo=1',
        '?limit=0',
        '?limit=201',
        '?limit=abc',
        '?limit=1.5',
        '?identity=not-a-uuid',
        '?since=yesterday',
        '?until=2024-01-01',
        `?cursor=${garbage}`,
        '?cursor=',
        '?service=a&service=b',
        '?since=2024-02-01T00:00:00Z&until=2024-01-01T00:00:00Z',
      ]) {
        const res = await gw.as(tokens.admin)('GET', `/v1/audit${q}`);
        expect(res.status, q).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
      expect((await gw.request('GET', '/v1/audit')).status).toBe(401);
    });

    it('is append-only: UPDATE, DELETE and TRUNCATE fail', async () => {
      await expect(gw.pool.query(sql.unsafe`UPDATE audit_log SET event = 'tampered' WHERE id = ${outsiderRow}`)).rejects.toThrow(/append-only/);
      await expect(gw.pool.query(sql.unsafe`DELETE FROM audit_log WHERE id = ${outsiderRow}`)).rejects.toThrow(/append-only/);
      await expect(gw.pool.query(sql.unsafe`DELETE FROM audit_log`)).rejects.toThrow(/append-only/);
      await expect(gw.pool.query(sql.unsafe`TRUNCATE audit_log`)).rejects.toThrow(/append-only/);
      const n = await gw.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM audit_log WHERE event = 'tampered'`);
      expect(n).toBe(0);
    });
  });
});
