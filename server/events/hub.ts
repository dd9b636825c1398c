// Fans people's events out to the open GET /v1/events streams of this process. The same path the
// MCP streams use (agent-events.ts): a worker publishes with pg_notify, every API replica
// LISTENs on one dedicated connection, opened for the first subscriber and closed after the last.
import pg from 'pg';
import type { Logger } from '../logger.ts';
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
  const subscribers = new Set<Subscriber>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;

  function dispatch(payload: string | undefined): void {
    let e: UserEvent;
    try {
      e = JSON.parse(payload ?? '') as UserEvent;
    } catch {
      return;
    }
    if (typeof e?.id !== 'string' || typeof e.org_id !== 'string') return;
    for (const s of subscribers) if (inScope(s.scope, e)) s.onEvent(e);
  }

  /** The connection is gone: every stream ends, its client resumes with Last-Event-ID. */
  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = null;
    const all = [...subscribers];
    subscribers.clear();
    for (const s of all) s.onLost();
  }

  async function open(): Promise<void> {
    const c = new pg.Client({ connectionString: deps.connectionUri, keepAlive: true });
    c.on('notification', (m) => {
      if (m.channel === USER_EVENTS_CHANNEL) dispatch(m.payload);
    });
    c.on('error', (err) => {
      deps.logger.warn({ err: err.message }, 'user event listener connection failed');
      lost(c);
      c.end().catch(() => undefined);
    });
    c.on('end', () => lost(c));
    await c.connect();
    await c.query(`LISTEN ${USER_EVENTS_CHANNEL}`);
    client = c;
    if (subscribers.size === 0) close();
  }

  function close(): void {
    const c = client;
    client = null;
    c?.end().catch(() => undefined);
  }

  return {
    async subscribe(scope, onEvent, onLost) {
      const sub: Subscriber = { scope, onEvent, onLost };
      subscribers.add(sub);
      const unsubscribe = () => {
        if (subscribers.delete(sub) && subscribers.size === 0 && client) close();
      };
      try {
        if (!client) await (connecting ??= open().finally(() => (connecting = null)));
      } catch (err) {
        unsubscribe();
        throw err;
      }
      return unsubscribe;
    },
  };
}
