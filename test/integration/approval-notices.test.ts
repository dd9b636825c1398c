// Approvals reach people in Slack and email (issue 30): a loopback fake of Slack's Web API that
// sends signed interactions as Slack does, a real SMTP server capturing mail, real Chromium for
// the email link's confirmation page; reminders and escalation as the call workflow's timers.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { runGatewayCli } from '../support/cli.ts';
import { startFakeSlack, type FakeSlack, type SlackMessage } from '../support/fake-slack.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { startReceiver } from '../support/receiver.ts';
import { openSse } from '../support/sse.ts';
import { seedUser } from '../support/seed.ts';
import { startSmtpCapture, type CapturedMail, type SmtpCapture } from '../support/smtp.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

// SCREENSHOTS=1 writes them next to the dashboard's (docs/screenshots); otherwise to a temp dir.
const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-notice-screenshots');

describe('approvals in Slack and email', () => {
  let gw: TestGateway;
  let up: Upstream;
  let slack: FakeSlack;
  let smtp: SmtpCapture;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  let browser: Browser;
  let admin: ReturnType<TestGateway['as']>;
  let ada: ReturnType<TestGateway['as']>;
  let adaId: string;
  let adaToken: string;
  let adaSlack: string;
  let mallorySlack: string;
  let strangerSlack: string;
  type Agent = { id: string; call: ReturnType<TestGateway['as']> };
  let agent: Agent;
  let slackChannelId: string;
  let emailChannelId: string;

  const makeAgent = async (body: Record<string, unknown>): Promise<Agent> => {
    const res = await ada('POST', '/v1/identities/agents', body);
    expect(res.status, res.text).toBe(201);
    return { id: res.body.identity.id as string, call: gw.as(res.body.key.token) };
  };
  const raise = async (a: Agent, name: string): Promise<{ id: string; at: number }> => {
    const res = await a.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status, res.text).toBe(202);
    return { id: res.body.approval_id as string, at: Date.now() };
  };
  const approvalOf = (m: SlackMessage) => m.blocks.find((b) => b.type === 'actions')?.elements[0]?.value as string | undefined;
  const slackFor = (approvalId: string, channel?: string) => slack.messages.filter((m) => approvalOf(m) === approvalId && (!channel || m.channel === channel));
  const mailFor = (approvalId: string): CapturedMail[] => smtp.messages.filter((m) => m.text.includes(`/approvals/${approvalId}`));
  const linkIn = (mail: CapturedMail, label: 'Review and decide' | 'Deny') => new RegExp(`^${label}: (\\S+)$`, 'm').exec(mail.text)![1]!;
  const deliveries = async (approvalId: string) => (await ada('GET', `/v1/approvals/${approvalId}/notifications`)).body.deliveries as { kind: string; status: string; purpose: string; error: string | null; attempts: number; target: string }[];

  beforeAll(async () => {
    [up, slack, smtp, hooks] = await Promise.all([startUpstream(), startFakeSlack(), startSmtpCapture(), startReceiver()]);
    gw = await startTestGateway({
      // The email links carry PUBLIC_URL: the gateway's real address.
      realPublicUrl: true,
      env: { GATEWAY_SLACK_API_URL: slack.apiUrl, GATEWAY_NOTICE_RETRY_INITIAL_MS: '100', GATEWAY_NOTICE_MAX_ATTEMPTS: '3' },
    });
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const a = await seedUser(gw.databaseUrl, { orgId, email: 'ada@example.test' });
    await seedUser(gw.databaseUrl, { orgId, email: 'mallory@example.test' });
    adaId = a.userId;
    adaToken = await gw.login(a.email, a.password);
    ada = gw.as(adaToken);
    adaSlack = slack.addUser('ada@example.test');
    mallorySlack = slack.addUser('mallory@example.test');
    strangerSlack = slack.addUser('stranger@elsewhere.test');
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await ada('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_notices_test' })).status).toBe(201);
    expect((await admin('PATCH', '/v1/org/settings', { max_pending_per_agent: 100 })).status).toBe(200);
    expect((await admin('POST', '/v1/webhooks', { url: `${hooks.url}/hook`, events: ['notification.delivered', 'notification.failed'] })).status).toBe(201);
    const s = await admin('POST', '/v1/notification-channels', {
      kind: 'slack',
      name: 'Slack',
      slack: { channel: 'C0APPROVALS', dm_resolver: true, bot_token: slack.botToken, signing_secret: slack.signingSecret },
    });
    expect(s.status, s.text).toBe(201);
    slackChannelId = s.body.id;
    const e = await admin('POST', '/v1/notification-channels', {
      kind: 'email',
      name: 'Email',
      email: { host: smtp.host, port: smtp.port, starttls: false, user: smtp.user, password: smtp.password, from: 'gateway@example.test' },
    });
    expect(e.status, e.text).toBe(201);
    emailChannelId = e.body.id;
    agent = await makeAgent({ name: 'ops-bot' });
  });
  afterAll(async () => {
    // `RECORD_HISTORIES=current npx vitest run test/integration/approval-notices.test.ts` writes
    // call histories with reminder timers for replay-recorded.test.ts.
    if (process.env.RECORD_HISTORIES && gw) await recordHistories(process.env.RECORD_HISTORIES);
    await browser?.close();
    await gw?.stop();
    await Promise.all([up?.close(), slack?.close(), smtp?.close(), hooks?.close()]);
  });

  it('manages channels strictly: secrets sealed and never returned, bad input refused with nothing changed, admins only', async () => {
    const list = await admin('GET', '/v1/notification-channels');
    expect(list.status).toBe(200);
    expect(list.body.channels.map((c: { kind: string }) => c.kind)).toEqual(['slack', 'email']);
    expect(list.body.channels[0].config).toEqual({ channel: 'C0APPROVALS', dm_resolver: true });
    expect(list.body.channels[1].config).toMatchObject({ host: smtp.host, port: smtp.port, starttls: false, user: smtp.user });
    for (const secret of [slack.botToken, slack.signingSecret, smtp.password]) expect(list.text).not.toContain(secret);

    const bad = [
      { kind: 'slack', name: 'x', slack: { bot_token: 'not-a-token', signing_secret: slack.signingSecret } },
      { kind: 'slack', name: 'x', slack: { bot_token: slack.botToken, signing_secret: slack.signingSecret, extra: 1 } },
      { kind: 'email', name: 'x', email: { host: 'smtp.example.test', port: 70000, starttls: true, from: 'a@b.test' } },
      { kind: 'fax', name: 'x' },
    ];
    for (const body of bad) {
      const res = await admin('POST', '/v1/notification-channels', body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await admin('POST', '/v1/notification-channels', { kind: 'email', name: 'Email', email: { host: 'h', port: 25, starttls: false, from: 'a@b.test' } })).status).toBe(409);
    expect((await ada('GET', '/v1/notification-channels')).status).toBe(403);
    expect((await agent.call('GET', '/v1/notification-channels')).status).toBe(403);
    expect((await admin('GET', '/v1/notification-channels')).body.channels).toHaveLength(2);
    // Rules naming an unknown channel or a malformed condition: refused, the rules unchanged.
    expect((await admin('PUT', '/v1/notification-rules', { rules: [{ name: 'r', match: {}, routes: [{ channel_id: randomUUID(), to: 'resolver' }] }] })).status).toBe(400);
    expect((await admin('PUT', '/v1/notification-rules', { rules: [{ name: 'r', match: { risk: ['critical'] }, routes: [{ channel_id: emailChannelId, to: 'resolver' }] }] })).status).toBe(400);
    expect((await admin('PUT', '/v1/notification-reminders', { reminders: ['tomorrow'] })).status).toBe(400);
    expect((await admin('GET', '/v1/notification-rules')).body.rules).toEqual([]);
    expect((await admin('GET', '/v1/notification-reminders')).body.reminders).toEqual(['half', '2m']);
  });

  it('announces a raised approval in Slack (channel and DM) and by email within 2 s; Allow in Slack executes once and updates the message', async () => {
    const { id, at } = await raise(agent, 'allowed-from-slack');
    const arrived = await until(async () => ({ slack: slackFor(id).length, mail: mailFor(id).length }), (v) => v.slack >= 2 && v.mail >= 1, 5_000);
    expect(arrived).toEqual({ slack: 2, mail: 1 });
    expect(Date.now() - at).toBeLessThan(2_000);
    const [inChannel] = slackFor(id, 'C0APPROVALS');
    const dm = slackFor(id).find((m) => m.channel === `D${adaSlack.slice(1)}`);
    expect(inChannel && dm).toBeTruthy();
    const text = JSON.stringify(inChannel!.blocks);
    expect(text).toContain('Approval needed (');
    expect(text).toContain('Requested by:* ada → ops-bot');
    expect(text).toContain(`POST ${up.url}`);
    expect(inChannel!.blocks.at(-1).elements.map((e: { action_id: string }) => e.action_id)).toEqual(['allow_once', 'deny', 'open']);
    const mail = mailFor(id)[0]!;
    expect(mail.to).toEqual(['ada@example.test']);
    expect(linkIn(mail, 'Review and decide')).toMatch(/\/v1\/integrations\/email\/decisions\//);

    const before = up.requests.length;
    const pressed = await slack.press(gw.url, { userId: adaSlack, message: inChannel!, actionId: 'allow_once' });
    expect(pressed.status, JSON.stringify(pressed.body)).toBe(200);
    await until(async () => (await ada('GET', `/v1/approvals/${id}`)).body, (a) => a.status === 'allowed' && a.execution?.status === 'executed');
    expect(up.requests.length - before).toBe(1);
    // Both messages show the outcome in place: who allowed it, and that it ran.
    const updated = await until(async () => inChannel!.updates.at(-1)?.text ?? '', (t) => /executed/.test(t));
    expect(updated).toMatch(/^Allowed once by ada — executed \(HTTP 2\d\d\)$/);
    expect(JSON.stringify(inChannel!.updates.at(-1)!.blocks)).not.toContain('allow_once');
    await until(async () => dm!.updates.length, (n) => n > 0);
    // Pressing again: nothing runs twice; the presser is told it is decided.
    await slack.press(gw.url, { userId: adaSlack, message: inChannel!, actionId: 'allow_once' });
    expect(slack.responses.at(-1)).toMatchObject({ response_type: 'ephemeral', text: expect.stringMatching(/can no longer be decided/) });
    expect(up.requests.length - before).toBe(1);
    const audit = (await admin('GET', '/v1/audit?event=approval.decided_in_slack')).body.entries;
    expect(audit.some((e: { approval_id: string; actor_id: string }) => e.approval_id === id && e.actor_id === adaId)).toBe(true);
    const ds = await deliveries(id);
    expect(ds.map((d) => `${d.kind}:${d.status}`).sort()).toEqual(['email:delivered', 'slack:delivered', 'slack:delivered']);
    // The same lifecycle reaches webhooks.
    await until(async () => hooks.received.filter((r) => r.body.includes(id) && r.body.includes('notification.delivered')).length, (n) => n === 3);
  });

  it('refuses forged, replayed and stale interactions, and tells a Slack user without authority they cannot decide', async () => {
    const { id } = await raise(agent, 'refused-in-slack');
    const message = (await until(async () => slackFor(id, 'C0APPROVALS'), (m) => m.length === 1))[0]!;
    const payload = {
      type: 'block_actions',
      user: { id: adaSlack },
      trigger_id: 't',
      response_url: 'http://127.0.0.1:9/none',
      actions: [{ action_id: 'allow_once', value: id, type: 'button' }],
    };
    const forged = await slack.interact(gw.url, payload, { signature: `v0=${'0'.repeat(64)}` });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('unauthenticated');
    const stale = await slack.interact(gw.url, payload, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(stale.status).toBe(401);
    // A captured request replayed with its own (valid) signature after 5 minutes is stale too;
    // one whose body was altered no longer matches its signature.
    const sent = await slack.interact(gw.url, { ...payload, actions: [{ action_id: 'open', value: id }] });
    expect(sent.status).toBe(200);
    const tampered = await fetch(`${gw.url}/v1/integrations/slack/interactions`, { method: 'POST', headers: sent.raw.headers, body: sent.raw.body.replace('open', 'allow_once') });
    expect(tampered.status).toBe(401);
    const noHeaders = await fetch(`${gw.url}/v1/integrations/slack/interactions`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: sent.raw.body });
    expect(noHeaders.status).toBe(401);

    // An admin of another org, in the same Slack workspace: no authority here either.
    await seedUser(gw.databaseUrl, { email: 'admin@other-org.test', role: 'admin' });
    const otherAdminSlack = slack.addUser('admin@other-org.test');
    for (const userId of [mallorySlack, strangerSlack, otherAdminSlack]) {
      const r = await slack.press(gw.url, { userId, message, actionId: 'allow_once' });
      expect(r.status).toBe(200);
      expect(slack.responses.at(-1)).toEqual({ response_type: 'ephemeral', replace_original: false, text: 'You cannot decide this approval.' });
    }
    expect((await slack.press(gw.url, { userId: mallorySlack, message, actionId: 'deny' })).status).toBe(200);
    expect(slack.views.filter((v) => v.view.private_metadata.includes(id))).toHaveLength(0);
    expect((await ada('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
    expect(message.updates).toHaveLength(0);
  });

  it('Deny in Slack asks for a reason in a modal, then denies with it and updates the message', async () => {
    const { id } = await raise(agent, 'denied-in-slack');
    const message = (await until(async () => slackFor(id, 'C0APPROVALS'), (m) => m.length === 1))[0]!;
    expect((await slack.press(gw.url, { userId: adaSlack, message, actionId: 'deny' })).status).toBe(200);
    const view = slack.views.find((v) => v.view.private_metadata.includes(id))!.view;
    expect(view).toMatchObject({ type: 'modal', callback_id: 'deny_reason' });
    expect((await ada('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
    const empty = await slack.submitDeny(gw.url, { userId: adaSlack, view, reason: '  ' });
    expect(empty.body).toEqual({ response_action: 'errors', errors: { reason: 'Say why the request is denied.' } });
    const done = await slack.submitDeny(gw.url, { userId: adaSlack, view, reason: 'not on a Friday' });
    expect(done.body).toEqual({ response_action: 'clear' });
    expect((await ada('GET', `/v1/approvals/${id}`)).body).toMatchObject({ status: 'denied', reason: 'not on a Friday', resolved_by: adaId });
    await until(async () => message.updates.at(-1)?.text, (t) => t === 'Denied by ada: not on a Friday');
  });

  it('the email links open a confirmation page in Chromium (a GET never decides); Deny records the reason; a link works once and not after expiry', async () => {
    const { id } = await raise(agent, 'denied-by-email');
    const mail = (await until(async () => mailFor(id), (m) => m.length === 1))[0]!;
    const denyLink = linkIn(mail, 'Deny');
    browser = await launchChromium();
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    await page.goto(denyLink);
    await page.getByRole('heading', { name: 'Deny this request?' }).waitFor();
    expect(await page.getByText('Requested by: ada → ops-bot').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'email-deny-confirmation.png'), fullPage: true });
    // Opening the page decided nothing.
    expect((await ada('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
    await page.getByLabel('Reason').fill('the invoice is a duplicate');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Denied' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'email-denied.png'), fullPage: true });
    expect((await ada('GET', `/v1/approvals/${id}`)).body).toMatchObject({ status: 'denied', reason: 'the invoice is a duplicate', resolved_by: adaId });
    const audit = (await admin('GET', '/v1/audit?event=approval.decided_by_email')).body.entries;
    expect(audit.find((e: { approval_id: string }) => e.approval_id === id)).toMatchObject({ actor_id: adaId, details: { via: 'decided by email', reason: 'the invoice is a duplicate' } });

    // Used once: the same link, and the approval's other link, are refused.
    for (const link of [denyLink, linkIn(mail, 'Review and decide')]) {
      const again = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'reason=again' });
      expect(again.status).toBe(410);
      expect(await again.text()).toContain('already used');
    }
    // A link whose signature does not bind what it claims: refused.
    const forged = denyLink.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await fetch(forged)).status).toBe(404);

    // Expiry: the link dies with its approval.
    expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 3 })).status).toBe(200);
    try {
      const short = await raise(agent, 'expires-by-email');
      const reviewLink = linkIn((await until(async () => mailFor(short.id), (m) => m.length >= 1))[0]!, 'Review and decide');
      await page.goto(reviewLink);
      await page.getByRole('heading', { name: 'Allow this request once?' }).waitFor();
      await until(async () => (await ada('GET', `/v1/approvals/${short.id}`)).body.status, (s) => s === 'expired', 10_000);
      await page.getByRole('button', { name: 'Allow once' }).click();
      await page.getByRole('heading', { name: 'Link expired' }).waitFor();
      expect((await ada('GET', `/v1/approvals/${short.id}`)).body.status).toBe('expired');
      // Its Slack message says so in place.
      const [posted] = slackFor(short.id, 'C0APPROVALS');
      await until(async () => posted!.updates.at(-1)?.text, (t) => t === 'Expired without a decision');
    } finally {
      expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 3600 })).status).toBe(200);
    }
    await context.close();
  });

  it('"Review and decide" from an email allows once as its person, without a session, and runs the call once', async () => {
    const { id } = await raise(agent, 'allowed-by-email');
    const review = linkIn((await until(async () => mailFor(id), (m) => m.length === 1))[0]!, 'Review and decide');
    const before = up.requests.length;
    const page = await fetch(review);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('Allow this request once?');
    expect((await ada('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
    const decided = await fetch(review, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(decided.status).toBe(200);
    expect(await decided.text()).toContain('Allowed once by ada');
    await until(async () => (await ada('GET', `/v1/approvals/${id}`)).body, (a) => a.status === 'allowed' && a.resolved_by === adaId && a.execution?.status === 'executed');
    expect(up.requests.length - before).toBe(1);
    expect((await fetch(review, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' })).status).toBe(410);
    expect(up.requests.length - before).toBe(1);
    // The link is a credential: the request log shows its route, never its token (issue 12).
    const token = new URL(review).pathname.split('/').pop()!;
    const requestLines = gw.logs.filter((l) => l.includes('/v1/integrations/email/decisions/'));
    expect(requestLines.length).toBeGreaterThanOrEqual(3);
    for (const line of requestLines) expect(JSON.parse(line).path).toBe('/v1/integrations/email/decisions/[REDACTED]');
    const signature = token.split('.')[2]!;
    expect(signature.length).toBeGreaterThan(20);
    expect(gw.logs.join('\n')).not.toContain(signature);
  });

  it('routing rules send by risk, service and requester, with a default route', async () => {
    const other = await makeAgent({ name: 'billing-bot' });
    const rules = await admin('PUT', '/v1/notification-rules', {
      rules: [
        { name: 'billing to the channel', match: { requester_id: [other.id], service: ['widgets'] }, routes: [{ channel_id: slackChannelId, to: 'channel' }] },
        { name: 'everything else by email', match: {}, routes: [{ channel_id: emailChannelId, to: 'resolver' }] },
      ],
    });
    expect(rules.status, rules.text).toBe(200);
    expect(rules.body.rules.map((r: { name: string }) => r.name)).toEqual(['billing to the channel', 'everything else by email']);
    try {
      const billing = await raise(other, 'routed-to-channel');
      const plain = await raise(agent, 'routed-by-email');
      await until(async () => ({ a: (await deliveries(billing.id)).length, b: (await deliveries(plain.id)).length }), (v) => v.a === 1 && v.b === 1);
      expect((await deliveries(billing.id)).map((d) => `${d.kind}:${d.target}`)).toEqual(['slack:C0APPROVALS']);
      expect((await deliveries(plain.id)).map((d) => `${d.kind}:${d.target}`)).toEqual([`email:${adaId}`]);
      expect(mailFor(billing.id)).toHaveLength(0);
    } finally {
      expect((await admin('PUT', '/v1/notification-rules', { rules: [] })).status).toBe(200);
    }
  });

  it('reminds the resolver at half-life and escalates (bubbles) to the next resolver on time, as workflow timers', async () => {
    expect((await admin('PUT', '/v1/notification-reminders', { reminders: ['half'] })).status).toBe(200);
    expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 8, approval_auto_bubble_seconds: 3 })).status).toBe(200);
    try {
      // The parent may create widgets itself, so its child's approval waits on the parent first.
      const parent = await makeAgent({ name: 'team-bot' });
      expect((await ada('POST', `/v1/identities/${parent.id}/rules`, { effect: 'allow', pattern: 'widgets:*:*' })).status).toBe(201);
      const child = await makeAgent({ name: 'sub-bot', parent_id: parent.id });
      const { id, at } = await raise(child, 'reminded-and-escalated');
      // Raised: its first resolver is the parent agent, so its person (ada) is told.
      await until(async () => (await deliveries(id)).filter((d) => d.purpose === 'raised' && d.status === 'delivered').length, (n) => n === 3);
      const bubbled = await until(async () => (await deliveries(id)).filter((d) => d.purpose === 'bubbled' && d.status === 'delivered'), (d) => d.length === 2, 10_000);
      const bubbledAt = Date.now() - at;
      expect(bubbled.map((d) => d.kind).sort()).toEqual(['email', 'slack']);
      expect(bubbledAt).toBeGreaterThanOrEqual(3_000);
      expect((await ada('GET', `/v1/approvals/${id}`)).body).toMatchObject({ status: 'bubbled', resolver_id: adaId });
      expect(slackFor(id).some((m) => m.text.startsWith('Approval escalated to you'))).toBe(true);
      const reminders = await until(async () => (await deliveries(id)).filter((d) => d.purpose === 'reminder-1' && d.status === 'delivered'), (d) => d.length === 2, 10_000);
      expect(reminders.map((d) => d.kind).sort()).toEqual(['email', 'slack']);
      const remindedAt = Date.now() - at;
      expect(remindedAt).toBeGreaterThanOrEqual(4_000);
      expect(remindedAt).toBeLessThan(8_000);
      expect(mailFor(id).some((m) => /Reminder: an approval is waiting for you/.test(m.raw))).toBe(true);
      // The timers are the workflow's: its history holds them (the approval's expiry, the bubble, the reminder).
      const { events } = await gw.temporal.workflow.getHandle(callWorkflowId(await callIdOf(id))).fetchHistory();
      expect(events!.filter((e) => e.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(3);
    } finally {
      expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 3600, approval_auto_bubble_seconds: null })).status).toBe(200);
      expect((await admin('PUT', '/v1/notification-reminders', { reminders: [] })).status).toBe(200);
    }
  });

  it('a Slack outage leaves the approval usable and shows failed deliveries after the retries', async () => {
    slack.failing = true;
    // The person's live event stream carries each delivery's final state.
    const stream = await openSse(`${gw.url}/v1/events`, { authorization: `Bearer ${adaToken}` });
    try {
      const { id } = await raise(agent, 'during-slack-outage');
      // The email still goes out; the Slack deliveries fail after their retries.
      await until(async () => mailFor(id), (m) => m.length === 1);
      const failed = await until(async () => (await deliveries(id)).filter((d) => d.kind === 'slack'), (d) => d.length === 2 && d.every((x) => x.status === 'failed'), 15_000);
      for (const d of failed) {
        expect(d.attempts).toBe(3);
        expect(d.error).toMatch(/HTTP 500/);
      }
      // The approval itself was never held: still pending, and decided from the dashboard.
      expect((await ada('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
      const allowed = await ada('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' });
      expect(allowed.status, allowed.text).toBe(200);
      await until(async () => (await ada('GET', `/v1/approvals/${id}`)).body.execution?.status, (st) => st === 'executed');
      const audit = (await admin('GET', '/v1/audit?event=notification.failed')).body.entries;
      expect(audit.filter((e: { approval_id: string }) => e.approval_id === id)).toHaveLength(2);
      await until(async () => hooks.received.filter((r) => r.body.includes(id) && r.body.includes('notification.failed')).length, (n) => n === 2);
      const failedEvent = await stream.waitFor((e) => e.event === 'notification.failed' && e.data?.approval_id === id);
      expect(failedEvent.data).toMatchObject({ status: 'failed' });
      await stream.waitFor((e) => e.event === 'notification.delivered' && e.data?.approval_id === id);
    } finally {
      stream.close();
      slack.failing = false;
    }
  });

  it('keeps every secret out of logs, audit, responses and workflow histories', async () => {
    const { id } = await raise(agent, 'secret-check');
    await until(async () => (await deliveries(id)).filter((d) => d.status === 'delivered').length, (n) => n === 3);
    // The audit as it stands once this approval's notices went out (its rows included).
    const audit = await admin('GET', '/v1/audit?limit=200');
    expect(audit.text).toContain(id);
    const notices = await gw.temporal.workflow.getHandle(`notices-${id}-raised`).fetchHistory();
    const call = await gw.temporal.workflow.getHandle(callWorkflowId(await callIdOf(id))).fetchHistory();
    const haystack = [gw.logs.join('\n'), audit.text, historyText(notices), historyText(call), JSON.stringify(await deliveries(id))].join('\n');
    for (const secret of [slack.botToken, slack.signingSecret, smtp.password]) expect(haystack).not.toContain(secret);
    expect(smtp.refusedLogins).toBe(0);
  });

  it('sends an invitation through the org\'s email channel: the link reaches the invited address once, never the audit', async () => {
    const before = smtp.messages.length;
    const inv = await admin('POST', '/v1/org/invitations', { email: 'noor@example.test', role: 'member' });
    expect(inv.status).toBe(201);
    expect(inv.body).toMatchObject({ email_sent: true, email_configured: true });
    const mail = await until(
      async () => smtp.messages.slice(before).filter((m) => m.to.includes('noor@example.test')),
      (m) => m.length > 0,
    );
    expect(mail).toHaveLength(1);
    expect(mail[0]!.text).toContain(inv.body.link);
    expect(mail[0]!.text).toMatch(/as a member/);
    const audit = await admin('GET', '/v1/audit?event=member.invited');
    expect(audit.status).toBe(200);
    expect(audit.text).not.toContain(inv.body.token);
  });

  it('the CLI manages channels as a user runs it: secrets from stdin, never printed', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'gateway-notices-cli-'));
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), GATEWAY_URL: gw.url, GATEWAY_TOKEN: gw.adminToken };
    try {
      const added = await runGatewayCli(['notices', 'add-email', '--name', 'Backup mail', '--host', '127.0.0.1', '--port', String(smtp.port), '--user', 'backup', '--from', 'gw@example.test'], { env, stdin: 'cli-smtp-password\n' });
      expect(added.stderr + added.stdout).toMatch(/Added email channel Backup mail \(([0-9a-f-]{36})\)/);
      const id = /\(([0-9a-f-]{36})\)/.exec(added.stderr + added.stdout)![1]!;
      expect(added.code).toBe(0);
      const listed = await runGatewayCli(['notices', '--json'], { env });
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout).find((c: { id: string }) => c.id === id)).toMatchObject({ kind: 'email', name: 'Backup mail', config: { user: 'backup', starttls: false } });
      expect(listed.stdout).not.toContain('cli-smtp-password');
      // A user without a password on stdin: refused, nothing added.
      const refused = await runGatewayCli(['notices', 'add-email', '--name', 'No password', '--host', 'h', '--port', '25', '--user', 'u', '--from', 'a@b.test'], { env, stdin: '' });
      expect(refused.code).not.toBe(0);
      expect((await admin('GET', '/v1/notification-channels')).body.channels.some((c: { name: string }) => c.name === 'No password')).toBe(false);
      // `approvals show` says where an approval was announced.
      const { id: shownId } = await raise(agent, 'shown-in-cli');
      await until(async () => (await deliveries(shownId)).filter((d) => d.status === 'delivered').length, (n) => n >= 3);
      const shown = await runGatewayCli(['approvals', 'show', shownId], { env });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/^announced:\n {2}Slack \(slack, raised\): delivered$/m);
      expect(shown.stdout).toMatch(/^ {2}Email \(email, raised\): delivered$/m);
      const reminders = await runGatewayCli(['notices', 'reminders', '30%', '1m'], { env });
      expect(reminders.code, reminders.stderr).toBe(0);
      expect((await admin('GET', '/v1/notification-reminders')).body.reminders).toEqual(['30%', '1m']);
      expect((await runGatewayCli(['notices', 'remove', id], { env })).code).toBe(0);
      expect((await admin('GET', '/v1/notification-channels')).body.channels.some((c: { id: string }) => c.id === id)).toBe(false);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  async function recordHistories(version: string): Promise<void> {
    const shapes: Record<string, ReturnType<typeof sql.fragment>> = {
      'reminded-escalated': sql.fragment`d.purpose = 'reminder-1'`,
      'slack-allowed': sql.fragment`a.status = 'allowed' AND EXISTS (SELECT 1 FROM audit_log l WHERE l.approval_id = a.id AND l.event = 'approval.decided_in_slack')`,
      'email-denied': sql.fragment`EXISTS (SELECT 1 FROM audit_log l WHERE l.approval_id = a.id AND l.event = 'approval.decided_by_email')`,
    };
    for (const [shape, where] of Object.entries(shapes)) {
      const callId = await gw.pool.maybeOneFirst(sql.type(z.object({ call_id: z.string() }))`
        SELECT a.call_id FROM approvals a LEFT JOIN notification_deliveries d ON d.approval_id = a.id
         WHERE ${where} ORDER BY a.created_at LIMIT 1`);
      if (!callId) throw new Error(`no call of shape ${shape} to record`);
      const history = await gw.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
      await writeFile(path.join(import.meta.dirname, '..', 'fixtures', 'histories', `${version}-${shape}.json`), JSON.stringify(temporal.api.history.v1.History.fromObject(history as never).toJSON()));
    }
  }

  async function callIdOf(approvalId: string): Promise<string> {
    const rows = (await admin('GET', `/v1/audit?event=approval.raised&limit=200`)).body.entries as { approval_id: string; call_id: string }[];
    return rows.find((r) => r.approval_id === approvalId)!.call_id;
  }
});
