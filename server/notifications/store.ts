// SQL for approval notices: channels (their secrets sealed), routing rules, reminder settings,
// deliveries with their final state, and the email decision links. No authorization and no
// cryptography here: the service decides and seals; this module reads and writes rows.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Envelope } from '../../core/vault/envelope.ts';
import { envelopeSchema } from '../vault/envelope-schema.ts';

type Db = CommonQueryMethods;

export const channelRow = z.object({
  id: z.string(),
  org_id: z.string(),
  kind: z.enum(['slack', 'email']),
  name: z.string(),
  config: z.record(z.string(), z.unknown()),
  created_by: z.string().nullable(),
  created_at: z.date(),
});
export type ChannelRow = z.infer<typeof channelRow>;
const channelWithSecret = channelRow.extend({ secret_envelope: envelopeSchema });
export type ChannelWithSecret = z.infer<typeof channelWithSecret>;

// Never `*`: the sealed secrets leave the table only through the *WithSecret readers.
const CHANNEL_COLUMNS = sql.fragment`id, org_id, kind, name, config, created_by, created_at`;

export const createChannel = (
  db: Db,
  c: { id: string; orgId: string; kind: 'slack' | 'email'; name: string; config: Record<string, unknown>; secretEnvelope: Envelope; createdBy: string },
) =>
  db.one(sql.type(channelRow)`
    INSERT INTO notification_channels (id, org_id, kind, name, config, secret_envelope, created_by)
    VALUES (${c.id}, ${c.orgId}, ${c.kind}, ${c.name}, ${sql.jsonb(c.config as never)}, ${sql.jsonb({ ...c.secretEnvelope })}, ${c.createdBy})
    RETURNING ${CHANNEL_COLUMNS}`);

export const listChannels = (db: Db, orgId: string) =>
  db.any(sql.type(channelRow)`
    SELECT ${CHANNEL_COLUMNS} FROM notification_channels WHERE org_id = ${orgId} AND deleted_at IS NULL ORDER BY created_at, id`);

/** Whether the org announces approvals anywhere (no channel: no notice workflow is started). */
export const orgHasChannels = (db: Db, orgId: string) =>
  db.exists(sql.unsafe`SELECT 1 FROM notification_channels WHERE org_id = ${orgId} AND deleted_at IS NULL`);

/** Whether any Slack message of the approval awaits its outcome. */
export const hasSlackMessages = (db: Db, approvalId: string) =>
  db.exists(sql.unsafe`SELECT 1 FROM notification_deliveries WHERE approval_id = ${approvalId} AND kind = 'slack' AND slack_ts IS NOT NULL`);

export const getChannelWithSecret = (db: Db, id: string) =>
  db.maybeOne(sql.type(channelWithSecret)`
    SELECT ${CHANNEL_COLUMNS}, secret_envelope FROM notification_channels WHERE id = ${id} AND deleted_at IS NULL`);

/** Every live Slack channel: an interaction is verified against their signing secrets. */
export const slackChannelsWithSecret = (db: Db) =>
  db.any(sql.type(channelWithSecret)`
    SELECT ${CHANNEL_COLUMNS}, secret_envelope FROM notification_channels WHERE kind = 'slack' AND deleted_at IS NULL ORDER BY created_at`);

export async function softDeleteChannel(db: Db, orgId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE notification_channels SET deleted_at = now() WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`);
  return r.rowCount > 0;
}

export const ruleRow = z.object({
  id: z.string(),
  position: z.number(),
  name: z.string(),
  match: z.record(z.string(), z.array(z.string())),
  routes: z.array(z.object({ channel_id: z.string(), to: z.enum(['resolver', 'admins', 'channel']) })),
});
export type RuleRow = z.infer<typeof ruleRow>;

export const listRules = (db: Db, orgId: string) =>
  db.any(sql.type(ruleRow)`
    SELECT id, position, name, match, routes FROM notification_rules WHERE org_id = ${orgId} ORDER BY position`);

/** The whole ordered list replaced at once (in the caller's transaction). */
export async function replaceRules(db: Db, orgId: string, rules: readonly { name: string; match: Record<string, string[]>; routes: unknown[] }[]): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM notification_rules WHERE org_id = ${orgId}`);
  let position = 0;
  for (const r of rules) {
    await db.query(sql.unsafe`
      INSERT INTO notification_rules (org_id, position, name, match, routes)
      VALUES (${orgId}, ${position++}, ${r.name}, ${sql.jsonb(r.match as never)}, ${sql.jsonb(r.routes as never)})`);
  }
}

