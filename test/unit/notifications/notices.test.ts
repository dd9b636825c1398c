// The pure parts of approval notices: Slack's request signature, routing rules, reminder points,
// email link signatures and the notice's wording.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { linkSignatureHolds, parseLinkToken, signLink, type LinkClaims } from '../../../core/notifications/email-links.ts';
import { emailMessage, outcomeText, slackBlocks, type NoticeContent } from '../../../core/notifications/message.ts';
import { personToNotify } from '../../../core/notifications/recipients.ts';
import { reminderTimes } from '../../../core/notifications/reminders.ts';
import { routesFor, type ChannelRef, type RoutingRule } from '../../../core/notifications/routing.ts';
import { slackSignature, verifySlackRequest } from '../../../core/notifications/slack-signature.ts';

describe('Slack request signature', () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
  const now = 1_700_000_000;
  it('is v0= hex HMAC-SHA256 of v0:timestamp:body, as Slack documents', () => {
    const expected = `v0=${createHmac('sha256', secret).update(`v0:${now}:${body}`).digest('hex')}`;
    expect(slackSignature(secret, String(now), body)).toBe(expected);
    expect(verifySlackRequest(secret, { timestamp: String(now), signature: expected }, body, now + 299)).toEqual({ ok: true });
  });
  it('refuses a stale timestamp (more than 5 minutes either way), a wrong signature, missing headers', () => {
    const sig = slackSignature(secret, String(now), body);
    expect(verifySlackRequest(secret, { timestamp: String(now), signature: sig }, body, now + 301)).toEqual({ ok: false, reason: 'stale' });
    expect(verifySlackRequest(secret, { timestamp: String(now), signature: sig }, body, now - 301)).toEqual({ ok: false, reason: 'stale' });
    expect(verifySlackRequest(secret, { timestamp: String(now), signature: sig }, `${body}x`, now)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySlackRequest('another-secret', { timestamp: String(now), signature: sig }, body, now)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySlackRequest(secret, { timestamp: undefined, signature: sig }, body, now)).toEqual({ ok: false, reason: 'missing' });
    expect(verifySlackRequest(secret, { timestamp: 'soon', signature: sig }, body, now)).toEqual({ ok: false, reason: 'missing' });
  });
});

describe('routing rules', () => {
  const channels: ChannelRef[] = [
    { id: 'slack', kind: 'slack', hasSlackChannel: true, dmResolver: true },
    { id: 'mail', kind: 'email', hasSlackChannel: false, dmResolver: false },
  ];
  const facts = { risk: 'high', service: 'payments', action: 'refund', requesterId: 'agent-1', userId: 'user-1' };
  const rules: RoutingRule[] = [
    { id: 'r1', match: { risk: ['high'], service: ['payments'] }, routes: [{ channel_id: 'slack', to: 'channel' }, { channel_id: 'mail', to: 'admins' }] },
    { id: 'r2', match: { requester_id: ['user-2'] }, routes: [{ channel_id: 'mail', to: 'resolver' }] },
    { id: 'default', match: {}, routes: [{ channel_id: 'slack', to: 'resolver' }] },
  ];
  it('takes the first rule whose conditions all hold; a rule without conditions is the default', () => {
    expect(routesFor(rules, channels, facts).ruleId).toBe('r1');
    expect(routesFor(rules, channels, { ...facts, risk: 'low' }).ruleId).toBe('default');
    // A person matches through the chain's user as well as the requesting agent.
    expect(routesFor(rules, channels, { ...facts, risk: 'low', userId: 'user-2' }).ruleId).toBe('r2');
  });
  it('without rules, every channel announces to the resolver (and Slack in its channel)', () => {
    expect(routesFor([], channels, facts)).toEqual({
      ruleId: null,
      routes: [{ channel_id: 'slack', to: 'channel' }, { channel_id: 'slack', to: 'resolver' }, { channel_id: 'mail', to: 'resolver' }],
    });
  });
  it('drops routes to channels that no longer exist', () => {
    expect(routesFor(rules, [channels[1]!], facts).routes).toEqual([{ channel_id: 'mail', to: 'admins' }]);
  });
});

describe('reminder points', () => {
  it('half-life and minutes before expiry, sorted, past or out-of-life points dropped', () => {
    expect(reminderTimes(['2m', 'half'], 0, 600_000)).toEqual([300_000, 480_000]);
    expect(reminderTimes(['half', '2m'], 0, 60_000)).toEqual([30_000]);
    expect(reminderTimes(['25%', '10s', 'nonsense'], 1000, 41_000)).toEqual([11_000, 31_000]);
    expect(reminderTimes([], 0, 60_000)).toEqual([]);
  });
});

