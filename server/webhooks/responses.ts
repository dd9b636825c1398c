// Response bodies of the webhook routes. Only the creation answer carries the signing secret.
import { z } from 'zod';
import { timestamp, uuid } from '../http/openapi/common.ts';
import { WEBHOOK_EVENT_TYPES } from '../../workflows/webhook-definitions.ts';

export const Webhook = z
  .strictObject({
    id: uuid,
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    description: z.string().nullable(),
    created_by: uuid.nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Webhook' });

export const NewWebhook = z
  .strictObject({ ...Webhook.shape, secret: z.string().describe('The signing secret: shown once, never again.') })
  .meta({ id: 'NewWebhook' });

export const WebhookDelivery = z
  .strictObject({
    id: z.int(),
    event_id: z.string(),
    event_type: z.string(),
    attempt: z.int(),
    status_code: z.int().nullable(),
    error: z.string().nullable(),
    duration_ms: z.int().nullable(),
    attempted_at: timestamp,
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookList = z.strictObject({ webhooks: z.array(Webhook) });
export const DeliveryList = z.strictObject({ deliveries: z.array(WebhookDelivery) });

export const WebhookEventSummary = z
  .strictObject({
    event_id: z.string(),
    event_type: z.string(),
    state: z.enum(['delivered', 'retrying', 'failed']).describe('`retrying`: attempts go on with backoff; `failed`: they stopped without a 2xx.'),
    attempts: z.int().describe('Attempts of every run (redeliveries included).'),
    last_status_code: z.int().nullable(),
    last_error: z.string().nullable(),
    first_attempt_at: timestamp,
    last_attempt_at: timestamp,
    next_retry_at: timestamp.nullable().describe('When the next attempt is due, while retrying.'),
  })
  .meta({ id: 'WebhookEventSummary' });

export const WebhookEventList = z.strictObject({ events: z.array(WebhookEventSummary) });
export const WebhookDeliveryStarted = z
  .strictObject({ event_id: z.string().describe('Delivery started; its attempts appear in the delivery log.') })
  .meta({ id: 'WebhookDeliveryStarted' });