export const getReminderMarks = (db: Db, orgId: string) =>
  db.maybeOneFirst(sql.type(z.object({ reminders: z.array(z.string()) }))`
    SELECT reminders FROM notification_settings WHERE org_id = ${orgId}`);

export async function putReminderMarks(db: Db, orgId: string, marks: readonly string[]): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO notification_settings (org_id, reminders) VALUES (${orgId}, ${sql.jsonb([...marks])})
    ON CONFLICT (org_id) DO UPDATE SET reminders = EXCLUDED.reminders, updated_at = now()`);
}

// --- what a notice says -------------------------------------------------------------------------

export const noticeFactsRow = z.object({
  id: z.string(),
  org_id: z.string(),
  call_id: z.string(),
  status: z.string(),
  risk: z.string(),
  requester_id: z.string(),
  user_id: z.string(),
  resolver_id: z.string(),
  /** Where the people's routing left it (issue 29): past the user, the approver or the admins decide. */
  routed_to: z.enum(['chain', 'approver', 'admins']),
  action_description: z.string(),
  expires_at: z.date(),
  decision: z.string().nullable(),
  reason: z.string().nullable(),
  resolved_by_name: z.string().nullable(),
  service: z.string().nullable(),
  action: z.string().nullable(),
  request: z.unknown(),
  disclosed: z.unknown(),
  gap_reasons: z.array(z.string()),
  execution: z.object({ status: z.string(), http_status_code: z.number().nullable() }).nullable(),
  /** From the person down to the requester. */
  chain: z.array(z.object({ id: z.string(), kind: z.enum(['user', 'agent', 'subagent']), name: z.string() })),
});
export type NoticeFacts = z.infer<typeof noticeFactsRow>;

export const noticeFacts = (db: Db, approvalId: string) =>
  db.maybeOne(sql.type(noticeFactsRow)`
    WITH RECURSIVE up AS (
      SELECT i.id, i.kind, i.name, i.parent_id, 0 AS depth FROM identities i JOIN approvals a ON a.requester_id = i.id WHERE a.id = ${approvalId}
      UNION ALL
      SELECT p.id, p.kind, p.name, p.parent_id, up.depth + 1 FROM identities p JOIN up ON p.id = up.parent_id WHERE up.depth < 64
    )
    SELECT a.id, a.org_id, a.call_id, a.status, a.risk, a.requester_id, a.user_id, a.resolver_id, a.routed_to, a.action_description,
           a.expires_at, a.decision, a.reason, a.gap_reasons,
           (SELECT name FROM identities WHERE id = a.resolved_by) AS resolved_by_name,
           c.service, c.action, c.request_redacted AS request, c.disclosed,
           (SELECT jsonb_build_object('status', e.status, 'http_status_code', e.http_status_code) FROM executions e WHERE e.approval_id = a.id) AS execution,
           (SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'kind', kind, 'name', name) ORDER BY depth DESC), '[]'::jsonb) FROM up) AS chain
      FROM approvals a LEFT JOIN calls c ON c.id = a.call_id
     WHERE a.id = ${approvalId}`);

export const personRow = z.object({ id: z.string(), org_id: z.string(), name: z.string(), email: z.string(), role: z.enum(['admin', 'member', 'approver']) });
export type PersonRow = z.infer<typeof personRow>;

export const getPerson = (db: Db, id: string) =>
  db.maybeOne(sql.type(personRow)`
    SELECT id, org_id, name, email, role FROM identities WHERE id = ${id} AND kind = 'user' AND status = 'active'`);

export const personByEmail = (db: Db, orgId: string, email: string) =>
  db.maybeOne(sql.type(personRow)`
    SELECT id, org_id, name, email, role FROM identities
     WHERE org_id = ${orgId} AND kind = 'user' AND status = 'active' AND lower(email) = lower(${email})`);

export const orgAdmins = (db: Db, orgId: string) =>
  db.any(sql.type(personRow)`
    SELECT id, org_id, name, email, role FROM identities
     WHERE org_id = ${orgId} AND kind = 'user' AND role = 'admin' AND status = 'active' ORDER BY created_at`);

// --- deliveries ---------------------------------------------------------------------------------

export const deliveryRow = z.object({
  id: z.string(),
  org_id: z.string(),
  approval_id: z.string(),
  channel_id: z.string(),
  channel_name: z.string(),
  kind: z.enum(['slack', 'email']),
  purpose: z.string(),
  target: z.string(),
  recipient_id: z.string().nullable(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number(),
  error: z.string().nullable(),
  slack_channel: z.string().nullable(),
  slack_ts: z.string().nullable(),
  created_at: z.date(),
  finished_at: z.date().nullable(),
});
export type DeliveryRow = z.infer<typeof deliveryRow>;

const DELIVERY_COLUMNS = sql.fragment`d.id, d.org_id, d.approval_id, d.channel_id, ch.name AS channel_name, d.kind, d.purpose, d.target,
  d.recipient_id, d.status, d.attempts, d.error, d.slack_channel, d.slack_ts, d.created_at, d.finished_at`;

/** Idempotent: the same (approval, channel, purpose, target) is planned once; its id is returned either way. */
export const planDelivery = (
  db: Db,
  d: { orgId: string; approvalId: string; channelId: string; kind: 'slack' | 'email'; purpose: string; target: string; recipientId: string | null },
) =>
  db.oneFirst(sql.type(z.object({ id: z.string() }))`
    WITH ins AS (
      INSERT INTO notification_deliveries (org_id, approval_id, channel_id, kind, purpose, target, recipient_id)
      VALUES (${d.orgId}, ${d.approvalId}, ${d.channelId}, ${d.kind}, ${d.purpose}, ${d.target}, ${d.recipientId})
      ON CONFLICT (approval_id, channel_id, purpose, target) DO NOTHING
      RETURNING id)
    SELECT id FROM ins
    UNION ALL
    SELECT id FROM notification_deliveries
     WHERE approval_id = ${d.approvalId} AND channel_id = ${d.channelId} AND purpose = ${d.purpose} AND target = ${d.target}
    LIMIT 1`);

export const getDelivery = (db: Db, id: string) =>
  db.maybeOne(sql.type(deliveryRow)`
    SELECT ${DELIVERY_COLUMNS} FROM notification_deliveries d JOIN notification_channels ch ON ch.id = d.channel_id WHERE d.id = ${id}`);

export const deliveriesOf = (db: Db, approvalId: string) =>
  db.any(sql.type(deliveryRow)`
    SELECT ${DELIVERY_COLUMNS} FROM notification_deliveries d JOIN notification_channels ch ON ch.id = d.channel_id
     WHERE d.approval_id = ${approvalId} ORDER BY d.created_at, d.id`);

export async function countAttempt(db: Db, id: string, error: string | null): Promise<void> {
  await db.query(sql.unsafe`UPDATE notification_deliveries SET attempts = attempts + 1, error = ${error} WHERE id = ${id}`);
}

/** The final state, once: a second finish (an activity retried after it landed) changes nothing. */
export async function finishDelivery(
  db: Db,
  id: string,
  f: { status: 'delivered' | 'failed'; error: string | null; slackChannel?: string | null; slackTs?: string | null },
): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE notification_deliveries
       SET status = ${f.status}, error = ${f.error}, finished_at = now(),
           slack_channel = coalesce(${f.slackChannel ?? null}, slack_channel), slack_ts = coalesce(${f.slackTs ?? null}, slack_ts)
     WHERE id = ${id} AND status = 'pending'`);
  return r.rowCount > 0;
}

