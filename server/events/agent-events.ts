// Server-initiated MCP notifications about an agent's approvals, across replicas: the process that
// records a transition (a Temporal worker) sends `pg_notify('gateway_events', …)`; every API
// process LISTENs on one dedicated connection and fans the events out to the `GET /mcp` streams
// of that agent. Nothing is kept in memory beyond who is listening right now.
import pg from 'pg';
import { sql, type CommonQueryMethods } from 'slonik';
import type { Logger } from '../logger.ts';

export const AGENT_EVENTS_CHANNEL = 'gateway_events';

/** What a stream receives: small enough for NOTIFY's 8000-byte payload limit (no result body). */
export interface AgentEvent {
  type: string;
  approval_id: string;
  status?: string;
  decision?: string;
  reason?: string;
  action_description?: string;
  execution?: { id: string; status: string; triggered_by?: string; http_status_code?: number };
}

const clip = (v: unknown, max: number): string | undefined => (typeof v === 'string' ? v.slice(0, max) : undefined);

function compact(type: string, data: Record<string, unknown>): AgentEvent {
  const exec = data.execution as Record<string, unknown> | undefined;
  const event: AgentEvent = { type, approval_id: String(data.approval_id) };
  const status = clip(data.status, 40);
  const decision = clip(data.decision, 40);
  const reason = clip(data.reason, 1000);
  const description = clip(data.action_description, 500);
  if (status) event.status = status;
  if (decision) event.decision = decision;
  if (reason) event.reason = reason;
  if (description) event.action_description = description;
  if (exec && typeof exec.id === 'string') {
    event.execution = { id: exec.id, status: String(exec.status) };
    if (typeof exec.triggered_by === 'string') event.execution.triggered_by = exec.triggered_by;
    if (typeof exec.http_status_code === 'number') event.execution.http_status_code = exec.http_status_code;
  }
  return event;
}

/**
 * Tells the requester's open `GET /mcp` streams (on any replica) that one of its approvals was
 * resolved or executed (the raise itself was the answer to its call). Best effort: a failure is
 * logged and never breaks the caller (the workflow's activity).
 */
export async function notifyAgentEvent(
  db: CommonQueryMethods,
  e: { requesterId: string; type: string; data: Record<string, unknown> },
  logger?: Pick<Logger, 'warn'>,
): Promise<void> {
  if (e.type === 'approval.raised') return;
  try {
    const payload = JSON.stringify({ agent_id: e.requesterId, event: compact(e.type, e.data) });
    await db.query(sql.unsafe`SELECT pg_notify(${AGENT_EVENTS_CHANNEL}, ${payload})`);
  } catch (err) {
    logger?.warn({ err: (err as Error).message, type: e.type }, 'could not notify agent event streams');
  }
}

export interface AgentEventHub {
  /**
   * Delivers the agent's events to `onEvent` until the returned function is called. `onLost` runs
   * when the listening connection drops (the stream should end so its client reconnects).
   */
  subscribe(agentId: string, onEvent: (e: AgentEvent) => void, onLost: () => void): Promise<() => void>;
}

interface Subscriber {
  onEvent: (e: AgentEvent) => void;
  onLost: () => void;
}

/** One LISTEN connection per process, opened on the first subscriber and closed after the last. */
export function createAgentEventHub(deps: { connectionUri: string; logger: Logger }): AgentEventHub {
  const { logger } = deps;
  const subscribers = new Map<string, Set<Subscriber>>();
  let count = 0;
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;

  function dispatch(payload: string | undefined): void {
    if (!payload) return;
    let msg: { agent_id?: unknown; event?: AgentEvent };
    try {
      msg = JSON.parse(payload) as typeof msg;
    } catch {
      return;
    }
    if (typeof msg.agent_id !== 'string' || !msg.event) return;
    for (const s of subscribers.get(msg.agent_id) ?? []) s.onEvent(msg.event);
  }

  /** The connection is gone: every stream ends, so its client reconnects and we LISTEN afresh. */
  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = null;
    const all = [...subscribers.values()].flatMap((set) => [...set]);
    subscribers.clear();
    count = 0;
    for (const s of all) s.onLost();
  }

  async function open(): Promise<void> {
    const c = new pg.Client({ connectionString: deps.connectionUri, keepAlive: true });
    c.on('notification', (m) => {
      if (m.channel === AGENT_EVENTS_CHANNEL) dispatch(m.payload);
    });
    c.on('error', (err) => {
      logger.warn({ err: err.message }, 'agent event listener connection failed');
      lost(c);
      c.end().catch(() => undefined);
    });
    c.on('end', () => lost(c));
    await c.connect();
    await c.query(`LISTEN ${AGENT_EVENTS_CHANNEL}`);
    client = c;
    if (count === 0) close();
  }

  function close(): void {
    const c = client;
    client = null;
    c?.end().catch(() => undefined);
  }

  return {
    async subscribe(agentId, onEvent, onLost) {
      const sub: Subscriber = { onEvent, onLost };
      let set = subscribers.get(agentId);
      if (!set) subscribers.set(agentId, (set = new Set()));
      set.add(sub);
      count++;
      let active = true;
      const unsubscribe = () => {
        if (!active) return;
        active = false;
        const s = subscribers.get(agentId);
        if (!s?.delete(sub)) return; // already dropped by lost()
        if (s.size === 0) subscribers.delete(agentId);
        if (--count === 0 && client) close();
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
