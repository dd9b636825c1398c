// An agent's cancellation of a long upstream MCP tool, passed from the replica that receives it to
// the process running the tool (issue 43). /mcp is stateless and the tool runs in a Temporal
// activity, so two hops go over PostgreSQL NOTIFY, each addressed like progress is:
//   1. `notifications/cancelled {requestId}` (any replica) → the API process holding that agent's
//      JSON-RPC request, which knows the API request id that made the call (`request` marks);
//   2. that process → the worker process sending the call for that API request (`send` marks),
//      which aborts the upstream request.
// Each process keeps one LISTEN connection for this (opened on first use, kept until stop: a call
// costs no connection) and, in memory, only the marks of requests and sends open right now.
import type { CommonQueryMethods } from 'slonik';
import type { Logger } from '../logger.ts';
import { createChannelListener } from './listener.ts';
import { notifyChannel } from './store.ts';

export const CALL_CANCELS_CHANNEL = 'gateway_call_cancels';

/** What is open and may be cancelled: an agent's /mcp request, or the upstream send it is waiting for. */
export type CancelMark =
  | { kind: 'request'; agentId: string; rpcId: string | number }
  | { kind: 'send'; agentId: string; requestId: string };

/** One text per mark; JSON-RPC ids as JSON, so `1` and `"1"` stay apart. */
export function markKey(m: CancelMark): string {
  return JSON.stringify(m.kind === 'request' ? [m.kind, m.agentId, m.rpcId] : [m.kind, m.agentId, m.requestId]).slice(0, 1000);
}

export interface CallCancels {
  /**
   * Runs `onCancel` when `mark` is cancelled, until the returned release is called. Resolves once
   * this process listens (at once after the first time).
   */
  hold(mark: CancelMark, onCancel: () => void): Promise<() => void>;
  /** Tells every process (itself included). Best effort: a lost cancellation lets the call finish. */
  cancel(mark: CancelMark): Promise<void>;
  stop(): void;
}

export function createCallCancels(deps: { connectionUri: string; db: CommonQueryMethods; logger: Logger }): CallCancels {
  const open = new Map<string, Set<() => void>>();
  const listener = createChannelListener<{ onLost: () => void }>({ connectionUri: deps.connectionUri, channel: CALL_CANCELS_CHANNEL, logger: deps.logger, what: 'call cancellation' }, (payload) => {
    for (const onCancel of (payload && open.get(payload)) || []) onCancel();
  });
  let listening: Promise<() => void> | null = null;
  let stopped = false;
  const listen = (): Promise<void> => {
    // A dropped connection is reopened by the next hold.
    listening ??= listener.subscribe({ onLost: () => (listening = null) }).catch((err: unknown) => {
      listening = null;
      throw err;
    });
    return listening.then(() => undefined);
  };

  return {
    async hold(mark, onCancel) {
      const key = markKey(mark);
      const holders = open.get(key) ?? new Set();
      holders.add(onCancel);
      open.set(key, holders);
      const release = () => {
        holders.delete(onCancel);
        if (holders.size === 0 && open.get(key) === holders) open.delete(key);
      };
      if (!stopped) {
        try {
          await listen();
        } catch (err) {
          deps.logger.warn({ err: (err as Error).message }, 'cannot listen for call cancellations: this call cannot be cancelled');
        }
      }
      return release;
    },
    async cancel(mark) {
      try {
        await notifyChannel(deps.db, CALL_CANCELS_CHANNEL, markKey(mark));
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message }, 'could not pass a call cancellation on');
      }
    },
    stop() {
      stopped = true;
      void listening?.then((unsubscribe) => unsubscribe()).catch(() => undefined);
      listening = null;
    },
  };
}
