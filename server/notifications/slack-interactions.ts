// Button presses and modal submissions from Slack (POST /v1/integrations/slack/interactions).
// Verified first, by Slack's signature and timestamp against the signing secret of the org's
// Slack channel (core/notifications/slack-signature.ts); then the presser's Slack email is the
// gateway person who decides, through the same resolve path as the dashboard. Anyone without
// authority gets an ephemeral "you cannot decide this"; a presser Slack cannot name (users.info
// fails) is told so: every verified interaction gets a 200 with an answer, never a 500.
import { z } from 'zod';
import { slackDenyModal } from '../../core/notifications/message.ts';
import { verifySlackRequest, type SlackVerdict } from '../../core/notifications/slack-signature.ts';
import type { ApprovalRecord } from '../../workflows/definitions.ts';
import type { AuditWriter } from '../audit/writer.ts';
import type { Principal, UserPrincipal } from '../auth/principal.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { DatabasePool } from 'slonik';
import type { Deliveries } from './deliveries.ts';
import { SlackApiError } from './slack-api.ts';
import type { SlackResponder } from './slack-response.ts';
import * as store from './store.ts';

export const CANNOT_DECIDE = 'You cannot decide this approval.';
export const UNKNOWN_PRESSER = 'Slack could not tell who you are, so you cannot decide this approval here. Open it in the gateway instead.';
export const NO_DENY_FORM = 'Slack could not open the Deny form. Try again, or deny the approval in the gateway.';

const uuid = z.uuid();
const blockActions = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string() }),
  trigger_id: z.string().optional(),
  response_url: z.url().optional(),
  container: z.object({ channel_id: z.string().optional(), message_ts: z.string().optional() }).optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).min(1),
});
const viewSubmission = z.object({
  type: z.literal('view_submission'),
  user: z.object({ id: z.string() }),
  view: z.object({
    callback_id: z.string(),
    private_metadata: z.string(),
    state: z.object({ values: z.record(z.string(), z.record(z.string(), z.object({ value: z.string().nullable().optional() }))) }),
  }),
});

/** What the route answers Slack: a status and, for a modal, a JSON body. */
export interface SlackAnswer {
  status: number;
  body?: unknown;
}

export interface SlackInteractionDeps {
  pool: DatabasePool;
  /** Audit rows (bound to the pool by the composition root). */
  audit: AuditWriter;
  logger: Logger;
  deliveries: Deliveries;
  /** Answers to a press's response_url (Slack's host only, the outbound address policy). */
  responder: SlackResponder;
  /** The dashboard's resolve path. */
  resolve: (p: Principal, approvalId: string, body: { decision: 'allow_once' | 'deny'; reason?: string }) => Promise<ApprovalRecord>;
  /** Whether `p` may decide the approval (the same authority the resolve checks). */
  mayResolve: (p: Principal, approvalId: string) => Promise<boolean>;
}

const asPerson = (person: store.PersonRow, via: string): UserPrincipal => ({
  type: 'user',
  orgId: person.org_id,
  userId: person.id,
  identityId: person.id,
  role: person.role,
  sessionId: via,
});

