// Teams (issue 29): invitations (expiry, reuse, revocation, bad input, the token never stored),
// roles and the last-admin guard, approvals routed past the user to their approver and then to
// the admins, and deactivation (sessions, keys, pending approvals; nothing deleted).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventService } from '../../server/events/service.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { callWorkflowId } from '../../workflows/definitions.ts';

type As = ReturnType<TestGateway['as']>;

describe('teams: people, invitations, roles, routing, deactivation', () => {
  let gw: TestGateway;
  let up: Upstream;
  let admin: As;
  let adminId: string;

  /** Invites `email` as `role` and joins with a password; answers the session and the member. */
  const join = async (email: string, role: string, extra: Record<string, unknown> = {}) => {
    const inv = await admin('POST', '/v1/org/invitations', { email, role, ...extra });
    expect(inv.status, inv.text).toBe(201);
    const name = email.split('@')[0]!;
    const joined = await gw.request('POST', '/v1/invitations/accept', { body: { token: inv.body.token, name, password: `${name} has a long password` } });
    expect(joined.status, joined.text).toBe(200);
    return { token: joined.body.token as string, id: joined.body.member.id as string, as: gw.as(joined.body.token), inviteToken: inv.body.token as string };
  };

  const agentOf = async (as: As, name: string) => {
    const res = await as('POST', '/v1/identities/agents', { name });
    expect(res.status, res.text).toBe(201);
    return { id: res.body.identity.id as string, key: res.body.key.token as string, call: gw.as(res.body.key.token) };
  };

  const raise = async (agent: { call: As }, name: string): Promise<string> => {
    const res = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status, res.text).toBe(202);
    return res.body.approval_id as string;
  };

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    adminId = (await admin('GET', '/v1/identities/me')).body.identity.id;
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_teams_test' })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  describe('invitations', () => {
    it('invites with a role: the link is shown once, only its hash is stored, accepting signs in with that role', async () => {
      const inv = await admin('POST', '/v1/org/invitations', { email: 'dana@example.test', role: 'approver' });
      expect(inv.status, inv.text).toBe(201);
      expect(inv.body.link).toBe(`${gw.config.publicUrl}/invitation#token=${inv.body.token}`);
      expect(inv.body.token).toMatch(/^gwi_[0-9A-Za-z]{40,60}$/);
      expect(inv.body).toMatchObject({ email_sent: false, email_configured: false, invitation: { email: 'dana@example.test', role: 'approver', status: 'open' } });
      // Default: 7 days.
      const days = (Date.parse(inv.body.invitation.expires_at) - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(6.99);
      expect(days).toBeLessThanOrEqual(7);
      // Never stored, listed or logged in plaintext.
      const dump = await gw.pool.anyFirst(sql.type(z.object({ t: z.string() }))`SELECT row_to_json(i)::text AS t FROM invitations i`);
      expect(dump.join('\n')).not.toContain(inv.body.token);
      const listed = await admin('GET', '/v1/org/invitations');
      expect(listed.text).not.toContain(inv.body.token);
      expect(gw.logs.join('\n')).not.toContain(inv.body.token);

      const preview = await gw.request('POST', '/v1/invitations/lookup', { body: { token: inv.body.token } });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.body).toMatchObject({ email: 'dana@example.test', role: 'approver', org_name: expect.any(String), password_join: true });

      // A short password is refused and nothing is created; the invitation stays open.
      const short = await gw.request('POST', '/v1/invitations/accept', { body: { token: inv.body.token, name: 'Dana', password: 'short' } });
      expect(short.status).toBe(400);
      expect(short.body.error.details.field).toBe('password');
      expect((await admin('GET', '/v1/org/members')).body.members.map((m: { email: string }) => m.email)).not.toContain('dana@example.test');

      const joined = await gw.request('POST', '/v1/invitations/accept', { body: { token: inv.body.token, name: 'Dana', password: 'dana has a long password' } });
      expect(joined.status, joined.text).toBe(200);
      expect(joined.body).toMatchObject({ token_type: 'session', landing: '/approvals', member: { email: 'dana@example.test', role: 'approver', status: 'active' } });
      expect(joined.headers.get('set-cookie')).toContain('gw_session=');
      const me = await gw.as(joined.body.token)('GET', '/v1/identities/me');
      expect(me.body.identity).toMatchObject({ name: 'Dana', role: 'approver' });
      // The password works for sign-in too.
      expect(await gw.login('dana@example.test', 'dana has a long password')).toMatch(/^gws_/);

      // Single use.
      const again = await gw.request('POST', '/v1/invitations/accept', { body: { token: inv.body.token, name: 'Mallory', password: 'mallory has a long password' } });
      expect(again.status).toBe(410);
      expect(again.body.error).toMatchObject({ code: 'invitation_unusable', details: { reason: 'accepted' } });
      const state = (await admin('GET', '/v1/org/invitations')).body.invitations.find((i: { id: string }) => i.id === inv.body.invitation.id);
      expect(state).toMatchObject({ status: 'accepted', accepted_by: joined.body.member.id });
      // The audit names who invited and who joined; never the token or the password.
      const log = await admin('GET', '/v1/audit?limit=200');
      expect(log.body.entries.find((e: any) => e.event === 'member.invited')).toMatchObject({ actor_id: adminId, details: { email: 'dana@example.test', role: 'approver' } });
      expect(log.body.entries.find((e: any) => e.event === 'member.joined')).toMatchObject({ user_id: joined.body.member.id, user_name: 'Dana', details: { via: 'password' } });
      expect(log.text).not.toContain(inv.body.token);
      expect(log.text).not.toContain('dana has a long password');
    });

    it('refuses an expired or revoked invitation with a clear reason', async () => {
      const expiring = await admin('POST', '/v1/org/invitations', { email: 'late@example.test', role: 'member', expires_in_days: 1 });
      expect(expiring.status).toBe(201);
      await gw.pool.query(sql.unsafe`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = ${expiring.body.invitation.id}`);
      const lookedUp = await gw.request('POST', '/v1/invitations/lookup', { body: { token: expiring.body.token } });
      expect(lookedUp.status).toBe(410);
      expect(lookedUp.body.error.details.reason).toBe('expired');
      const accepted = await gw.request('POST', '/v1/invitations/accept', { body: { token: expiring.body.token, name: 'Late', password: 'late has a long password' } });
      expect(accepted.body.error).toMatchObject({ code: 'invitation_unusable', details: { reason: 'expired' } });
      expect(accepted.body.error.message).toContain('expired');

      const revoked = await admin('POST', '/v1/org/invitations', { email: 'gone@example.test', role: 'member' });
      const r = await admin('POST', `/v1/org/invitations/${revoked.body.invitation.id}/revoke`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.status).toBe('revoked');
      const lookup = await gw.request('POST', '/v1/invitations/lookup', { body: { token: revoked.body.token } });
      expect(lookup.status).toBe(410);
      expect(lookup.body.error.details.reason).toBe('revoked');
      expect((await admin('POST', `/v1/org/invitations/${revoked.body.invitation.id}/revoke`)).status).toBe(410);
      // A revoked address may be invited again.
      expect((await admin('POST', '/v1/org/invitations', { email: 'gone@example.test', role: 'member' })).status).toBe(201);
      // An unknown token is not found.
      expect((await gw.request('POST', '/v1/invitations/lookup', { body: { token: 'gwi_000000000000000000000000000000000000000000' } })).status).toBe(404);
    });

    it('refuses bad input, duplicates and non-admins, changing nothing', async () => {
      const before = await gw.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM invitations`);
      const bad: [unknown, number][] = [
        [{ email: 'x@example.test', role: 'owner' }, 400],
        [{ email: 'x@example.test', role: 'member', extra: 1 }, 400],
        [{ email: 'not an email', role: 'member' }, 400],
        [{ email: 'x@example.test', role: 'member', expires_in_days: 31 }, 400],
        [{ email: 'x@example.test', role: 'member', approver_id: '00000000-0000-4000-8000-000000000000' }, 400],
        [{ email: 'admin@example.test', role: 'member' }, 409],
        [{ email: 'gone@example.test', role: 'member' }, 409],
      ];
      for (const [body, status] of bad) {
        const res = await admin('POST', '/v1/org/invitations', body);
        expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(status);
      }
      const dana = gw.as(await gw.login('dana@example.test', 'dana has a long password'));
      expect((await dana('POST', '/v1/org/invitations', { email: 'x@example.test', role: 'member' })).status).toBe(403);
      expect((await dana('GET', '/v1/org/invitations')).status).toBe(403);
      const after = await gw.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM invitations`);
      expect(after).toBe(before);
    });
  });

  describe('roles', () => {
    it('lists people with role, last sign-in, agents and pending approvals; admins change roles; the last admin stays', async () => {
      const list = await admin('GET', '/v1/org/members');
      expect(list.status).toBe(200);
      const me = list.body.members.find((m: { id: string }) => m.id === adminId);
      expect(me).toMatchObject({ role: 'admin', status: 'active', agent_count: 0, pending_approvals: 0 });
      expect(me.last_sign_in_at).not.toBeNull();

      const demoteSelf = await admin('PATCH', `/v1/org/members/${adminId}`, { role: 'member' });
      expect(demoteSelf.status).toBe(409);
      expect(demoteSelf.body.error.code).toBe('last_admin');
      expect((await admin('POST', `/v1/org/members/${adminId}/deactivate`)).status).toBe(403);

      const kim = await join('kim@example.test', 'member');
      // A member may list people but change nothing.
      expect((await kim.as('GET', '/v1/org/members')).status).toBe(200);
      expect((await kim.as('PATCH', `/v1/org/members/${kim.id}`, { role: 'admin' })).status).toBe(403);
      expect((await kim.as('POST', `/v1/org/members/${adminId}/deactivate`)).status).toBe(403);
      // Bad input.
      expect((await admin('PATCH', `/v1/org/members/${kim.id}`, {})).status).toBe(400);
      expect((await admin('PATCH', `/v1/org/members/${kim.id}`, { role: 'root' })).status).toBe(400);
      expect((await admin('PATCH', `/v1/org/members/${kim.id}`, { approver_id: kim.id })).status).toBe(400);
      // A member cannot be named an approver until they have the role.
      const danaId = (await admin('GET', '/v1/org/members')).body.members.find((m: { email: string }) => m.email === 'dana@example.test').id;
      const asApprover = await admin('PATCH', `/v1/org/members/${danaId}`, { approver_id: kim.id });
      expect(asApprover.status).toBe(400);
      expect(asApprover.body.error.message).toContain('approver');

      // With a second admin, the first may step down, and the role takes effect on the next request.
      expect((await admin('PATCH', `/v1/org/members/${kim.id}`, { role: 'admin' })).body.role).toBe('admin');
      expect((await admin('PATCH', `/v1/org/members/${adminId}`, { role: 'member' })).body.role).toBe('member');
      expect((await admin('GET', '/v1/org/invitations')).status).toBe(403);
      expect((await kim.as('PATCH', `/v1/org/members/${adminId}`, { role: 'admin' })).status).toBe(200);
      // Now the other admin cannot be demoted only if they are the last: they are not.
      expect((await admin('PATCH', `/v1/org/members/${kim.id}`, { role: 'member' })).body.role).toBe('member');
      const changes = (await admin('GET', '/v1/audit?event=member.updated')).body.entries.filter((e: any) => e.user_id === kim.id);
      expect(changes.map((e: any) => e.details.role)).toEqual([{ from: 'admin', to: 'member' }, { from: 'member', to: 'admin' }]);
      expect((await admin('GET', '/v1/org/invitations')).status).toBe(200);
    });
  });

  describe('approvals go to the right people', () => {
    it('bubbles from the user to their approver, who sees why it is theirs and allows it; the upstream gets one request', async () => {
      const sam = await join('sam@example.test', 'member');
      const danaId = (await admin('GET', '/v1/org/members')).body.members.find((m: { email: string }) => m.email === 'dana@example.test').id;
      const dana = gw.as(await gw.login('dana@example.test', 'dana has a long password'));
      expect((await admin('PATCH', `/v1/org/members/${sam.id}`, { approver_id: danaId })).body.approver_id).toBe(danaId);
      const bot = await agentOf(sam.as, 'sam bot');
      const id = await raise(bot, 'routed-1');

      // Before the bubble: Sam's, not Dana's.
      expect((await sam.as('GET', `/v1/approvals/${id}`)).body.routing).toEqual({ stage: 'chain', why: null });
      expect((await dana('GET', `/v1/approvals/${id}`)).status).toBe(404);
      expect((await dana('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' })).body.error.code).toBe('not_in_your_chain');
      expect((await admin('GET', '/v1/org/members')).body.members.find((m: { id: string }) => m.id === sam.id)).toMatchObject({ agent_count: 1, pending_approvals: 1 });

      const bubbled = await sam.as('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' });
      expect(bubbled.status, bubbled.text).toBe(200);
      expect(bubbled.body.status).toBe('bubbled');

      const inbox = await dana('GET', '/v1/approvals?scope=actionable');
      const mine = inbox.body.approvals.find((a: { id: string }) => a.id === id);
      expect(mine).toMatchObject({ status: 'bubbled', resolver_id: danaId, routing: { stage: 'approver', why: "bubbled from sam: you are sam's approver" } });
      // Dana's event stream got it.
      const events = await gw.pool.anyFirst(sql.type(z.object({ type: z.string() }))`
        SELECT type FROM user_events WHERE user_id = ${danaId} AND approval_id = ${id}`);
      expect(events).toContain('approval.bubbled');
      const audit = await admin('GET', `/v1/audit?event=approval.bubbled`);
      expect(audit.body.entries.some((e: any) => e.approval_id === id && e.details.to === danaId && e.actor_id === sam.id)).toBe(true);

      const allowed = await dana('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' });
      expect(allowed.status, allowed.text).toBe(200);
      expect(allowed.body.status).toBe('allowed');
      await until(async () => (await sam.as('GET', `/v1/approvals/${id}`)).body.execution?.status, (s) => s === 'executed');
      expect(up.requests.filter((r) => JSON.stringify(r.body ?? '').includes('routed-1'))).toHaveLength(1);
    });

    it('bubbles from the approver to the admins; without an approver straight to the admins; nobody above the admins', async () => {
      const sam = gw.as(await gw.login('sam@example.test', 'sam has a long password'));
      const dana = gw.as(await gw.login('dana@example.test', 'dana has a long password'));
      const bot = await agentOf(sam, 'sam bot 2');
      const id = await raise(bot, 'routed-2');
      expect((await sam('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' })).status).toBe(200);
      const up2 = await dana('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' });
      expect(up2.status, up2.text).toBe(200);
      // Dana no longer decides it; the admins do, and see why.
      expect((await dana('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny' })).body.error.code).toBe('not_in_your_chain');
      const assigned = (await admin('GET', '/v1/approvals?scope=assigned')).body.approvals.find((a: { id: string }) => a.id === id);
      expect(assigned.routing).toEqual({ stage: 'admins', why: "bubbled from Dana: it went to the org's admins" });
      const top = await admin('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' });
      expect(top.status).toBe(409);
      expect((await admin('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny', reason: 'not today' })).body.status).toBe('denied');

      const lee = await join('lee@example.test', 'member');
      const leeBot = await agentOf(lee.as, 'lee bot');
      const other = await raise(leeBot, 'routed-3');
      expect((await lee.as('POST', `/v1/approvals/${other}/resolve`, { decision: 'bubble' })).status).toBe(200);
      expect((await admin('GET', `/v1/approvals/${other}`)).body.routing.stage).toBe('admins');
      // Dana is nobody's approver here: not hers to see.
      expect((await dana('GET', `/v1/approvals/${other}`)).status).toBe(404);
    });
  });

  describe('the org\'s auto-bubble', () => {
    it('goes on past the user by itself: to their approver, then to the admins, then stops (workflow timers)', async () => {
      expect((await admin('PATCH', '/v1/org/settings', { approval_auto_bubble_seconds: 1 })).status).toBe(200);
      try {
        const sam = gw.as(await gw.login('sam@example.test', 'sam has a long password'));
        const members = (await admin('GET', '/v1/org/members')).body.members as { id: string; email: string }[];
        const danaId = members.find((m) => m.email === 'dana@example.test')!.id;
        const samId = members.find((m) => m.email === 'sam@example.test')!.id;
        expect((await admin('PATCH', `/v1/org/members/${samId}`, { approver_id: danaId })).status).toBe(200);
        const bot = await agentOf(sam, 'sam auto bot');
        const id = await raise(bot, 'auto-1');
        const atApprover = await until(async () => (await admin('GET', `/v1/approvals/${id}`)).body, (a) => a.routing.stage !== 'chain', 30_000);
        expect(atApprover).toMatchObject({ status: 'bubbled', resolver_id: danaId, routing: { stage: 'approver' } });
        const atAdmins = await until(async () => (await admin('GET', `/v1/approvals/${id}`)).body, (a) => a.routing.stage === 'admins', 30_000);
        expect(atAdmins.routing.why).toBe("bubbled from Dana: it went to the org's admins");
        const bubbles = (await admin('GET', `/v1/audit?event=approval.bubbled`)).body.entries.filter((e: any) => e.approval_id === id);
        expect(bubbles.map((e: any) => [e.actor_id, e.details.stage, e.details.automatic])).toEqual([
          [null, 'admins', true],
          [null, 'approver', true],
        ]);
        // Above the admins nobody: it stays there, and the workflow still takes the admin's decision.
        await new Promise((r) => setTimeout(r, 2500));
        expect((await admin('GET', '/v1/audit?event=approval.bubbled')).body.entries.filter((e: any) => e.approval_id === id)).toHaveLength(2);
        const denied = await admin('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny', reason: 'auto-bubbled to me' });
        expect(denied.status, denied.text).toBe(200);
        expect(denied.body.status).toBe('denied');
        const callId = await gw.pool.oneFirst(sql.type(z.object({ call_id: z.string() }))`SELECT call_id FROM approvals WHERE id = ${id}`);
        const handle = gw.temporal.workflow.getHandle(callWorkflowId(callId));
        await handle.result();
        if (process.env.RECORD_HISTORIES) {
          const history = await handle.fetchHistory();
          await writeFile(
            path.resolve(import.meta.dirname, '..', 'fixtures', 'histories', `${process.env.RECORD_HISTORIES}-auto-bubble-past-user.json`),
            JSON.stringify(temporal.api.history.v1.History.fromObject(history as never).toJSON()),
          );
        }
      } finally {
        expect((await admin('PATCH', '/v1/org/settings', { approval_auto_bubble_seconds: null })).status).toBe(200);
      }
    });
  });

  describe('event streams follow roles and approvers (issue 4)', () => {
    /** Whether the stream ended by itself within a bound (generous: the machine may be loaded). */
    const endsWithin = (s: SseStream, ms: number) => Promise.race([s.ended.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
    const events = (token: string, lastId?: string) => openSse(`${gw.url}/v1/events${lastId ? `?last_event_id=${lastId}` : ''}`, { authorization: `Bearer ${token}` });
    const latestEventId = async () => String(await gw.pool.oneFirst(sql.type(z.object({ id: z.string() }))`SELECT COALESCE(max(id), 0)::text AS id FROM user_events`));

    it('a demoted admin’s open stream stops carrying the org’s approvals at once, and a resume carries only their own', async () => {
      const ann = await join('ann@example.test', 'admin');
      const pat = await join('pat@example.test', 'member');
      const patBot = await agentOf(pat.as, 'pat bot');
      const control = await events(gw.adminToken);
      const annStream = await events(ann.token);
      expect(annStream.status).toBe(200);
      const before = await latestEventId();
      const seen = await raise(patBot, 'seen-by-ann-the-admin');
      await annStream.waitFor((e) => e.event === 'approval.raised' && e.data.approval_id === seen);

      expect((await admin('PATCH', `/v1/org/members/${ann.id}`, { role: 'member' })).status).toBe(200);
      const hidden = await raise(patBot, 'not-for-ann-the-member');
      await control.waitFor((e) => e.event === 'approval.raised' && e.data.approval_id === hidden);
      const denied = await admin('POST', `/v1/approvals/${hidden}/resolve`, { decision: 'deny', reason: 'a reason ann must not read' });
      expect(denied.status, denied.text).toBe(200);
      await control.waitFor((e) => e.event === 'approval.resolved' && e.data.approval_id === hidden);
      // Her standing changed: the stream ended (its client reconnects in her new scope), carrying nothing of Pat's since.
      expect(await endsWithin(annStream, 10_000)).toBe(true);
      expect(annStream.events.filter((e) => e.data?.approval_id === hidden)).toEqual([]);
      expect((await ann.as('GET', `/v1/approvals/${hidden}`)).status).toBe(404);

      // Resuming from before the demotion replays none of Pat's events, only what is hers.
      const resumed = await events(ann.token, before);
      await resumed.waitFor((e) => e.event === 'ready');
      expect(resumed.events.filter((e) => e.data?.approval_id === seen || e.data?.approval_id === hidden)).toEqual([]);
      resumed.close();
      control.close();
    });

    it('each delivery re-reads the viewer: an event the stream was opened for is not sent once the role has changed', async () => {
      const kit = await join('kit@example.test', 'admin');
      const orgId = (await admin('GET', '/v1/identities/me')).body.org.id as string;
      const kitBot = await agentOf(kit.as, 'kit bot');
      const theirs = await raise(await agentOf(admin, 'admin bot'), 'judged-at-delivery');
      const own = await raise(kitBot, 'kits-own');
      const stored = await gw.pool.any(sql.type(z.object({ id: z.string(), org_id: z.string(), user_id: z.string(), type: z.string(), data: z.any() }))`
        SELECT id::text AS id, org_id, user_id, type, data FROM user_events WHERE approval_id IN (${theirs}, ${own}) AND type = 'approval.raised' ORDER BY id`);
      expect(stored).toHaveLength(2);
      const service = createEventService({ pool: gw.pool });
      const viewer = { orgId, userId: kit.id };
      expect((await service.deliverable(viewer, stored as never)).events).toHaveLength(2);
      expect((await admin('PATCH', `/v1/org/members/${kit.id}`, { role: 'member' })).status).toBe(200);
      const judged = await service.deliverable(viewer, stored as never);
      expect(judged.role).toBe('member');
      expect(judged.events.map((e) => e.data.approval_id)).toEqual([own]);
      expect((await admin('POST', `/v1/org/members/${kit.id}/deactivate`)).status).toBe(200);
      expect((await service.deliverable(viewer, stored as never)).events).toEqual([]);
    });

    it('someone removed as a person’s approver no longer sees (in the inbox or the stream) what waited on them for that person', async () => {
      const val = await join('val@example.test', 'approver');
      const max = await join('max@example.test', 'member', { approver_id: val.id });
      const maxBot = await agentOf(max.as, 'max bot');
      const before = await latestEventId();
      const id = await raise(maxBot, 'waits-on-val');
      expect((await max.as('POST', `/v1/approvals/${id}/resolve`, { decision: 'bubble' })).status).toBe(200);
      const valStream = await events(val.token, before);
      await valStream.waitFor((e) => e.event === 'approval.bubbled' && e.data.approval_id === id);
      valStream.close();

      expect((await admin('PATCH', `/v1/org/members/${max.id}`, { approver_id: null })).status).toBe(200);
      // It went on to the admins, as when an approver is deactivated.
      expect((await admin('GET', `/v1/approvals/${id}`)).body.routing.stage).toBe('admins');
      expect((await val.as('GET', `/v1/approvals/${id}`)).status).toBe(404);
      const resumed = await events(val.token, before);
      await resumed.waitFor((e) => e.event === 'ready');
      expect(resumed.events.filter((e) => e.data?.approval_id === id)).toEqual([]);
      resumed.close();
    });
  });

  describe('deactivation', () => {
    it('ends sessions, keys and pending approvals at once; moves what waited on them on; deletes nothing', async () => {
      const ivy = await join('ivy@example.test', 'approver');
      const ray = await join('ray@example.test', 'member', { approver_id: ivy.id });
      const rayBot = await agentOf(ray.as, 'ray bot');
      const waiting = await raise(rayBot, 'waits-on-ivy');
      expect((await ray.as('POST', `/v1/approvals/${waiting}/resolve`, { decision: 'bubble' })).status).toBe(200);
      expect((await ivy.as('GET', `/v1/approvals/${waiting}`)).body.routing.stage).toBe('approver');
      const ivyBot = await agentOf(ivy.as, 'ivy bot');
      const own = await raise(ivyBot, 'ivy-own');

      const res = await admin('POST', `/v1/org/members/${ivy.id}/deactivate`);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ status: 'deactivated', deactivated_at: expect.any(String) });
      expect((await ivy.as('GET', '/v1/identities/me')).status).toBe(401);
      expect((await ivyBot.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'after' } })).status).toBe(401);
      await expect(gw.login('ivy@example.test', 'ivy has a long password')).rejects.toThrow();
      // Her own pending approval is cancelled with the reason.
      const cancelled = await until(async () => (await admin('GET', `/v1/approvals/${own}`)).body, (a) => a.status === 'cancelled');
      expect(cancelled.reason).toContain('ivy was deactivated');
      // What waited on her as an approver went on to the admins.
      expect((await admin('GET', `/v1/approvals/${waiting}`)).body.routing.stage).toBe('admins');
      // Nothing deleted: still listed, and the audit names her.
      const listed = (await admin('GET', '/v1/org/members')).body.members.find((m: { id: string }) => m.id === ivy.id);
      expect(listed).toMatchObject({ name: 'ivy', status: 'deactivated' });
      const who = await admin('GET', '/v1/audit?event=member.deactivated');
      expect(who.body.entries[0]).toMatchObject({ user_id: ivy.id, user_name: 'ivy', actor_id: adminId });
      const audit = await admin('GET', `/v1/audit?identity=${ivyBot.id}`);
      expect(audit.body.entries.length).toBeGreaterThan(0);
      expect(audit.body.entries.every((e: any) => e.user_name === 'ivy')).toBe(true);
      // Twice: a conflict; and a deactivated person cannot be named an approver.
      expect((await admin('POST', `/v1/org/members/${ivy.id}/deactivate`)).status).toBe(409);
      expect((await admin('PATCH', `/v1/org/members/${ray.id}`, { approver_id: ivy.id })).status).toBe(400);
    });
  });
});