describe('email link signatures', () => {
  const key = randomBytes(32);
  const claims: LinkClaims = { linkId: randomUUID(), approvalId: randomUUID(), personId: randomUUID(), decision: 'deny', expiresAt: 1_900_000_000 };
  it('bind the person, the approval, the decision and the expiry', () => {
    const parsed = parseLinkToken(signLink(key, claims))!;
    expect(parsed).toMatchObject({ linkId: claims.linkId, expiresAt: claims.expiresAt });
    expect(linkSignatureHolds(key, claims, parsed.signature)).toBe(true);
    for (const other of [{ personId: randomUUID() }, { approvalId: randomUUID() }, { decision: 'allow_once' as const }, { expiresAt: claims.expiresAt + 1 }]) {
      expect(linkSignatureHolds(key, { ...claims, ...other }, parsed.signature)).toBe(false);
    }
    expect(linkSignatureHolds(randomBytes(32), claims, parsed.signature)).toBe(false);
    expect(parseLinkToken('not-a-token')).toBeNull();
  });
});

describe('notice wording', () => {
  const content: NoticeContent = {
    approvalId: randomUUID(),
    risk: 'high',
    description: 'Refund order 42',
    requesterPath: ['Ada', 'billing-bot'],
    disclosed: [{ label: 'Amount', value: '12.00 EUR' }],
    request: { method: 'POST', url: 'https://api.example.test/refunds', body: { order: 42, card: '[redacted]' } },
    expiresAt: '2030-01-01T00:00:00.000Z',
    approvalUrl: 'https://gw.example.test/approvals/x',
    purpose: 'raised',
  };
  it('Slack blocks carry risk, path, disclosed fields, the request and three buttons', () => {
    const text = JSON.stringify(slackBlocks(content));
    for (const s of ['HIGH risk', 'Ada → billing-bot', 'Amount:* 12.00 EUR', 'POST https://api.example.test/refunds', '[redacted]', '1 Jan 2030, 00:00 UTC']) expect(text).toContain(s);
    expect((slackBlocks(content).at(-1) as { elements: { action_id: string }[] }).elements.map((e) => e.action_id)).toEqual(['allow_once', 'deny', 'open']);
  });
  it('the email has both links and escapes HTML', () => {
    const m = emailMessage({ ...content, description: '<b>Refund</b>' }, { review: 'https://l/r', deny: 'https://l/d' });
    expect(m.text).toContain('Review and decide: https://l/r');
    expect(m.text).toContain('Deny: https://l/d');
    expect(m.html).toContain('&lt;b&gt;Refund&lt;/b&gt;');
    expect(m.html).not.toContain('<b>Refund');
  });
  it('Slack and email say which condition or budget left the call uncovered (mentions stay escaped)', () => {
    const reasons = { ...content, gapReasons: ['body.amount <= 50 was false: amount is 60', 'params.to == "<!channel>" was false: to is "x"'] };
    const slack = JSON.stringify(slackBlocks(reasons));
    expect(slack).toContain('Not covered:* body.amount &lt;= 50 was false: amount is 60');
    expect(slack).not.toContain('<!channel>');
    const mail = emailMessage(reasons, { review: 'https://l/r', deny: 'https://l/d' });
    expect(mail.text).toContain('Not covered: body.amount <= 50 was false: amount is 60');
    expect(mail.html).toContain('Not covered: body.amount &lt;= 50 was false: amount is 60');
  });
  it('outcomes read as a sentence', () => {
    expect(outcomeText({ status: 'allowed', by: 'Ada', execution: { status: 'executed', http_status_code: 201 } })).toBe('Allowed once by Ada — executed (HTTP 201)');
    expect(outcomeText({ status: 'denied', by: 'Ada', reason: 'no' })).toBe('Denied by Ada: no');
    expect(outcomeText({ status: 'expired' })).toBe('Expired without a decision');
  });
  it('an agent resolver is told through the person at the top of its chain', () => {
    const chain = [{ id: 'u', kind: 'user' as const }, { id: 'a', kind: 'agent' as const }];
    expect(personToNotify('a', chain, 'u')).toBe('u');
    expect(personToNotify('u', chain, 'u')).toBe('u');
    expect(personToNotify('approver-outside-chain', chain, 'u')).toBe('approver-outside-chain');
  });
});
