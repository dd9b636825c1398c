// Shared between the webhook delivery workflow and the rest of the gateway: event kinds, the
// workflow's input and id, and its retry policy (DESIGN.md §5 "Webhooks").

import type { WebhookEventType } from '../core/events/types.ts';

export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../core/events/types.ts';

/** Sent on request to one subscription (the dashboard's "Send test event"), whatever it subscribes to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
export type DeliveredEventType = WebhookEventType | typeof WEBHOOK_TEST_EVENT;

/** One delivery of one event to one subscription. Carries no secret: the activity decrypts it. */
export interface DeliverWebhookInput {
  webhookId: string;
  eventId: string;
  eventType: DeliveredEventType;
  /** The exact JSON text that is signed and sent: `{id, type, created_at, data}`. */
  body: string;
}

export interface DeliverWebhookResult {
  outcome: 'delivered' | 'skipped';
  statusCode?: number;
  attempt: number;
}

export interface WebhookDeliveryInput extends DeliverWebhookInput {
  /** Tests shorten the backoff; production uses the defaults below. */
  retry?: { initialIntervalMs?: number; maximumIntervalMs?: number; maximumAttempts?: number };
}

/** Exponential backoff for up to 24 h: 1 s, 2 s, 4 s, … capped at 1 h between attempts. */
export const WEBHOOK_RETRY = {
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 60 * 60 * 1_000,
  scheduleToClose: '24 hours',
} as const;

/** Per attempt: the HTTP request itself times out after 10 s; the rest is bookkeeping. */
export const WEBHOOK_REQUEST_TIMEOUT_MS = 10_000;
export const WEBHOOK_ATTEMPT_TIMEOUT = '30 seconds';

/** Error type names that stop the retries (a retry cannot fix them). */
export const WEBHOOK_NON_RETRYABLE = ['WebhookConfigError'] as const;

/** One workflow per (event, subscription): starting it twice is a no-op. */
export const webhookDeliveryWorkflowId = (eventId: string, webhookId: string) => `webhook-${eventId}-${webhookId}`;
