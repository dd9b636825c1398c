// Follows one approval until it is decided (and, when the gateway replays it by itself, executed).
// Live over a stream where the caller has one — people: GET /v1/events; agents: GET /mcp, which
// carries notifications about the agent's own approvals — and by polling GET /v1/approvals/{id}
// otherwise (and slowly as a safety net, since an event may fall between the call and the stream).
import type { components } from '../../core/api/client.ts';
import { SseParser } from '../mcp/sse.ts';
import { ok, type Caller } from './caller.ts';

export type Approval = components['schemas']['Approval'];

export type FollowEnd =
  | { kind: 'ready'; approval: Approval }
  | { kind: 'denied'; approval: Approval }
  | { kind: 'ended'; approval: Approval }
  | { kind: 'timeout'; approval: Approval | null };

const POLL_MS = 2_000;
const SAFETY_POLL_MS = 15_000;
const FINAL_EXECUTION = new Set(['executed', 'failed', 'expired', 'cancelled']);

/** What the approval's state means for a waiting caller; null while someone still has to act. */
export function settled(a: Approval): FollowEnd | null {
  if (a.status === 'pending' || a.status === 'bubbled') return null;
  if (a.status === 'denied') return { kind: 'denied', approval: a };
  if (a.status !== 'allowed') return { kind: 'ended', approval: a };
  // Allowed: the requester replays it itself, or the gateway does and we wait for the result.
  if (!a.auto_call_on_approve || (a.execution && FINAL_EXECUTION.has(a.execution.status))) return { kind: 'ready', approval: a };
  return null;
}

export interface FollowOptions {
  caller: Caller;
  approvalId: string;
  timeoutMs: number;
  /** Every fresh read of the approval. */
  onUpdate?: (a: Approval) => void;
  /** Whether events arrive live right now (the stream opened, or dropped). */
  onLive?: (live: boolean) => void;
  signal?: AbortSignal;
}

/** Opens the caller's event stream; `onEvent` gets each event's data. Resolves false when there is none. */
async function openStream(caller: Caller, onEvent: (data: string) => void, onEnd: () => void, signal: AbortSignal): Promise<boolean> {
  const path = caller.kind === 'person' ? '/v1/events' : '/mcp';
  let res: Response;
  try {
    res = await caller.fetch(`${caller.url}${path}`, { headers: { accept: 'text/event-stream' }, signal });
  } catch {
    return false;
  }
  if (!res.ok || !res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    await res.body?.cancel().catch(() => undefined);
    return false;
  }
  const parser = new SseParser();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const data of parser.push(decoder.decode(chunk, { stream: true }))) onEvent(data);
      }
    } catch {
      /* aborted or dropped */
    }
    onEnd();
  })();
  return true;
}

export async function followApproval(opts: FollowOptions): Promise<FollowEnd> {
  const { caller, approvalId } = opts;
  const deadline = Date.now() + opts.timeoutMs;
  const stop = new AbortController();
  opts.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  // An event may arrive while a read is in flight: remember it, so the next wait does not sleep.
  const state = { woken: false };
  let resolveWait: (() => void) | null = null;
  const wake = () => {
    state.woken = true;
    resolveWait?.();
  };
  let live = false;
  let reconnectAt = 0;

  let connecting = false;
  const setLive = (v: boolean) => {
    if (live !== v) opts.onLive?.(v);
    live = v;
  };
  // In the background: a stream that is slow to open (or never answers) must not hold up polling.
  const connect = () => {
    if (connecting || stop.signal.aborted) return;
    connecting = true;
    reconnectAt = Date.now() + 5_000;
    void openStream(
      caller,
      (data) => {
        // Any event naming this approval (or a gap in the stream) is worth a fresh read.
        if (data.includes(approvalId) || data.includes('"gap"') || data.includes('refetch')) wake();
      },
      () => {
        setLive(false);
        reconnectAt = Date.now() + 5_000;
        wake();
      },
      stop.signal,
    ).then((opened) => {
      connecting = false;
      if (opened) {
        setLive(true);
        wake(); // read once more: an event may have come before the stream existed
      }
    });
  };

  stop.signal.addEventListener('abort', () => wake(), { once: true });
  try {
    connect();
    for (;;) {
      state.woken = false;
      const last = await ok(caller.api.GET('/v1/approvals/{id}', { params: { path: { id: approvalId } } }));
      opts.onUpdate?.(last);
      const end = settled(last);
      if (end) return end;
      if (stop.signal.aborted) return { kind: 'timeout', approval: last };
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'timeout', approval: last };
      if (!live && Date.now() >= reconnectAt) connect();
      if (state.woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, live ? SAFETY_POLL_MS : POLL_MS));
        resolveWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      resolveWait = null;
    }
  } finally {
    stop.abort();
  }
}
