// Emitting an event: one Temporal workflow per live subscription of the org to that event type,
// started fire-and-forget. The body `{id, type, created_at, data}` is fixed here, once, so every
// attempt (and every retry of the emitting activity) signs and sends the same bytes.
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { CommonQueryMethods } from 'slonik';
import { webhookDeliveryWorkflowId, type WebhookDeliveryInput, type WebhookEventType } from '../../workflows/webhook-definitions.ts';
import * as store from './store.ts';

export interface WebhookEmitDeps {
  pool: CommonQueryMethods;
  temporal: Client;
  taskQueue: string;
}

export interface WebhookEvent {
  orgId: string;
  type: WebhookEventType;
  /** Must carry no secret: it is stored in workflow history and sent to the receivers. */
  data: Record<string, unknown>;
  /**
   * A stable id makes emitting idempotent (an activity retry starts no second delivery), e.g.
   * `evt_<approvalId>_raised`. Default: `evt_<uuid>`.
   */
  id?: string;
}

export interface EmitOptions {
  /** Tests shorten the retry backoff; production keeps the defaults. */
  retry?: WebhookDeliveryInput['retry'];
}

export interface EmitResult {
  eventId: string;
  /** One per subscription, `webhook-<eventId>-<webhookId>`. */
  workflowIds: string[];
}

const EVENT_ID = /^evt_[A-Za-z0-9_.:-]{1,200}$/;

export const newEventId = () => `evt_${randomUUID()}`;

export async function emitWebhookEvent(deps: WebhookEmitDeps, event: WebhookEvent, opts: EmitOptions = {}): Promise<EmitResult> {
  const eventId = event.id ?? newEventId();
  if (!EVENT_ID.test(eventId)) throw new RangeError('webhook event ids look like evt_<letters, digits, _ . : ->');
  const subscribers = await store.subscribersOf(deps.pool, event.orgId, event.type);
  if (subscribers.length === 0) return { eventId, workflowIds: [] };
  const body = JSON.stringify({ id: eventId, type: event.type, created_at: new Date().toISOString(), data: event.data });
  const workflowIds: string[] = [];
  for (const webhookId of subscribers) {
    const workflowId = webhookDeliveryWorkflowId(eventId, webhookId);
    const input: WebhookDeliveryInput = { webhookId, eventId, eventType: event.type, body, ...(opts.retry ? { retry: opts.retry } : {}) };
    try {
      await deps.temporal.workflow.start('webhookDeliveryWorkflow', {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [input],
        // Same event, same subscription: never a second delivery, even after the first finished.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    workflowIds.push(workflowId);
  }
  return { eventId, workflowIds };
}
