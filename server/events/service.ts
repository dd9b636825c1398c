// The people's event log as the event stream reads it (the writes happen where transitions are
// recorded: server/events/store.ts publishUserEvent).
import type { DatabasePool } from 'slonik';
import { eventsAfter, storedBounds, type EventScope, type UserEvent } from './store.ts';

export type { EventScope, UserEvent };

export function createEventService(deps: { pool: DatabasePool }) {
  return {
    /** The lowest and highest ids still kept (null: none). */
    bounds: () => storedBounds(deps.pool),
    /** The scope's events after `afterId`, oldest first, at most `limit`. */
    after: (scope: EventScope, afterId: bigint, limit: number) => eventsAfter(deps.pool, scope, afterId, limit),
  };
}

export type EventService = ReturnType<typeof createEventService>;
