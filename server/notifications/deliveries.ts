// Approval notices, one delivery at a time: plan who gets what (the routing rules), send one
// delivery (Slack or email), record its final state (audit, the people's stream, webhooks), and
// update the Slack messages in place once the approval is decided. The notice workflow
// (workflows/approval-notices.ts) calls these through activities; each is idempotent.
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { smtpTransport } from './smtp.ts';
import { EARLIER_POST_MARGIN_S, isNoticeOf, noticeMessageId, noticeMetadata } from '../../core/notifications/delivery-identity.ts';
import { emailMessage, slackBlocks, slackOutcomeBlocks, slackOutcomeText, slackText, type NoticeContent, type NoticeOutcome } from '../../core/notifications/message.ts';
import { personToNotify } from '../../core/notifications/recipients.ts';
import { routesFor, type RoutingRule } from '../../core/notifications/routing.ts';
import { signLink } from '../../core/notifications/email-links.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { publishNoticeEvent } from '../events/approval-events.ts';
import type { Logger } from '../logger.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { readEmailConfig, readSlackConfig, type EmailSecrets, type SlackSecrets } from './channel-config.ts';
import { isPermanentSlackError, slackApi, type SlackApi } from './slack-api.ts';
import { openChannelSecrets } from './channel-secrets.ts';
import * as store from './store.ts';

