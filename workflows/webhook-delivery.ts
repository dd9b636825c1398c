// Delivers one webhook event to one subscription. The single activity signs and POSTs; a non-2xx
// answer or a network error fails the attempt and Temporal retries it with exponential backoff.
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import { WEBHOOK_ATTEMPT_TIMEOUT, WEBHOOK_NON_RETRYABLE, WEBHOOK_RETRY, type DeliverWebhookResult, type WebhookDeliveryInput } from './webhook-definitions.ts';

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<DeliverWebhookResult> {
  const { retry, ...delivery } = input;
  const { deliverWebhook } = proxyActivities<ReturnType<typeof createActivities>>({
    startToCloseTimeout: WEBHOOK_ATTEMPT_TIMEOUT,
    scheduleToCloseTimeout: WEBHOOK_RETRY.scheduleToClose,
    retry: {
      initialInterval: retry?.initialIntervalMs ?? WEBHOOK_RETRY.initialIntervalMs,
      backoffCoefficient: WEBHOOK_RETRY.backoffCoefficient,
      maximumInterval: retry?.maximumIntervalMs ?? WEBHOOK_RETRY.maximumIntervalMs,
      ...(retry?.maximumAttempts !== undefined ? { maximumAttempts: retry.maximumAttempts } : {}),
      nonRetryableErrorTypes: [...WEBHOOK_NON_RETRYABLE],
    },
  });
  return deliverWebhook(delivery);
}
