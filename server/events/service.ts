// The people's event log as the event stream reads it (the writes happen where transitions are
// recorded: server/events/store.ts publishUserEvent).
import type { DatabasePool } from 'slonik';
import { eventsAfter, storedBounds, viewersNow, type EventScope, type UserEvent } from './store.ts';
import { turnBatcher } from './turn-batch.ts';
import { mayReceive, type ViewerNow } from './visibility.ts';

export type { EventScope, UserEvent };

type ViewerQuestion = { viewer: { orgId: string; userId: string }; approvalIds: string[] };

export function createEventService(deps: { pool: DatabasePool }) {
  // Every open stream asks about its viewer when an event arrives, all in the same turn: one read
  // answers them all (500 open dashboards, one statement per event).
  const viewerNow = turnBatcher<ViewerQuestion, ViewerNow>((asked) => viewersNow(deps.pool, asked.map((q) => q.viewer), asked.flatMap((q) => q.approvalIds)));
  return {
    /** The lowest and highest ids still kept (null: none). */
    bounds: () => storedBounds(deps.pool),
    /** The scope's events after `afterId`, oldest first, at most `limit`. */
    after: (scope: EventScope, afterId: bigint, limit: number) => eventsAfter(deps.pool, scope, afterId, limit),
    /**
     * Of `events`, those the viewer may receive now (one read of the viewer's current role and
     * approvals, however many events, shared with the other streams asking in the same turn), and
     * the viewer's role (null: no longer an active person).
     */
    async deliverable(viewer: { orgId: string; userId: string }, events: readonly UserEvent[]) {
      if (events.length === 0) return { events: [], role: undefined };
      const now = await viewerNow({ viewer, approvalIds: events.map((e) => e.data.approval_id) });
      return { events: events.filter((e) => mayReceive(now, e)), role: now.role };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