export interface DeliveryDeps {
  pool: DatabasePool;
  /** Audit rows (bound to the pool by the composition root). */
  audit: AuditWriter;
  keyring: VaultKeyring;
  logger: Logger;
  publicUrl: string;
  slackApiUrl: string;
  /** The key email links are signed with (derived from the master key). */
  linkKey: Buffer;
  /** Fans an event out to the org's webhooks (idempotent by id). */
  emitWebhook: (event: { orgId: string; type: 'notification.delivered' | 'notification.failed'; data: Record<string, unknown>; id: string }) => Promise<void>;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A recipient the delivery itself can never reach (no retry helps). */
export class UndeliverableNotice extends Error {
  override name = 'UndeliverableNotice';
}

function contentOf(f: store.NoticeFacts, publicUrl: string, purpose: string): NoticeContent {
  const req = f.request as { method?: string; url?: string; body?: unknown } | null;
  const disclosed = Array.isArray(f.disclosed) ? (f.disclosed as { label: string; value: unknown }[]) : [];
  return {
    approvalId: f.id,
    risk: f.risk,
    description: f.action_description,
    requesterPath: f.chain.map((c) => c.name),
    disclosed,
    ...(f.gap_reasons.length ? { gapReasons: f.gap_reasons } : {}),
    request: req?.method && req.url ? { method: req.method, url: req.url, body: req.body } : null,
    expiresAt: f.expires_at.toISOString(),
    approvalUrl: `${publicUrl}/approvals/${f.id}`,
    purpose,
  };
}

const outcomeOf = (f: store.NoticeFacts): NoticeOutcome => ({
  status: f.status,
  by: f.resolved_by_name,
  reason: f.reason,
  execution: f.execution ? { status: f.execution.status, ...(f.execution.http_status_code !== null ? { http_status_code: f.execution.http_status_code } : {}) } : null,
});

export function createDeliveries(deps: DeliveryDeps) {
  const { pool, keyring, logger } = deps;

  async function facts(approvalId: string) {
    const f = await store.noticeFacts(pool, approvalId);
    if (!f) throw new UndeliverableNotice(`approval ${approvalId} not found`);
    return f;
  }

  const secretsOf = <T>(c: store.ChannelWithSecret) => openChannelSecrets<T>(keyring, c);

  /**
   * Posts the notice, or on a retry first looks for the post an earlier attempt made (Slack took
   * it but the gateway never recorded it) and updates that one: one message, its buttons live.
   */
  async function sendSlack(d: store.DeliveryRow, c: store.ChannelWithSecret, f: store.NoticeFacts, retry: boolean) {
    const api = slackApi(deps.slackApiUrl, secretsOf<SlackSecrets>(c).bot_token);
    const channel = await slackTargetOf(api, d);
    const content = contentOf(f, deps.publicUrl, d.purpose);
    const earlier = retry ? await earlierPost(api, d, channel) : null;
    if (earlier) {
      await api.update(earlier.channel, earlier.ts, slackText(content), slackBlocks(content));
      return { slackChannel: earlier.channel, slackTs: earlier.ts };
    }
    const posted = await api.postMessage(channel, slackText(content), slackBlocks(content), noticeMetadata(d.id));
    return { slackChannel: posted.channel, slackTs: posted.ts };
  }

  /** Where a Slack delivery goes: its channel, or the person's Slack user (a DM). */
  async function slackTargetOf(api: SlackApi, d: store.DeliveryRow): Promise<string> {
    if (!UUID.test(d.target)) return d.target;
    const person = await store.getPerson(pool, d.target);
    if (!person) throw new UndeliverableNotice('the person to notify is no longer active');
    return api.lookupByEmail(person.email);
  }

  /**
   * The message an earlier attempt of this delivery posted (found by its metadata), or null.
   * Without the history (and, for a #name, read) scopes, or in a channel the bot was never
   * invited to, it cannot be looked for: the attempt then posts as before (logged), rather than
   * failing a notice that can be sent.
   */
  async function earlierPost(api: SlackApi, d: store.DeliveryRow, target: string): Promise<{ channel: string; ts: string } | null> {
    try {
      // A DM is posted to the user id, a channel maybe by #name; history wants the conversation's id.
      const channel = UUID.test(d.target) ? await api.dmChannel(target) : target.startsWith('#') ? await api.channelId(target.slice(1)) : target;
      if (!channel) return null;
      const oldest = Math.floor(d.created_at.getTime() / 1000) - EARLIER_POST_MARGIN_S;
      const found = await api.findMessage(channel, oldest, (m) => isNoticeOf(m.metadata, d.id));
      return found ? { channel, ts: found.ts } : null;
    } catch (err) {
      if (!isPermanentSlackError(err)) throw err;
      logger.warn({ delivery_id: d.id, error: (err as Error).message }, 'could not look for an unconfirmed Slack post (history scopes?); posting again');
      return null;
    }
  }

  /**
   * The approval was decided before a retry could announce it: the post an earlier attempt made
   * (if any) shows the outcome, so no orphan keeps live buttons. Best effort.
   */
  async function retireEarlierPost(d: store.DeliveryRow, c: store.ChannelWithSecret, f: store.NoticeFacts) {
    try {
      const api = slackApi(deps.slackApiUrl, secretsOf<SlackSecrets>(c).bot_token);
      const earlier = await earlierPost(api, d, await slackTargetOf(api, d));
      if (!earlier) return;
      const content = contentOf(f, deps.publicUrl, d.purpose);
      await api.update(earlier.channel, earlier.ts, slackOutcomeText(outcomeOf(f)), slackOutcomeBlocks(content, outcomeOf(f)));
    } catch (err) {
      logger.warn({ delivery_id: d.id, error: (err as Error).message }, 'could not retire an unconfirmed Slack post');
    }
  }

  async function sendEmail(d: store.DeliveryRow, c: store.ChannelWithSecret, f: store.NoticeFacts) {
    const cfg = readEmailConfig(c.config);
    const person = await store.getPerson(pool, d.target);
    if (!person) throw new UndeliverableNotice('the person to notify is no longer active');
    // One link per decision, bound to this person and approval, expiring with the approval.
    const link = async (decision: 'allow_once' | 'deny') => {
      const linkId = randomUUID();
      await store.insertLink(pool, { id: linkId, approvalId: f.id, personId: person.id, decision, expiresAt: f.expires_at });
      const token = signLink(deps.linkKey, { linkId, approvalId: f.id, personId: person.id, decision, expiresAt: Math.floor(f.expires_at.getTime() / 1000) });
      return `${deps.publicUrl}/v1/integrations/email/decisions/${token}`;
    };
    const message = emailMessage(contentOf(f, deps.publicUrl, d.purpose), { review: await link('allow_once'), deny: await link('deny') });
    const password = secretsOf<EmailSecrets>(c).password;
    const transport = smtpTransport(cfg, password);
    try {
      // The same Message-ID on every attempt: a copy the server took without confirming is dropped.
      const messageId = noticeMessageId(d.id, cfg.from);
      await transport.sendMail({ from: cfg.from, to: person.email, subject: message.subject, text: message.text, html: message.html, messageId });
    } finally {
      transport.close();
    }
    return {};
  }

  async function announce(d: store.DeliveryRow, status: 'delivered' | 'failed', error: string | null) {
    const f = await store.noticeFacts(pool, d.approval_id);
    if (!f) return;
    const data = { approval_id: d.approval_id, delivery_id: d.id, channel_id: d.channel_id, channel: d.channel_name, kind: d.kind, purpose: d.purpose, status, ...(error ? { error } : {}) };
    await deps.audit.append({
      orgId: d.org_id,
      event: `notification.${status}`,
      userId: f.user_id,
      approvalId: d.approval_id,
      callId: f.call_id,
      decision: status,
      details: { delivery_id: d.id, channel_id: d.channel_id, channel: d.channel_name, kind: d.kind, purpose: d.purpose, target: d.target, ...(error ? { error } : {}) },
    });
    const id = `evt_${d.id}_${status}`;
    await publishNoticeEvent({ db: pool, logger }, { orgId: d.org_id, userId: f.user_id }, `notification.${status}`, data, id);
    await deps.emitWebhook({ orgId: d.org_id, type: `notification.${status}`, data, id }).catch((err: unknown) => {
      logger.warn({ err: (err as Error).message }, 'could not emit a notification webhook event');
    });
  }

  return {
    /** Who gets this approval's notice for `purpose`: the deliveries, planned once each. */
    async plan(approvalId: string, purpose: string): Promise<string[]> {
      const f = await facts(approvalId);
      if (f.status !== 'pending' && f.status !== 'bubbled') return [];
      const channels = await store.listChannels(pool, f.org_id);
      if (channels.length === 0) return [];
      const rules: RoutingRule[] = (await store.listRules(pool, f.org_id)).map((r) => ({ id: r.id, match: r.match, routes: r.routes }));
      const refs = channels.map((c) => {
        const slack = c.kind === 'slack' ? readSlackConfig(c.config) : null;
        return { id: c.id, kind: c.kind, hasSlackChannel: Boolean(slack?.channel), dmResolver: Boolean(slack?.dm_resolver) };
      });
      const requester = f.chain.at(-1)!;
      const { routes } = routesFor(rules, refs, { risk: f.risk, service: f.service ?? '', action: f.action ?? '', requesterId: requester.id, userId: f.user_id });
      // Routed to the org's admins (issue 29), "the resolver" is each of them.
      const toAdmins = f.routed_to === 'admins';
      const admins = toAdmins || routes.some((r) => r.to === 'admins') ? (await store.orgAdmins(pool, f.org_id)).map((a) => a.id) : [];
      const resolvers = toAdmins ? admins : [personToNotify(f.resolver_id, f.chain, f.user_id)];
      const ids: string[] = [];
      for (const r of routes) {
        const channel = channels.find((c) => c.id === r.channel_id)!;
        const slackChannel = channel.kind === 'slack' ? readSlackConfig(channel.config).channel : undefined;
        // Reminders and escalations go to the person, never again to a shared channel.
        const targets =
          r.to === 'admins' ? admins : r.to === 'channel' && slackChannel ? (purpose === 'raised' ? [slackChannel] : []) : resolvers;
        for (const target of targets) {
          ids.push(
            await store.planDelivery(pool, {
              orgId: f.org_id,
              approvalId,
              channelId: channel.id,
              kind: channel.kind,
              purpose,
              target,
              recipientId: UUID.test(target) ? target : null,
            }),
          );
        }
      }
      return [...new Set(ids)];
    },

    /**
     * One attempt; throws to be retried. Returns quietly when the delivery already ended. `retry`:
     * an earlier attempt ran (it may have reached Slack without the gateway recording it).
     */
    async deliver(deliveryId: string, attempt: { retry: boolean }): Promise<'delivered' | 'skipped'> {
      const d = await store.getDelivery(pool, deliveryId);
      if (!d || d.status !== 'pending') return 'skipped';
      const c = await store.getChannelWithSecret(pool, d.channel_id);
      if (!c) throw new UndeliverableNotice('the channel was deleted');
      const f = await facts(d.approval_id);
      const retry = attempt.retry || d.attempts > 0;
      // Decided (or expired) while this delivery waited for a retry: announcing it now would mislead.
      if (f.status !== 'pending' && f.status !== 'bubbled') {
        if (retry && c.kind === 'slack') await retireEarlierPost(d, c, f);
        throw new UndeliverableNotice(`the approval was ${f.status} before it could be announced`);
      }
      try {
        const refs = c.kind === 'slack' ? await sendSlack(d, c, f, retry) : await sendEmail(d, c, f);
        await store.countAttempt(pool, d.id, null);
        if (await store.finishDelivery(pool, d.id, { status: 'delivered', error: null, ...refs })) await announce(d, 'delivered', null);
        logger.info({ delivery_id: d.id, approval_id: d.approval_id, kind: d.kind, purpose: d.purpose }, 'approval notice delivered');
        return 'delivered';
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        await store.countAttempt(pool, d.id, reason);
        logger.warn({ delivery_id: d.id, kind: d.kind, error: reason }, 'approval notice attempt failed');
        throw err;
      }
    },

    /** Retries ran out (or no retry can help): the final `failed` state with its reason. */
    async fail(deliveryId: string, reason: string): Promise<void> {
      const d = await store.getDelivery(pool, deliveryId);
      if (!d) return;
      if (await store.finishDelivery(pool, d.id, { status: 'failed', error: reason.slice(0, 500) })) await announce(d, 'failed', reason.slice(0, 500));
    },

    /**
     * Every Slack message of the approval now shows its outcome (buttons removed). Each event of the
     * approval (its decision, its execution) runs one of these, and two can overlap: one that read
     * the state before the other's event may write after it. So after writing, the state is read
     * again and, changed, written again (bounded): the last writer always leaves the newest state.
     */
    async updateSlackMessages(approvalId: string): Promise<number> {
      let updated = 0;
      let shown: string | undefined;
      for (let round = 0; round < 3; round++) {
        const f = await store.noticeFacts(pool, approvalId);
        if (!f || f.status === 'pending' || f.status === 'bubbled') break;
        const outcome = outcomeOf(f);
        const now = JSON.stringify(outcome);
        if (now === shown) break;
        shown = now;
        for (const d of await store.deliveriesOf(pool, approvalId)) {
          if (d.kind !== 'slack' || !d.slack_channel || !d.slack_ts) continue;
          const c = await store.getChannelWithSecret(pool, d.channel_id);
          if (!c) continue;
          const content = contentOf(f, deps.publicUrl, d.purpose);
          await slackApi(deps.slackApiUrl, secretsOf<SlackSecrets>(c).bot_token).update(d.slack_channel, d.slack_ts, slackOutcomeText(outcome), slackOutcomeBlocks(content, outcome));
          if (round === 0) updated++;
        }
      }
      if (shown !== undefined) await store.spendLinksOf(pool, approvalId);
      return updated;
    },

    hasSlackMessages: (approvalId: string) => store.hasSlackMessages(pool, approvalId),

    /** The Slack API of a channel (for interactions: the presser's email, the modal). */
    slackApiOf(c: store.ChannelWithSecret) {
      return slackApi(deps.slackApiUrl, secretsOf<SlackSecrets>(c).bot_token);
    },
    slackSigningSecretOf: (c: store.ChannelWithSecret) => secretsOf<SlackSecrets>(c).signing_secret,
  };
}
export type Deliveries = ReturnType<typeof createDeliveries>;
