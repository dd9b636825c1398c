// Approval notices that agents cannot turn against their readers, and that survive a crash:
// agent-written text shows in Slack as text (never a mention or a disguised link); a press's
// response_url only ever reaches Slack; a Slack user the gateway does not know gets an answer, not
// a 500; a notice whose first attempt reached Slack or the mail server but was never confirmed is
// not announced twice (Slack: the first post is found by its metadata and updated; email: every
// attempt carries the same Message-ID). Slack and SMTP are real loopback servers (fake-slack.ts,
// smtp.ts) that lose their answer on demand, as a crash between "sent" and "recorded" does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack, type SlackMessage } from '../support/fake-slack.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startReceiver } from '../support/receiver.ts';
import { seedUser } from '../support/seed.ts';
import { startSmtpCapture, type CapturedMail, type SmtpCapture } from '../support/smtp.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const EVIL_NAME = '<!here> <https://evil.test/1|Approve in one click>';

describe('approval notices: safe to show, sent once', () => {
  let gw: TestGateway;
  let up: Upstream;
  let slack: FakeSlack;
  let smtp: SmtpCapture;
  let elsewhere: Awaited<ReturnType<typeof startReceiver>>;
  let ada: ReturnType<TestGateway['as']>;
  let adaSlack: string;
  let mallorySlack: string;
  type Agent = { id: string; call: ReturnType<TestGateway['as']> };
  let agent: Agent;

  const makeAgent = async (body: Record<string, unknown>): Promise<Agent> => {
    const res = await ada('POST', '/v1/identities/agents', body);
    expect(res.status, res.text).toBe(201);
    return { id: res.body.identity.id as string, call: gw.as(res.body.key.token) };
  };
  const raise = async (a: Agent, params: Record<string, string>): Promise<string> => {
    const res = await a.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params });
    expect(res.status, res.text).toBe(202);
    return res.body.approval_id as string;
  };
  const approvalOf = (m: SlackMessage) => m.blocks.find((b) => b.type === 'actions')?.elements[0]?.value as string | undefined;
  const slackFor = (approvalId: string) => slack.messages.filter((m) => approvalOf(m) === approvalId);
  const mailFor = (approvalId: string): CapturedMail[] => smtp.messages.filter((m) => m.text.includes(`/approvals/${approvalId}`));
  const deliveries = async (approvalId: string) =>
    (await ada('GET', `/v1/approvals/${approvalId}/notifications`)).body.deliveries as { id: string; kind: string; status: string; attempts: number; error: string | null }[];
  /** Every text Slack reads as mrkdwn in a message: the fallback text and the blocks' mrkdwn. */
  const mrkdwnOf = (m: { text: string; blocks: any[] }) => [
    m.text,
    ...m.blocks.flatMap((b) => [b.text, ...(b.elements ?? [])]).filter((t) => t?.type === 'mrkdwn').map((t) => t.text as string),
  ];

  beforeAll(async () => {
    [up, slack, smtp, elsewhere] = await Promise.all([startUpstream(), startFakeSlack(), startSmtpCapture(), startReceiver()]);
    gw = await startTestGateway({ env: { GATEWAY_SLACK_API_URL: slack.apiUrl, GATEWAY_NOTICE_RETRY_INITIAL_MS: '1500', GATEWAY_NOTICE_MAX_ATTEMPTS: '3' } });
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const a = await seedUser(gw.databaseUrl, { orgId, email: 'ada@example.test' });
    await seedUser(gw.databaseUrl, { orgId, email: 'mallory@example.test' });
    ada = gw.as(await gw.login(a.email, a.password));
    adaSlack = slack.addUser('ada@example.test');
    mallorySlack = slack.addUser('mallory@example.test');
    const doc = upstreamServiceDoc('widgets', up.url);
    (doc.paths['/items'].post as Record<string, unknown>)['x-gateway-disclose'] = [{ label: 'Folder', filter: '.body.folder' }];
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: doc })).status).toBe(201);
    expect((await ada('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_notice_safety' })).status).toBe(201);
    expect((await admin('PATCH', '/v1/org/settings', { max_pending_per_agent: 100 })).status).toBe(200);
    const s = await admin('POST', '/v1/notification-channels', {
      kind: 'slack',
      name: 'Slack',
      slack: { channel: 'C0APPROVALS', dm_resolver: true, bot_token: slack.botToken, signing_secret: slack.signingSecret },
    });
    expect(s.status, s.text).toBe(201);
    const e = await admin('POST', '/v1/notification-channels', {
      kind: 'email',
      name: 'Email',
      email: { host: smtp.host, port: smtp.port, starttls: false, user: smtp.user, password: smtp.password, from: 'gateway@example.test' },
    });
    expect(e.status, e.text).toBe(201);
    agent = await makeAgent({ name: 'ops-bot' });
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([up?.close(), slack?.close(), smtp?.close(), elsewhere?.close()]);
  });

  it('shows agent-written names, descriptions, disclosed values and reasons as text in Slack: no mention, no disguised link', async () => {
    const evil = await makeAgent({ name: EVIL_NAME, parent_id: agent.id });
    const id = await raise(evil, { name: '<!channel> <https://evil.test/2|Safe>', folder: '<@U0BOSS> & <https://evil.test/3|docs>' });
    const posted = await until(async () => slackFor(id), (m) => m.length === 2);
    for (const m of posted) {
      for (const text of mrkdwnOf(m)) expect(text, text).not.toMatch(/[<>]/);
      const all = mrkdwnOf(m).join('\n');
      expect(all).toContain('&lt;!here&gt; &lt;https://evil.test/1|Approve in one click&gt;');
      expect(all).toContain('&lt;!channel&gt;');
      expect(all).toContain('*Folder:* &lt;@U0BOSS&gt; &amp; &lt;https://evil.test/3|docs&gt;');
    }
    // Denied in Slack with a reason that tries the same: the updates show it as text too.
    const [message] = posted;
    expect((await slack.press(gw.url, { userId: adaSlack, message: message!, actionId: 'deny' })).status).toBe(200);
    const view = slack.views.find((v) => v.view.private_metadata.includes(id))!.view;
    const done = await slack.submitDeny(gw.url, { userId: adaSlack, view, reason: 'no <!everyone> <https://evil.test/4|appeal here>' });
    expect(done.body).toEqual({ response_action: 'clear' });
    for (const m of posted) {
      const update = await until(async () => m.updates.at(-1), (u) => u?.text.startsWith('Denied') ?? false);
      expect(update!.text).toBe('Denied by ada: no &lt;!everyone&gt; &lt;https://evil.test/4|appeal here&gt;');
      // The one link left is the gateway's own "Open in the gateway".
      for (const text of mrkdwnOf(update!)) expect(text.replace(/<http:\/\/[^|<>]+\/approvals\/[0-9a-f-]+\|Open in the gateway>/, ''), text).not.toMatch(/[<>]/);
    }
  });

  it("answers a press's response_url only on Slack's own address, and tells an unknown Slack user why they cannot decide (never a 500)", async () => {
    const id = await raise(agent, { name: 'response-url' });
    const [message] = await until(async () => slackFor(id), (m) => m.length === 2);
    // A signed press whose response_url points elsewhere on loopback: the gateway never goes there.
    for (const responseUrl of [`${elsewhere.url}/steal`, `http://localhost:${new URL(slack.apiUrl).port}/response/x`, 'http://169.254.169.254/latest/meta-data']) {
      const before = slack.responses.length;
      const r = await slack.press(gw.url, { userId: mallorySlack, message: message!, actionId: 'allow_once', responseUrl });
      expect(r.status).toBe(200);
      expect(slack.responses.length).toBe(before);
    }
    expect(elsewhere.received).toHaveLength(0);
    await until(async () => gw.logs.filter((l) => l.includes('response_url refused')).length, (n) => n === 3);
    // Slack's own response_url still gets its answer.
    expect((await slack.press(gw.url, { userId: mallorySlack, message: message!, actionId: 'allow_once' })).status).toBe(200);
    expect(slack.responses.at(-1)).toEqual({ response_type: 'ephemeral', replace_original: false, text: 'You cannot decide this approval.' });

    // A Slack user Slack itself does not know (users.info: user_not_found): a clear answer, both ways.
    for (const actionId of ['allow_once', 'deny'] as const) {
      const r = await slack.press(gw.url, { userId: 'U0NOBODY', message: message!, actionId });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(slack.responses.at(-1)).toMatchObject({ response_type: 'ephemeral', text: expect.stringMatching(/could not tell who you are/) });
    }
    expect(slack.views.filter((v) => v.view.private_metadata.includes(id))).toHaveLength(0);
    expect((await slack.press(gw.url, { userId: adaSlack, message: message!, actionId: 'deny' })).status).toBe(200);
    const view = slack.views.find((v) => v.view.private_metadata.includes(id))!.view;
    const submitted = await slack.submitDeny(gw.url, { userId: 'U0NOBODY', view, reason: 'who am I' });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(submitted.body).toEqual({ response_action: 'errors', errors: { reason: expect.stringMatching(/could not tell who you are/) } });
    expect((await ada('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
  });

  it('a notice taken by Slack and the mail server but never confirmed is not sent twice: the Slack post is found and updated, the email keeps its Message-ID', async () => {
    slack.losePostAnswers = 2;
    // Only this approval's mail is lost: a late notice of an earlier case must not take the loss.
    smtp.loseAnswers = 1;
    smtp.loseAnswersOf = 'lost-answers';
    const id = await raise(agent, { name: 'lost-answers' });
    const ds = await until(async () => deliveries(id), (d) => d.length === 3 && d.every((x) => x.status === 'delivered'));
    expect(slack.losePostAnswers).toBe(0);
    expect(smtp.loseAnswers).toBe(0);
    // Slack: one message per delivery (channel and DM), the first post updated by the retry.
    const posted = slackFor(id);
    expect(posted.map((m) => m.channel).sort()).toEqual(['C0APPROVALS', `D${adaSlack.slice(1)}`]);
    const slackIds = ds.filter((d) => d.kind === 'slack').map((d) => d.id);
    expect(posted.map((m) => m.metadata?.event_payload.delivery_id).sort()).toEqual(slackIds.sort());
    for (const m of posted) expect(m.updates).toHaveLength(1);
    expect(ds.filter((d) => d.kind === 'slack').every((d) => d.attempts === 2)).toBe(true);
    // Email: taken twice (the first answer was lost), both with the one Message-ID of the delivery.
    const mails = mailFor(id);
    expect(mails).toHaveLength(2);
    const emailId = ds.find((d) => d.kind === 'email')!.id;
    // The header may be folded onto the next line.
    const messageIds = mails.map((m) => /^Message-ID:\s*(<[^>]+>)/im.exec(m.raw)?.[1]);
    expect(messageIds[0]).toContain(emailId);
    expect(messageIds[1]).toBe(messageIds[0]);

    // Decided: the messages the first attempts posted show the outcome; no live buttons are left.
    expect((await ada('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny', reason: 'not now' })).status).toBe(200);
    for (const m of posted) {
      const last = await until(async () => m.updates.at(-1)!, (u) => u.text.startsWith('Denied'));
      expect(JSON.stringify(last.blocks)).not.toContain('allow_once');
    }
    expect(slackFor(id)).toHaveLength(2);
  });

  it('an unconfirmed post of an approval decided before the retry shows the outcome: no orphan keeps live buttons', async () => {
    slack.losePostAnswers = 2;
    const id = await raise(agent, { name: 'decided-before-retry' });
    // Both posts reached Slack (their answers were lost); the retries wait 1.5 s, the decision does not.
    const posted = await until(async () => slackFor(id), (m) => m.length === 2);
    expect((await ada('POST', `/v1/approvals/${id}/resolve`, { decision: 'deny', reason: 'too late' })).status).toBe(200);
    const ds = await until(async () => (await deliveries(id)).filter((d) => d.kind === 'slack'), (d) => d.length === 2 && d.every((x) => x.status === 'failed'));
    for (const d of ds) expect(d.error).toMatch(/denied before it could be announced/);
    for (const m of posted) {
      const last = await until(async () => m.updates.at(-1), (u) => u?.text === 'Denied by ada: too late');
      expect(JSON.stringify(last!.blocks)).not.toContain('allow_once');
    }
    expect(slackFor(id)).toHaveLength(2);
  });

  it('a Slack channel configured by #name: the retry finds its post through the channel id', async () => {
    const admin = gw.as(gw.adminToken);
    const named = await admin('POST', '/v1/notification-channels', {
      kind: 'slack',
      name: 'Slack by name',
      slack: { channel: '#approvals', dm_resolver: false, bot_token: slack.botToken, signing_secret: slack.signingSecret },
    });
    expect(named.status, named.text).toBe(201);
    try {
      slack.losePostAnswers = 3;
      const id = await raise(agent, { name: 'named-channel' });
      const ds = await until(async () => (await deliveries(id)).filter((d) => d.kind === 'slack'), (d) => d.length === 3 && d.every((x) => x.status === 'delivered'));
      expect(slack.losePostAnswers).toBe(0);
      const posted = slackFor(id);
      expect(posted).toHaveLength(3);
      expect(posted.map((m) => m.metadata?.event_payload.delivery_id).sort()).toEqual(ds.map((d) => d.id).sort());
      for (const m of posted) expect(m.updates).toHaveLength(1);
      expect(slack.calls).toContain('conversations.list');
    } finally {
      expect((await admin('DELETE', `/v1/notification-channels/${named.body.id}`)).status).toBe(204);
    }
  });
});
