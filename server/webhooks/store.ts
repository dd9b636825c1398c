// SQL for webhook subscriptions and their delivery attempts. No authorization and no cryptography
// here: the service decides who may do what and seals the signing secret; this module reads and
// writes rows. Queries taking a subscription id from the API are scoped by org.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Envelope } from '../../core/vault/envelope.ts';
import { envelopeSchema } from '../vault/envelope-schema.ts';

export const webhookRow = z.object({
  id: z.string(),
  org_id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.date(),
  deleted_at: z.date().nullable(),
});
export type WebhookRow = z.infer<typeof webhookRow>;

export const deliveryRow = z.object({
  id: z.number(),
  webhook_id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  attempt: z.number(),
  status_code: z.number().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().nullable(),
  attempted_at: z.date(),
});
export type DeliveryRow = z.infer<typeof deliveryRow>;

// Never `*`: the sealed secret leaves the table only through getDeliveryTarget.
const WEBHOOK_COLUMNS = sql.fragment`id, org_id, url, events, description, created_by, created_at, deleted_at`;

type Db = CommonQueryMethods;

export const createWebhook = (
  db: Db,
  w: { id: string; orgId: string; url: string; events: readonly string[]; secretEnvelope: Envelope; description: string | null; createdBy: string },
) =>
  db.one(sql.type(webhookRow)`
    INSERT INTO webhooks (id, org_id, url, events, secret_envelope, description, created_by)
    VALUES (${w.id}, ${w.orgId}, ${w.url}, ${sql.array(w.events, 'text')}, ${sql.jsonb({ ...w.secretEnvelope })},
            ${w.description}, ${w.createdBy})
    RETURNING ${WEBHOOK_COLUMNS}`);

export const listWebhooks = (db: Db, orgId: string) =>
  db.any(sql.type(webhookRow)`
    SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE org_id = ${orgId} AND deleted_at IS NULL ORDER BY created_at, id`);

export const getWebhook = (db: Db, orgId: string, id: string) =>
  db.maybeOne(sql.type(webhookRow)`
    SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`);

export async function softDeleteWebhook(db: Db, orgId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE webhooks SET deleted_at = now() WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`);
  return r.rowCount > 0;
}

/** Live subscriptions of the org to one event type. */
export const subscribersOf = (db: Db, orgId: string, eventType: string) =>
  db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM webhooks WHERE org_id = ${orgId} AND deleted_at IS NULL AND ${eventType} = ANY(events) ORDER BY created_at, id`);

/** For the delivery activity only: where to send and the sealed secret (null once deleted). */
export const getDeliveryTarget = (db: Db, id: string) =>
  db.maybeOne(sql.type(z.object({ id: z.string(), url: z.string(), secret_envelope: envelopeSchema }))`
    SELECT id, url, secret_envelope FROM webhooks WHERE id = ${id} AND deleted_at IS NULL`);

export const recordDelivery = (
  db: Db,
  d: { webhookId: string; eventId: string; eventType: string; attempt: number; statusCode: number | null; error: string | null; durationMs: number },
) =>
  db.one(sql.type(deliveryRow)`
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, status_code, error, duration_ms)
    VALUES (${d.webhookId}, ${d.eventId}, ${d.eventType}, ${d.attempt}, ${d.statusCode}, ${d.error}, ${d.durationMs})
    RETURNING *`);

export const listDeliveries = (db: Db, webhookId: string, limit: number) =>
  db.any(sql.type(deliveryRow)`
    SELECT * FROM webhook_deliveries WHERE webhook_id = ${webhookId} ORDER BY attempted_at DESC, id DESC LIMIT ${limit}`);

/** Every attempt of the webhook's `limit` most recent events (by their latest attempt). */
export const listRecentEventAttempts = (db: Db, webhookId: string, limit: number) =>
  db.any(sql.type(deliveryRow)`
    SELECT * FROM webhook_deliveries
    WHERE webhook_id = ${webhookId}
      AND event_id IN (SELECT event_id FROM webhook_deliveries WHERE webhook_id = ${webhookId}
                       GROUP BY event_id ORDER BY max(attempted_at) DESC LIMIT ${limit})
    ORDER BY attempted_at, id`);

/** Whether the webhook has ever attempted this event (redelivery is of known events only). */
export const eventTypeOf = (db: Db, webhookId: string, eventId: string) =>
  db.maybeOneFirst(sql.type(z.object({ event_type: z.string() }))`
    SELECT event_type FROM webhook_deliveries WHERE webhook_id = ${webhookId} AND event_id = ${eventId} LIMIT 1`);
