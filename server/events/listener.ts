// One LISTEN connection per process and channel, shared by that channel's streams: opened for the
// first subscriber, closed after the last. When it drops, every subscriber is told (`onLost`) and
// dropped, so its client reconnects and the next subscriber LISTENs afresh. Used by the agents'
// MCP streams (agent-events.ts) and the people's event stream (hub.ts).
import pg from 'pg';
import type { Logger } from '../logger.ts';

export interface ChannelSubscriber {
  onLost: () => void;
}

export interface ChannelListener<S extends ChannelSubscriber> {
  /** Adds `sub` (connecting first if needed); resolves to its unsubscribe. */
  subscribe(sub: S): Promise<() => void>;
  /**
   * NOTIFYs `payload` on the channel from the listening connection itself (it hears it too, after
   * every notification committed before it: PostgreSQL delivers them in commit order). Rejects
   * when no subscriber keeps the connection open.
   */
  send(payload: string): Promise<void>;
}

/** `onPayload` gets each notification's payload and the current subscribers. */
export function createChannelListener<S extends ChannelSubscriber>(
  deps: { connectionUri: string; channel: string; logger: Logger; what: string },
  onPayload: (payload: string | undefined, subscribers: ReadonlySet<S>) => void,
): ChannelListener<S> {
  const subscribers = new Set<S>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;

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
      if (m.channel === deps.channel) onPayload(m.payload, subscribers);
    });
    c.on('error', (err) => {
      deps.logger.warn({ err: err.message }, `${deps.what} listener connection failed`);
      lost(c);
      c.end().catch(() => undefined);
    });
    c.on('end', () => lost(c));
    await c.connect();
    await c.query(`LISTEN ${deps.channel}`);
    client = c;
    if (subscribers.size === 0) close();
  }

  function close(): void {
    const c = client;
    client = null;
    c?.end().catch(() => undefined);
  }

  return {
    async subscribe(sub) {
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
    async send(payload) {
      if (!client) throw new Error(`${deps.what} listener is not connected`);
      await client.query('SELECT pg_notify($1, $2)', [deps.channel, payload]);
    },
  };
}
