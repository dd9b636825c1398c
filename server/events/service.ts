// The people's event log as the event stream reads it (the writes happen where transitions are
// recorded: server/events/store.ts publishUserEvent).
import type { DatabasePool } from 'slonik';
import { eventsAfter, storedBounds, viewerNow, type EventScope, type UserEvent } from './store.ts';
import { mayReceive } from './visibility.ts';

export type { EventScope, UserEvent };

export function createEventService(deps: { pool: DatabasePool }) {
  return {
    /** The lowest and highest ids still kept (null: none). */
    bounds: () => storedBounds(deps.pool),
    /** The scope's events after `afterId`, oldest first, at most `limit`. */
    after: (scope: EventScope, afterId: bigint, limit: number) => eventsAfter(deps.pool, scope, afterId, limit),
    /**
     * Of `events`, those the viewer may receive now (one read of the viewer's current role and
     * approvals, however many events), and the viewer's role (null: no longer an active person).
     */
    async deliverable(viewer: { orgId: string; userId: string }, events: readonly UserEvent[]) {
      if (events.length === 0) return { events: [], role: undefined };
      const now = await viewerNow(deps.pool, viewer, events.map((e) => e.data.approval_id));
      return { events: events.filter((e) => mayReceive(now, e)), role: now.role };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
