// One approval event, published everywhere it goes: the requesting agent's MCP streams, the
// people's event log (GET /v1/events) and the org's webhooks. Used by the call workflow's
// activities and by the API when it closes an approval whose workflow is gone, so both send the
// same data under the same stable event id.
import type { DatabasePool } from 'slonik';
import type { WebhookEventType } from '../../workflows/webhook-definitions.ts';
import type { Logger } from '../logger.ts';
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

/** What an event for people only needs: the pool, and a logger for a failure (never thrown). */
export interface PersonEventDeps {
  db: DatabasePool;
  logger: Pick<Logger, 'warn'>;
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

/**
 * A bubble changes whose inbox holds the approval: the people's stream hears it (no webhook kind
 * exists for a bubble, and the agent's view of its call does not change). Best effort, as above.
 */
export async function publishBubble(deps: PersonEventDeps, to: Omit<ApprovalEventTarget, 'requesterId'>, approvalId: string, toId: string, data: Record<string, unknown>): Promise<void> {
  await publishUserEvent(deps.db, { orgId: to.orgId, userId: to.userId, type: 'approval.bubbled', data, dedupeKey: `evt_${approvalId}_bubbled_${toId}` }, deps.logger);
}

/** An approval notice's final state (issue 30), for the person whose call it announced. */
export async function publishNoticeEvent(
  deps: PersonEventDeps,
  to: Omit<ApprovalEventTarget, 'requesterId'>,
  type: 'notification.delivered' | 'notification.failed',
  data: Record<string, unknown>,
  id: string,
): Promise<void> {
  await publishUserEvent(deps.db, { orgId: to.orgId, userId: to.userId, type, data, dedupeKey: id }, deps.logger);
}
