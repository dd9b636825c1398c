// Deliveries a person asks for from the dashboard: a test event to one subscription, and the
// redelivery of an event already attempted. Both are the same delivery workflow as emitted
// events (signed by the activity, retried with backoff). Also reads what a delivery's workflow is
// doing now, for the delivery log's "next retry".
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, WorkflowNotFoundError } from '@temporalio/common';
import type { WorkflowState } from '../../core/webhooks/delivery-log.ts';
import {
  WEBHOOK_TEST_EVENT,
  webhookDeliveryWorkflowId,
  type DeliverWebhookInput,
  type WebhookDeliveryInput,
} from '../../workflows/webhook-definitions.ts';
import { conflict } from '../errors.ts';

export interface ManualDeliveryDeps {
  temporal: Client;
  taskQueue: string;
  /** Tests shorten the retry backoff; production keeps the defaults. */
  retry?: WebhookDeliveryInput['retry'];
}

export function createManualDeliveries(deps: ManualDeliveryDeps) {
  const { temporal, taskQueue } = deps;
  const start = (input: DeliverWebhookInput, redelivery: boolean) =>
    temporal.workflow.start('webhookDeliveryWorkflow', {
      workflowId: webhookDeliveryWorkflowId(input.eventId, input.webhookId),
      taskQueue,
      args: [{ ...input, ...(deps.retry ? { retry: deps.retry } : {}) } satisfies WebhookDeliveryInput],
      // A redelivery is a new run under the same id (so the log and "next retry" follow it); one
      // still retrying is replaced, which makes "redeliver" also mean "try again now".
      ...(redelivery
        ? { workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const, workflowIdConflictPolicy: 'TERMINATE_EXISTING' as const }
        : { workflowIdReusePolicy: 'REJECT_DUPLICATE' as const }),
    });

  return {
    /** A `webhook.test` event (no secret in it) to this subscription only. */
    async sendTest(webhookId: string, sentBy: string): Promise<{ event_id: string }> {
      const eventId = `evt_test_${randomUUID()}`;
      const body = JSON.stringify({
        id: eventId,
        type: WEBHOOK_TEST_EVENT,
        created_at: new Date().toISOString(),
        data: { webhook_id: webhookId, sent_by: sentBy, message: 'A test event sent from the gateway; it needs no action.' },
      });
      await start({ webhookId, eventId, eventType: WEBHOOK_TEST_EVENT, body }, false);
      return { event_id: eventId };
    },

    /** The same bytes again (same event id, so receivers can de-duplicate), signed afresh. */
    async redeliver(webhookId: string, eventId: string): Promise<{ event_id: string }> {
      const handle = temporal.workflow.getHandle(webhookDeliveryWorkflowId(eventId, webhookId));
      let original: WebhookDeliveryInput | undefined;
      try {
        const history = await handle.fetchHistory();
        const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
        original = payload ? defaultPayloadConverter.fromPayload<WebhookDeliveryInput>(payload) : undefined;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      if (!original) throw conflict('this event is no longer kept (past the workflow history retention) and cannot be redelivered');
      await start({ webhookId, eventId, eventType: original.eventType, body: original.body }, true);
      return { event_id: eventId };
    },

    /** Whether the event's delivery still runs and when its next attempt is due; null when unknown. */
    async workflowState(webhookId: string, eventId: string): Promise<WorkflowState | null> {
      try {
        const d = await temporal.workflow.getHandle(webhookDeliveryWorkflowId(eventId, webhookId)).describe();
        const pending = d.raw.pendingActivities?.[0];
        const next = pending?.nextAttemptScheduleTime ?? pending?.scheduledTime;
        const at = next ? Number(next.seconds ?? 0) * 1000 + Math.floor((next.nanos ?? 0) / 1e6) : null;
        return { running: d.status.name === 'RUNNING', nextAttemptAt: at === null ? null : new Date(at) };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return null;
        throw err;
      }
    },
  };
}

export type ManualDeliveries = ReturnType<typeof createManualDeliveries>;
