// Webhook activities: deliver one signed event to one subscription (one attempt per call; the
// workflow's retry policy does the backoff), and emit an event from other workflows' activities.
// The signing secret is decrypted here, used for the HMAC and dropped: it is never logged,
// recorded, returned or put into a workflow payload.
import type { GatewayMetrics } from '../server/metrics/metrics.ts';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { signatureHeaders } from '../core/webhooks/signing.ts';
import type { Logger } from '../server/logger.ts';
import type { VaultKeyring } from '../server/vault/keyring.ts';
import { emitWebhookEvent, type EmitResult, type WebhookEvent } from '../server/webhooks/emit.ts';
import { webhookSecretAad } from '../server/webhooks/service.ts';
import * as store from '../server/webhooks/store.ts';
import { WEBHOOK_REQUEST_TIMEOUT_MS, type DeliverWebhookInput, type DeliverWebhookResult } from '../workflows/webhook-definitions.ts';

export const WEBHOOK_USER_AGENT = 'agent-action-gateway-webhooks/1';

/** The subscription cannot be delivered to as stored (its secret does not open): retrying cannot help. */
export class WebhookConfigError extends Error {
  override name = 'WebhookConfigError';
}

export interface WebhookActivityDeps {
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  temporal: Client;
  taskQueue: string;
  metrics: Pick<GatewayMetrics, 'webhook'>;
}

function describeFailure(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `no answer within ${WEBHOOK_REQUEST_TIMEOUT_MS / 1000} s`;
  }
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return `network error: ${cause.code}`;
  return `network error: ${err instanceof Error ? err.message : String(err)}`;
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const { pool, logger, keyring } = deps;

  return {
    /** One attempt: sign, POST (10 s timeout, redirects not followed), record, throw unless 2xx. */
    async deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const log = logger.child({ webhook_id: input.webhookId, event_id: input.eventId, event_type: input.eventType, attempt });
      const target = await store.getDeliveryTarget(pool, input.webhookId);
      if (!target) {
        log.info('webhook subscription deleted: delivery skipped');
        return { outcome: 'skipped', attempt };
      }
      const record = (statusCode: number | null, error: string | null, durationMs: number) =>
        store.recordDelivery(pool, { webhookId: target.id, eventId: input.eventId, eventType: input.eventType, attempt, statusCode, error, durationMs });

      let headers: Record<string, string>;
      try {
        const secret = keyring.decrypt(target.secret_envelope, webhookSecretAad(target.id)).toString('utf8');
        headers = signatureHeaders({ id: input.eventId, timestamp: Math.floor(Date.now() / 1000), body: input.body }, secret);
      } catch (err) {
        const reason = err instanceof Error ? err.name : 'error';
        await record(null, `the signing secret cannot be used (${reason})`, 0);
        log.error({ reason }, 'webhook signing secret cannot be used: delivery abandoned');
        throw new WebhookConfigError('the webhook signing secret cannot be decrypted');
      }

      const started = performance.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      try {
        const res = await fetch(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT, ...headers },
          body: input.body,
          redirect: 'manual',
          signal: AbortSignal.any([AbortSignal.timeout(WEBHOOK_REQUEST_TIMEOUT_MS), ctx.cancellationSignal]),
        });
        statusCode = res.status;
        // The answer's body is not used: drop it without reading.
        await res.body?.cancel().catch(() => undefined);
        if (res.status < 200 || res.status > 299) error = `endpoint answered HTTP ${res.status}`;
      } catch (err) {
        error = describeFailure(err);
      }
      const durationMs = Math.round(performance.now() - started);
      await record(statusCode, error, durationMs);
      deps.metrics.webhook(error === null ? 'delivered' : 'attempt_failed');
      if (error !== null) {
        log.warn({ status_code: statusCode, duration_ms: durationMs, error }, 'webhook delivery attempt failed');
        throw ApplicationFailure.retryable(error, 'WebhookDeliveryFailed', { statusCode });
      }
      log.info({ status_code: statusCode, duration_ms: durationMs }, 'webhook delivered');
      return { outcome: 'delivered', statusCode: statusCode ?? 0, attempt };
    },

    /** For other workflows: fan an event out to the org's subscriptions (give `event.id` for idempotency). */
    async emitWebhookEventActivity(event: WebhookEvent): Promise<EmitResult> {
      return emitWebhookEvent({ pool, temporal: deps.temporal, taskQueue: deps.taskQueue }, event);
    },
  };
}
