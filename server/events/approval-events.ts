// One approval event, published everywhere it goes: the requesting agent's MCP streams, the
// people's event log (GET /v1/events) and the org's webhooks. Used by the call workflow's
// activities and by the API when it closes an approval whose workflow is gone, so both send the
// same data under the same stable event id.
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { injectedSecrets } from '../../core/permissions/keys.ts';
import type { WebhookEventType } from '../../workflows/webhook-definitions.ts';
// The approval and its execution, read on the caller's own connection (the call activities and workflow-gone.ts pass theirs).
import * as calls from '../calls/store.ts';
import type { Logger } from '../logger.ts';
import { presentExecution } from '../approvals/present.ts';
import { notifyAgentEvent } from './agent-events.ts';
import { publishUserEvent } from './store.ts';

export interface ApprovalEventTarget {
  orgId: string;
  userId: string;
  requesterId: string;
}

export interface ApprovalEventDeps {
  db: DatabasePool;
  logger: Logger;
  /** Starts the org's webhook deliveries for the event (idempotent by event id). */
  emitWebhook: (event: { orgId: string; type: WebhookEventType; data: Record<string, unknown>; id: string }) => Promise<void>;
}

/** The event's data: the approval as it now stands, with its execution when there is one. */
export async function approvalEventData(db: CommonQueryMethods, approvalId: string): Promise<Record<string, unknown>> {
  const [a, exec] = await Promise.all([calls.getApproval(db, approvalId), calls.getExecutionByApproval(db, approvalId)]);
  if (!a) return { approval_id: approvalId };
  const secrets = injectedSecrets(a.permission_keys);
  return {
    approval_id: a.id,
    status: a.status,
    risk: a.risk,
    permission_keys: a.permission_keys,
    action_description: a.action_description,
    ...(secrets.length > 0 ? { secrets } : {}),
    requester_id: a.requester_id,
    resolver_id: a.resolver_id,
    decision: a.decision,
    reason: a.reason,
    expires_at: a.expires_at.toISOString(),
    ...(exec ? { execution: presentExecution(exec) } : {}),
    // Allowed with changes: what ran instead of what the agent asked (never the request itself).
    ...(a.edit_diff ? { modified_by_approver: true, diff: a.edit_diff, edited_permission_keys: a.edited_permission_keys, edited_description: a.edited_description } : {}),
  };
}

/** Event ids are stable per approval and transition, so a retry never delivers twice. */
export const approvalEventId = (type: WebhookEventType, data: Record<string, unknown>): string =>
  `evt_${String(data.approval_id)}_${type.slice('approval.'.length)}${data.status ? `_${String(data.status)}` : ''}`;

/**
 * Publishes one approval event to its three destinations at once (they are independent, and each
 * is best effort: a failure is logged, never thrown).
 */
export async function publishApprovalEvent(deps: ApprovalEventDeps, to: ApprovalEventTarget, type: WebhookEventType, data: Record<string, unknown>): Promise<void> {
  const id = approvalEventId(type, data);
  await Promise.all([
    notifyAgentEvent(deps.db, { requesterId: to.requesterId, type, data }, deps.logger),
    publishUserEvent(deps.db, { orgId: to.orgId, userId: to.userId, type, data, dedupeKey: id }, deps.logger),
    deps.emitWebhook({ orgId: to.orgId, type, data, id }).catch((err: unknown) => {
      deps.logger.warn({ err: (err as Error).message, type }, 'could not emit webhook event');
    }),
  ]);
}