export function createSlackInteractions(deps: SlackInteractionDeps) {
  const { pool, logger, deliveries } = deps;

  /**
   * The channels whose signing secret signed this request (none: refused). Several when orgs share
   * one Slack app; the approval's own org then picks among them (`channelFor`).
   */
  async function verifiedChannels(headers: { timestamp: string | undefined; signature: string | undefined }, rawBody: string) {
    let verdict: SlackVerdict = { ok: false, reason: 'mismatch' };
    const signed: store.ChannelWithSecret[] = [];
    for (const c of await store.slackChannelsWithSecret(pool)) {
      verdict = verifySlackRequest(deliveries.slackSigningSecretOf(c), headers, rawBody, Math.floor(Date.now() / 1000));
      if (verdict.ok) signed.push(c);
      else if (verdict.reason !== 'mismatch') break; // stale or missing: the same for every secret
    }
    return signed.length ? { channels: signed } : { refused: verdict.ok ? 'mismatch' : verdict.reason };
  }

  /** The verified channel of the approval's org (an approval of another org: the first, which then finds no authority). */
  async function channelFor(channels: store.ChannelWithSecret[], approvalId: string) {
    if (channels.length === 1) return channels[0]!;
    const facts = await store.noticeFacts(pool, approvalId);
    return channels.find((c) => c.org_id === facts?.org_id) ?? channels[0]!;
  }

  const ephemeral = (responseUrl: string | undefined, text: string) => deps.responder.ephemeral(responseUrl, text);

  /** The person behind the Slack user, in the channel's org; else what to tell the presser. */
  async function presserOf(c: store.ChannelWithSecret, slackUserId: string): Promise<{ person: store.PersonRow } | { refused: string }> {
    let email: string | null;
    try {
      email = await deliveries.slackApiOf(c).userEmail(slackUserId);
    } catch (err) {
      // users.info failed (`user_not_found` for a user Slack does not know, or Slack is down).
      if (!(err instanceof SlackApiError)) throw err;
      logger.warn({ error: err.message }, "could not read a Slack presser's email");
      return { refused: UNKNOWN_PRESSER };
    }
    const person = email ? await store.personByEmail(pool, c.org_id, email) : null;
    return person ? { person } : { refused: CANNOT_DECIDE };
  }

  async function decide(c: store.ChannelWithSecret, person: store.PersonRow, approvalId: string, decision: 'allow_once' | 'deny', reason?: string) {
    const p = asPerson(person, `slack:${c.id}`);
    await deps.resolve(p, approvalId, { decision, ...(reason ? { reason } : {}) });
    await deps.audit.append({
      orgId: person.org_id,
      event: 'approval.decided_in_slack',
      actorId: person.id,
      approvalId,
      decision,
      details: { channel_id: c.id, channel: c.name, ...(reason ? { reason } : {}) },
    });
    await deliveries.updateSlackMessages(approvalId).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'could not update the Slack messages'));
  }

  const refusalText = (err: unknown) =>
    err instanceof AppError && (err.code === 'conflict' || err.code === 'workflow_gone') ? `This approval can no longer be decided: ${err.message}.` : CANNOT_DECIDE;

  return {
    async handle(headers: { timestamp: string | undefined; signature: string | undefined }, rawBody: string): Promise<SlackAnswer> {
      const verified = await verifiedChannels(headers, rawBody);
      if (!verified.channels) {
        logger.warn({ reason: verified.refused }, 'Slack interaction refused: signature');
        return { status: 401 };
      }
      let payload: unknown;
      try {
        payload = JSON.parse(new URLSearchParams(rawBody).get('payload') ?? '');
      } catch {
        return { status: 400 };
      }
      const action = blockActions.safeParse(payload);
      if (action.success) {
        const a = action.data;
        const pressed = a.actions[0]!;
        if (pressed.action_id === 'open') return { status: 200 };
        if ((pressed.action_id !== 'allow_once' && pressed.action_id !== 'deny') || !uuid.safeParse(pressed.value).success) return { status: 400 };
        const approvalId = pressed.value!;
        const c = await channelFor(verified.channels, approvalId);
        const presser = await presserOf(c, a.user.id);
        if ('refused' in presser) {
          await ephemeral(a.response_url, presser.refused);
          return { status: 200 };
        }
        const { person } = presser;
        if (!(await deps.mayResolve(asPerson(person, `slack:${c.id}`), approvalId))) {
          await ephemeral(a.response_url, CANNOT_DECIDE);
          return { status: 200 };
        }
        if (pressed.action_id === 'deny') {
          if (!a.trigger_id) return { status: 400 };
          const ref = a.container?.channel_id && a.container.message_ts ? `${a.container.channel_id}:${a.container.message_ts}` : '';
          try {
            await deliveries.slackApiOf(c).openView(a.trigger_id, slackDenyModal(approvalId, ref));
          } catch (err) {
            if (!(err instanceof SlackApiError)) throw err;
            logger.warn({ error: err.message }, 'could not open the Slack Deny modal');
            await ephemeral(a.response_url, NO_DENY_FORM);
          }
          return { status: 200 };
        }
        try {
          await decide(c, person, approvalId, 'allow_once');
        } catch (err) {
          await ephemeral(a.response_url, refusalText(err));
        }
        return { status: 200 };
      }
      const view = viewSubmission.safeParse(payload);
      if (view.success && view.data.view.callback_id === 'deny_reason') {
        const v = view.data.view;
        let approvalId: unknown;
        try {
          approvalId = (JSON.parse(v.private_metadata) as { approval_id?: unknown }).approval_id;
        } catch {
          return { status: 400 };
        }
        if (typeof approvalId !== 'string' || !uuid.safeParse(approvalId).success) return { status: 400 };
        const reason = v.state.values.reason?.reason?.value?.trim();
        if (!reason) return { status: 200, body: { response_action: 'errors', errors: { reason: 'Say why the request is denied.' } } };
        const c = await channelFor(verified.channels, approvalId);
        const presser = await presserOf(c, view.data.user.id);
        if ('refused' in presser) return { status: 200, body: { response_action: 'errors', errors: { reason: presser.refused } } };
        try {
          await decide(c, presser.person, approvalId, 'deny', reason.slice(0, 1000));
        } catch (err) {
          return { status: 200, body: { response_action: 'errors', errors: { reason: refusalText(err) } } };
        }
        return { status: 200, body: { response_action: 'clear' } };
      }
      return { status: 400 };
    },
  };
}
export type SlackInteractions = ReturnType<typeof createSlackInteractions>;
