// Server-initiated MCP notifications about an agent's approvals, across replicas: the process that
// records a transition (a Temporal worker) sends `pg_notify('gateway_events', …)`; every API
// process LISTENs on one dedicated connection and fans the events out to the `GET /mcp` streams
// of that agent. Nothing is kept in memory beyond who is listening right now.
import { randomUUID } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import type { Logger } from '../logger.ts';
import { waitAtMost } from '../../core/async/wait-at-most.ts';
import { createChannelListener } from './listener.ts';
import { notifyChannel } from './store.ts';

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
  /** `call.progress`: the API request waiting for the call, and the upstream tool's progress. */
  request_id?: string;
  progress?: number;
  total?: number;
  message?: string;
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
    await notifyChannel(db, AGENT_EVENTS_CHANNEL, payload);
  } catch (err) {
    logger?.warn({ err: (err as Error).message, type: e.type }, 'could not notify agent event streams');
  }
}

/** The kind of agent event that is not about an approval: the agent's tool list changed. */
export const TOOLS_LIST_CHANGED = 'tools.list_changed';

/**
 * Tells the agent's open `GET /mcp` streams (on any replica) that its tool list changed (its person
 * turned self-approval on or off: `gateway_approve_self` appears or goes). Best effort.
 */
export async function notifyToolsListChanged(db: CommonQueryMethods, agentId: string, logger?: Pick<Logger, 'warn'>): Promise<void> {
  try {
    const payload = JSON.stringify({ agent_id: agentId, event: { type: TOOLS_LIST_CHANGED, approval_id: '' } });
    await notifyChannel(db, AGENT_EVENTS_CHANNEL, payload);
  } catch (err) {
    logger?.warn({ err: (err as Error).message }, 'could not notify agent event streams of a tool list change');
  }
}

/** A long MCP tool's progress, for the request that made the call (server/mcp/progress.ts relays it). */
export const CALL_PROGRESS = 'call.progress';

/**
 * Tells the API process holding the agent's request (any replica) how far the upstream tool got.
 * Best effort and never awaited by the call: a lost progress notification costs nothing.
 */
export async function notifyCallProgress(
  db: CommonQueryMethods,
  to: { requesterId: string; requestId: string },
  p: { progress: number; total?: number | undefined; message?: string | undefined },
  logger?: Pick<Logger, 'warn'>,
): Promise<void> {
  try {
    const event: AgentEvent = { type: CALL_PROGRESS, approval_id: '', request_id: to.requestId.slice(0, 200), progress: p.progress };
    if (typeof p.total === 'number') event.total = p.total;
    const message = clip(p.message, 500);
    if (message) event.message = message;
    await notifyChannel(db, AGENT_EVENTS_CHANNEL, JSON.stringify({ agent_id: to.requesterId, event }));
  } catch (err) {
    logger?.warn({ err: (err as Error).message }, 'could not relay a call’s progress');
  }
}

/**
 * What an agent's event stream (GET /mcp, subscriptions/listen) makes of an event: its tool list
 * changed, one of its approvals moved, or nothing (progress belongs to the request that made the
 * call: server/mcp/progress.ts).
 */
export function streamNotice(event: AgentEvent): 'tools_list_changed' | 'approval' | null {
  if (event.type === TOOLS_LIST_CHANGED) return 'tools_list_changed';
  if (event.type === CALL_PROGRESS) return null;
  return 'approval';
}

export interface AgentEventHub {
  /**
   * Delivers the agent's events to `onEvent` until the returned function is called. `onLost` runs
   * when the listening connection drops (the stream should end so its client reconnects).
   */
  subscribe(agentId: string, onEvent: (e: AgentEvent) => void, onLost: () => void): Promise<() => void>;
  /**
   * Resolves once every event NOTIFYed before it has been handed to its subscribers (at most
   * `withinMs` later; never rejects). Only while this process has a subscriber.
   */
  fence(withinMs: number): Promise<void>;
}

interface Subscriber {
  agentId: string;
  onEvent: (e: AgentEvent) => void;
  onLost: () => void;
}

/** One LISTEN connection per process (listener.ts), opened on the first subscriber and closed after the last. */
export function createAgentEventHub(deps: { connectionUri: string; logger: Logger }): AgentEventHub {
  // Fences this process sent and waits for, by id (other replicas hear them too and ignore them).
  const fences = new Map<string, () => void>();
  const listener = createChannelListener<Subscriber>({ ...deps, channel: AGENT_EVENTS_CHANNEL, what: 'agent event' }, (payload, subscribers) => {
    if (!payload) return;
    let msg: { agent_id?: unknown; event?: AgentEvent; fence?: unknown };
    try {
      msg = JSON.parse(payload) as typeof msg;
    } catch {
      return;
    }
    if (typeof msg.fence === 'string') return fences.get(msg.fence)?.();
    if (typeof msg.agent_id !== 'string' || !msg.event) return;
    for (const s of subscribers) if (s.agentId === msg.agent_id) s.onEvent(msg.event);
  });
  return {
    subscribe: (agentId, onEvent, onLost) => listener.subscribe({ agentId, onEvent, onLost }),
    async fence(withinMs) {
      const id = randomUUID();
      const heard = new Promise<void>((resolve) => fences.set(id, resolve));
      const sent = listener.send(JSON.stringify({ fence: id }));
      sent.catch((err: Error) => deps.logger.warn({ err: err.message }, 'could not fence the agent events'));
      await waitAtMost(sent.then(() => heard), withinMs);
      fences.delete(id);
    },
  };
}
