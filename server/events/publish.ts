// Where a recorded approval transition is told to whoever is watching: the requester agent's MCP
// streams (agent-events.ts) and its person's dashboard streams (store.ts, GET /v1/events). The
// call activities publish through here; the transports only listen.
import type { DatabasePool } from 'slonik';
import type { Logger } from '../logger.ts';
import { notifyAgentEvent } from './agent-events.ts';
import { publishUserEvent } from './store.ts';

/** Best effort on both paths: a failure is logged and never breaks the caller (an activity). */
export async function publishApprovalEvent(
  db: DatabasePool,
  e: { orgId: string; userId: string; requesterId: string; type: string; data: Record<string, unknown>; dedupeKey: string },
  logger: Logger,
): Promise<void> {
  await notifyAgentEvent(db, { requesterId: e.requesterId, type: e.type, data: e.data }, logger);
  await publishUserEvent(db, { orgId: e.orgId, userId: e.userId, type: e.type, data: e.data, dedupeKey: e.dedupeKey }, logger);
}
