// The pure safety parts of approval notices: agent text escaped for Slack's mrkdwn, the identity
// a delivery keeps across retries (Slack metadata, email Message-ID), and which response_url a
// Slack interaction may make the gateway POST to.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isNoticeOf, noticeMessageId, noticeMetadata } from '../../../core/notifications/delivery-identity.ts';
import { slackBlocks, slackOutcomeBlocks, slackOutcomeText, slackText, type NoticeContent } from '../../../core/notifications/message.ts';
import { clipMrkdwn, escapeMrkdwn } from '../../../core/notifications/slack-mrkdwn.ts';
import { checkResponseUrl } from '../../../core/notifications/slack-response-url.ts';

const mrkdwnTexts = (blocks: unknown[]) =>
  (blocks as { text?: { type: string; text: string }; elements?: { type: string; text: string }[] }[])
    .flatMap((b) => [b.text, ...(b.elements ?? [])])
    .filter((t): t is { type: string; text: string } => t?.type === 'mrkdwn')
    .map((t) => t.text);

describe("Slack's mrkdwn", () => {
  it('escapes &, < and > and nothing else', () => {
    expect(escapeMrkdwn('<!here> <https://evil.test|x> & *bold*')).toBe('&lt;!here&gt; &lt;https://evil.test|x&gt; &amp; *bold*');
  });
  it('clips to the escaped length without cutting an entity', () => {
    expect(clipMrkdwn('abc', 3)).toBe('abc');
    expect(clipMrkdwn('a<<<<', 8)).toBe('a&lt;…');
    expect(clipMrkdwn('<'.repeat(100), 20).length).toBeLessThanOrEqual(20);
    expect(clipMrkdwn('<'.repeat(100), 20)).toMatch(/^(&lt;)+…$/);
  });
  it('no agent-written value reaches a notice as a control sequence: blocks, fallback text, outcome', () => {
    const evil = '<!here> <https://evil.test/1|Approve in one click>';
    const c: NoticeContent = {
      approvalId: randomUUID(),
      risk: 'high',
      description: `Create ${evil}`,
      requesterPath: ['Ada', 'bot', evil],
      disclosed: [{ label: `<!channel>`, value: evil }, { label: 'Obj', value: { x: evil } }],
      request: { method: 'POST', url: 'https://api.example.test/x?a=1&b=<2>', body: { text: evil } },
      expiresAt: '2030-01-01T00:00:00.000Z',
      approvalUrl: 'https://gw.example.test/approvals/x',
      purpose: 'raised',
    };
    const outcome = { status: 'denied', by: '<@U0ADMIN>', reason: evil };
    const texts = [...mrkdwnTexts(slackBlocks(c)), slackText(c), slackOutcomeText(outcome), ...mrkdwnTexts(slackOutcomeBlocks(c, outcome))];
    for (const t of texts) expect(t.replace('<https://gw.example.test/approvals/x|Open in the gateway>', ''), t).not.toMatch(/[<>]/);
    expect(texts.join('\n')).toContain('&lt;!here&gt; &lt;https://evil.test/1|Approve in one click&gt;');
    expect(slackOutcomeText(outcome)).toBe(`Denied by &lt;@U0ADMIN&gt;: ${escapeMrkdwn(evil)}`);
  });
});

describe('a delivery recognised on a retry', () => {
  const id = randomUUID();
  it('Slack metadata names the delivery, and only its own post matches', () => {
    expect(noticeMetadata(id)).toEqual({ event_type: 'gateway_approval_notice', event_payload: { delivery_id: id } });
    expect(isNoticeOf(noticeMetadata(id), id)).toBe(true);
    expect(isNoticeOf(noticeMetadata(randomUUID()), id)).toBe(false);
    expect(isNoticeOf({ event_type: 'other', event_payload: { delivery_id: id } }, id)).toBe(false);
    expect(isNoticeOf(undefined, id)).toBe(false);
  });
  it('the email Message-ID is the same for every attempt of a delivery and differs between deliveries', () => {
    expect(noticeMessageId(id, 'gateway@example.test')).toBe(`<approval-notice.${id}@example.test>`);
    expect(noticeMessageId(id, 'gateway@example.test')).toBe(noticeMessageId(id, 'gateway@example.test'));
    expect(noticeMessageId(randomUUID(), 'gateway@example.test')).not.toBe(noticeMessageId(id, 'gateway@example.test'));
  });
});

describe("a Slack interaction's response_url", () => {
  const api = 'https://slack.com/api';
  it("is answered on Slack's hooks host over https, or on the configured Slack API's origin (trusted)", () => {
    expect(checkResponseUrl('https://hooks.slack.com/actions/T1/2/abc', api)).toMatchObject({ trusted: false });
    expect(checkResponseUrl('https://slack.com/response/1', api)).toMatchObject({ trusted: true });
    expect(checkResponseUrl('http://127.0.0.1:4000/response/1', 'http://127.0.0.1:4000/api')).toMatchObject({ trusted: true });
  });
  it('is refused anywhere else', () => {
    for (const url of [
      'http://hooks.slack.com/actions/T1/2/abc',
      'https://hooks.slack.com:8443/actions',
      'https://hooks.slack.com.evil.test/actions',
      'https://user:pw@hooks.slack.com/actions',
      'http://127.0.0.1:4001/response/1',
      'http://localhost:4000/response/1',
      'http://169.254.169.254/latest/meta-data',
      'not a url',
    ]) {
      expect(checkResponseUrl(url, url.includes('400') ? 'http://127.0.0.1:4000/api' : api), url).toHaveProperty('refused');
    }
  });
});
