// Deciding from an email link. The link opens a confirmation page (a GET never decides); the
// page's form POSTs back to the same link, which decides without a dashboard session only
// because its signature binds the person, the approval and the decision
// (core/notifications/email-links.ts). Single use: the link's row is spent by the one request that
// decides; it expires with the approval. Recorded in the audit as "decided by email".
import type { DatabasePool } from 'slonik';
import { linkSignatureHolds, parseLinkToken } from '../../core/notifications/email-links.ts';
import { timeForPeople } from '../../core/text/when.ts';
import type { ApprovalRecord } from '../../workflows/definitions.ts';
import type { AuditWriter } from '../audit/writer.ts';
import type { Principal } from '../auth/principal.ts';
import { AppError } from '../errors.ts';
import { escapeHtml, page } from '../oauth/html.ts';
import * as store from './store.ts';

export interface EmailDecisionDeps {
  pool: DatabasePool;
  /** Audit rows (bound to the pool by the composition root). */
  audit: AuditWriter;
  linkKey: Buffer;
  resolve: (p: Principal, approvalId: string, body: { decision: 'allow_once' | 'deny'; reason?: string }) => Promise<ApprovalRecord>;
}

/** A page and its status. */
export interface EmailPage {
  status: number;
  html: string;
}

const refused = (status: number, title: string, message: string): EmailPage => ({
  status,
  html: page(title, `<p class="error" role="alert">${escapeHtml(message)}</p><p class="muted">Open the approval in the gateway's dashboard instead.</p>`),
});

const INVALID = () => refused(404, 'Link not valid', 'This link is not valid.');
const SPENT = () => refused(410, 'Link already used', 'This link was already used, or the approval was decided.');
const EXPIRED = () => refused(410, 'Link expired', 'This link expired with the approval.');

export function createEmailDecisions(deps: EmailDecisionDeps) {
  const { pool } = deps;

  /** The link's row when the token is genuine and still usable, else the page that says why not. */
  async function check(token: string): Promise<{ link: store.LinkRow; person: store.PersonRow; facts: store.NoticeFacts } | EmailPage> {
    const parsed = parseLinkToken(token);
    if (!parsed) return INVALID();
    const link = await store.getLink(pool, parsed.linkId);
    if (!link) return INVALID();
    const claims = { linkId: link.id, approvalId: link.approval_id, personId: link.person_id, decision: link.decision, expiresAt: Math.floor(link.expires_at.getTime() / 1000) };
    if (claims.expiresAt !== parsed.expiresAt || !linkSignatureHolds(deps.linkKey, claims, parsed.signature)) return INVALID();
    if (link.expires_at.getTime() <= Date.now()) return EXPIRED();
    const [person, facts] = await Promise.all([store.getPerson(pool, link.person_id), store.noticeFacts(pool, link.approval_id)]);
    if (!person || !facts) return INVALID();
    if (facts.status === 'expired') return EXPIRED();
    if (link.used_at || (facts.status !== 'pending' && facts.status !== 'bubbled')) return SPENT();
    return { link, person, facts };
  }

  function confirmation(token: string, c: { link: store.LinkRow; facts: store.NoticeFacts; person: store.PersonRow }): string {
    const f = c.facts;
    const req = f.request as { method?: string; url?: string } | null;
    const deny = c.link.decision === 'deny';
    const facts = `<p><strong>${escapeHtml(f.action_description)}</strong></p>
<ul>
<li>Risk: ${escapeHtml(f.risk)}</li>
<li>Requested by: ${escapeHtml(f.chain.map((x) => x.name).join(' → '))}</li>
${req?.method && req.url ? `<li>Request: <code>${escapeHtml(`${req.method} ${req.url}`)}</code></li>` : ''}
<li>Expires: ${escapeHtml(timeForPeople(f.expires_at, new Date()))}</li>
</ul>
<p class="muted">Deciding as ${escapeHtml(c.person.name)} (${escapeHtml(c.person.email)}).</p>`;
    const action = `/v1/integrations/email/decisions/${encodeURIComponent(token)}`;
    const form = deny
      ? `<form method="post" action="${escapeHtml(action)}">
<label for="reason">Reason</label>
<input type="text" id="reason" name="reason" maxlength="1000" required>
<div class="actions"><button class="primary" type="submit">Deny</button></div>
</form>`
      : `<form method="post" action="${escapeHtml(action)}">
<div class="actions"><button class="primary" type="submit">Allow once</button></div>
</form>`;
    return page(deny ? 'Deny this request?' : 'Allow this request once?', `${facts}\n${form}`);
  }

  return {
    /** GET: the confirmation page; never decides. */
    async show(token: string): Promise<EmailPage> {
      const c = await check(token);
      if ('html' in c) return c;
      return { status: 200, html: confirmation(token, c) };
    },

    /** POST from the confirmation page: spend the link, decide as its person. */
    async decide(token: string, form: { reason?: unknown }): Promise<EmailPage> {
      const c = await check(token);
      if ('html' in c) return c;
      const reason = typeof form.reason === 'string' ? form.reason.trim().slice(0, 1000) : '';
      if (c.link.decision === 'deny' && !reason) return { status: 400, html: page('Deny this request?', `<p class="error" role="alert">Say why the request is denied.</p>`) };
      if (!(await store.useLink(pool, c.link.id))) return SPENT();
      const { person, link } = c;
      const p: Principal = { type: 'user', orgId: person.org_id, userId: person.id, identityId: person.id, role: person.role, sessionId: `email:${link.id}` };
      try {
        await deps.resolve(p, link.approval_id, { decision: link.decision, ...(reason ? { reason } : {}) });
      } catch (err) {
        if (err instanceof AppError) return refused(err.status === 409 || err.status === 410 ? 409 : 403, 'Not decided', err.message);
        throw err;
      }
      await store.spendLinksOf(pool, link.approval_id);
      await deps.audit.append({
        orgId: person.org_id,
        event: 'approval.decided_by_email',
        userId: c.facts.user_id,
        actorId: person.id,
        approvalId: link.approval_id,
        callId: c.facts.call_id,
        decision: link.decision,
        details: { via: 'decided by email', link_id: link.id, ...(reason ? { reason } : {}) },
      });
      const title = link.decision === 'deny' ? 'Denied' : 'Allowed once';
      return { status: 200, html: page(title, `<p role="status">${escapeHtml(title)} by ${escapeHtml(person.name)}. You can close this page.</p>`) };
    },
  };
}
export type EmailDecisions = ReturnType<typeof createEmailDecisions>;
