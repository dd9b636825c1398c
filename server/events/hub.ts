// Fans people's events out to the open GET /v1/events streams of this process. The same path the
// MCP streams use (agent-events.ts): a worker publishes with pg_notify, every API replica
// LISTENs on one dedicated connection, opened for the first subscriber and closed after the last.
import type { Logger } from '../logger.ts';
import { createChannelListener } from './listener.ts';
import { inScope, USER_EVENTS_CHANNEL, type EventScope, type UserEvent } from './store.ts';

export interface UserEventHub {
  /** Delivers in-scope events until the returned function runs; `onLost` when the listener drops. */
  subscribe(scope: EventScope, onEvent: (e: UserEvent) => void, onLost: () => void): Promise<() => void>;
}

interface Subscriber {
  scope: EventScope;
  onEvent: (e: UserEvent) => void;
  onLost: () => void;
}

export function createUserEventHub(deps: { connectionUri: string; logger: Logger }): UserEventHub {
  const listener = createChannelListener<Subscriber>({ ...deps, channel: USER_EVENTS_CHANNEL, what: 'user event' }, (payload, subscribers) => {
    let e: UserEvent;
    try {
      e = JSON.parse(payload ?? '') as UserEvent;
    } catch {
      return;
    }
    if (typeof e?.id !== 'string' || typeof e.org_id !== 'string') return;
    for (const s of subscribers) if (inScope(s.scope, e)) s.onEvent(e);
  });
  return { subscribe: (scope, onEvent, onLost) => listener.subscribe({ scope, onEvent, onLost }) };
}
