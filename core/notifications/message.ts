// What an approval notice says, in Slack Block Kit and in email: risk, description, who asks (the
// requester's path up to the person), the disclosed fields, the request as recorded (already
// redacted: no secret ever reaches it), the expiry; and, once decided, the outcome. Pure.
// Everything the Slack side shows goes through slack-mrkdwn.ts: agents name themselves and write
// the descriptions, so no value may reach Slack as a mention or a link.
import { clipMrkdwn, escapeMrkdwn } from './slack-mrkdwn.ts';
import { absoluteTime } from '../text/when.ts';

export interface NoticeContent {
  approvalId: string;
  risk: string;
  description: string;
  /** Names from the person down to the requesting agent, e.g. ["Ada", "ops-bot", "sub"]. */
  requesterPath: string[];
  disclosed: { label: string; value: unknown }[];
  /** Why rules that matched the keys did not cover the call ("body.amount <= 50 was false: amount is 60"). */
  gapReasons?: string[];
  request: { method: string; url: string; body?: unknown } | null;
  expiresAt: string;
  approvalUrl: string;
  /** `raised`, `bubbled` or `reminder-<n>`: the first line changes with it. */
  purpose: string;
}

export interface NoticeOutcome {
  status: string;
  by?: string | null;
  reason?: string | null;
  execution?: { status: string; http_status_code?: number } | null;
}

const MAX_BODY = 1500;

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

export function headline(c: Pick<NoticeContent, 'purpose' | 'risk'>): string {
  const risk = c.risk.toUpperCase();
  if (c.purpose === 'bubbled') return `Approval escalated to you (${risk} risk)`;
  if (c.purpose.startsWith('reminder')) return `Reminder: an approval is waiting for you (${risk} risk)`;
  return `Approval needed (${risk} risk)`;
}

export function requestText(c: NoticeContent): string {
  if (!c.request) return '(no request recorded)';
  const body = c.request.body === undefined || c.request.body === null ? '' : `\n${clip(show(c.request.body), MAX_BODY)}`;
  return `${c.request.method} ${c.request.url}${body}`;
}

/** The outcome in one line: "Allowed by Ada — executed (HTTP 201)", "Denied by Ada: not today", "Expired". */
export function outcomeText(o: NoticeOutcome): string {
  const by = o.by ? ` by ${o.by}` : '';
  if (o.status === 'allowed') {
    const ex = o.execution;
    const run = ex ? ` — ${ex.status}${ex.http_status_code ? ` (HTTP ${ex.http_status_code})` : ''}` : '';
    return `Allowed once${by}${run}`;
  }
  if (o.status === 'denied') return `Denied${by}${o.reason ? `: ${o.reason}` : ''}`;
  if (o.status === 'expired') return 'Expired without a decision';
  return `${o.status[0]!.toUpperCase()}${o.status.slice(1)}${by}`;
}

/** A Slack message's fallback `text` (notifications, screen readers): mrkdwn as well. */
export const slackText = (c: NoticeContent): string => clipMrkdwn(`${headline(c)}: ${c.description}`, 3000);

/** The outcome as a Slack update's fallback `text`. */
export const slackOutcomeText = (o: NoticeOutcome): string => clipMrkdwn(outcomeText(o), 3000);

function factsMarkdown(c: NoticeContent): string {
  const lines = [`*Requested by:* ${c.requesterPath.map(escapeMrkdwn).join(' → ')}`, `*Expires:* ${escapeMrkdwn(absoluteTime(new Date(c.expiresAt)))}`];
  for (const d of c.disclosed) lines.push(`*${clipMrkdwn(d.label, 100)}:* ${clipMrkdwn(show(d.value), 300)}`);
  for (const r of c.gapReasons ?? []) lines.push(`*Not covered:* ${clipMrkdwn(r, 300)}`);
  return lines.join('\n');
}

/** Block Kit blocks of an undecided approval: the facts and the buttons Allow once / Deny / Open. */
export function slackBlocks(c: NoticeContent): unknown[] {
  return [
    { type: 'header', text: { type: 'plain_text', text: headline(c) } },
    { type: 'section', text: { type: 'mrkdwn', text: `*${clipMrkdwn(c.description, 2000)}*` } },
    { type: 'section', text: { type: 'mrkdwn', text: factsMarkdown(c) } },
    { type: 'section', text: { type: 'mrkdwn', text: `\`\`\`${clipMrkdwn(requestText(c), 2800)}\`\`\`` } },
    {
      type: 'actions',
      block_id: `approval:${c.approvalId}`,
      elements: [
        { type: 'button', action_id: 'allow_once', style: 'primary', text: { type: 'plain_text', text: 'Allow once' }, value: c.approvalId },
        { type: 'button', action_id: 'deny', style: 'danger', text: { type: 'plain_text', text: 'Deny' }, value: c.approvalId },
        { type: 'button', action_id: 'open', text: { type: 'plain_text', text: 'Open' }, url: c.approvalUrl, value: c.approvalId },
      ],
    },
  ];
}

/** The same message once decided: the facts stay, the buttons give way to the outcome. */
export function slackOutcomeBlocks(c: NoticeContent, o: NoticeOutcome): unknown[] {
  return [
    ...slackBlocks(c).slice(0, 4),
    { type: 'section', text: { type: 'mrkdwn', text: `*${clipMrkdwn(outcomeText(o), 2900)}*` } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: `<${c.approvalUrl}|Open in the gateway>` }] },
  ];
}

/** The Deny modal: one required reason; the approval rides in private_metadata. */
export function slackDenyModal(approvalId: string, messageRef: string): unknown {
  return {
    type: 'modal',
    callback_id: 'deny_reason',
    private_metadata: JSON.stringify({ approval_id: approvalId, message: messageRef }),
    title: { type: 'plain_text', text: 'Deny the request' },
    submit: { type: 'plain_text', text: 'Deny' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'input',
        block_id: 'reason',
        label: { type: 'plain_text', text: 'Reason' },
        element: { type: 'plain_text_input', action_id: 'reason', multiline: true, max_length: 1000 },
      },
    ],
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

/** The email: subject, plain text and HTML, with the two links (Review and decide / Deny). */
export function emailMessage(c: NoticeContent, links: { review: string; deny: string }): { subject: string; text: string; html: string } {
  const subject = `${headline(c)}: ${clip(c.description, 120)}`;
  const facts = [
    `Requested by: ${c.requesterPath.join(' → ')}`,
    `Expires: ${absoluteTime(new Date(c.expiresAt))}`,
    ...c.disclosed.map((d) => `${d.label}: ${clip(show(d.value), 300)}`),
    ...(c.gapReasons ?? []).map((r) => `Not covered: ${clip(r, 300)}`),
  ];
  const text = [c.description, '', ...facts, '', requestText(c), '', `Review and decide: ${links.review}`, `Deny: ${links.deny}`, '', `Open in the gateway: ${c.approvalUrl}`].join('\n');
  const html = `<!doctype html><html><body>
<h1>${escapeHtml(headline(c))}</h1>
<p><strong>${escapeHtml(c.description)}</strong></p>
<ul>${facts.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>
<pre>${escapeHtml(requestText(c))}</pre>
<p><a href="${escapeHtml(links.review)}">Review and decide</a> · <a href="${escapeHtml(links.deny)}">Deny</a></p>
<p><a href="${escapeHtml(c.approvalUrl)}">Open in the gateway</a></p>
</body></html>`;
  return { subject, text, html };
}