// --- email decision links -----------------------------------------------------------------------

export const linkRow = z.object({
  id: z.string(),
  approval_id: z.string(),
  person_id: z.string(),
  decision: z.enum(['allow_once', 'deny']),
  expires_at: z.date(),
  used_at: z.date().nullable(),
});
export type LinkRow = z.infer<typeof linkRow>;

export async function insertLink(db: Db, l: { id: string; approvalId: string; personId: string; decision: 'allow_once' | 'deny'; expiresAt: Date }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO email_decision_links (id, approval_id, person_id, decision, expires_at)
    VALUES (${l.id}, ${l.approvalId}, ${l.personId}, ${l.decision}, ${sql.timestamp(l.expiresAt)})
    ON CONFLICT (id) DO NOTHING`);
}

export const getLink = (db: Db, id: string) =>
  db.maybeOne(sql.type(linkRow)`SELECT id, approval_id, person_id, decision, expires_at, used_at FROM email_decision_links WHERE id = ${id}`);

/** Spends the link: true for the one request that got it. */
export async function useLink(db: Db, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`UPDATE email_decision_links SET used_at = now() WHERE id = ${id} AND used_at IS NULL AND expires_at > now()`);
  return r.rowCount > 0;
}

/** Every link of the approval is spent once one was used (a decision ends them all). */
export async function spendLinksOf(db: Db, approvalId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE email_decision_links SET used_at = now() WHERE approval_id = ${approvalId} AND used_at IS NULL`);
}
