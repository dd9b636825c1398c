// One store over GET /v1/events (Server-Sent Events). Pages subscribe to approval events and to
// "refetch" signals: after (re)connecting, after a gap the server reports, and every few seconds
// while the stream is down (the polling fallback). The browser resumes with Last-Event-ID itself
// on a transient drop; after a hard failure we reconnect with `last_event_id`.

import { USER_EVENT_TYPES } from '../../../core/events/types.ts';

/** The stream's approval events: the server's list (core/events/types.ts). */
export const APPROVAL_EVENT_TYPES = USER_EVENT_TYPES;

export interface ApprovalEvent {
  id: string;
  type: (typeof APPROVAL_EVENT_TYPES)[number];
  approval_id: string;
  status?: string;
  risk?: string;
  action_description?: string;
  requester_id?: string;
  execution?: { id: string; status: string; http_status_code?: number };
}

export type Signal = { kind: 'event'; event: ApprovalEvent } | { kind: 'refetch' };

const POLL_MS = 5000;
const RECONNECT_MS = 5000;

class EventStream {
  status = $state<'connecting' | 'live' | 'offline'>('connecting');
  private source: EventSource | null = null;
  private lastId: string | null = null;
  private listeners = new Set<(s: Signal) => void>();
  private poll: ReturnType<typeof setInterval> | null = null;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private started = false;

  /** Listens until the returned function runs. */
  on(fn: (s: Signal) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private emit(s: Signal): void {
    for (const fn of this.listeners) fn(s);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.connect();
  }

  stop(): void {
    this.started = false;
    this.source?.close();
    this.source = null;
    this.stopPolling();
    if (this.retry) clearTimeout(this.retry);
    this.status = 'connecting';
  }

  private connect(): void {
    const url = this.lastId ? `/v1/events?last_event_id=${encodeURIComponent(this.lastId)}` : '/v1/events';
    const es = new EventSource(url, { withCredentials: true });
    this.source = es;
    const track = (e: MessageEvent) => {
      if (e.lastEventId) this.lastId = e.lastEventId;
    };
    es.addEventListener('ready', (e) => {
      track(e as MessageEvent);
      this.status = 'live';
      this.stopPolling();
      this.emit({ kind: 'refetch' });
    });
    es.addEventListener('gap', (e) => {
      track(e as MessageEvent);
      this.emit({ kind: 'refetch' });
    });
    for (const type of APPROVAL_EVENT_TYPES) {
      es.addEventListener(type, (e) => {
        const m = e as MessageEvent;
        track(m);
        try {
          this.emit({ kind: 'event', event: JSON.parse(m.data as string) as ApprovalEvent });
        } catch {
          /* a malformed frame is skipped */
        }
      });
    }
    es.onerror = () => {
      this.status = 'offline';
      this.startPolling();
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (an HTTP error): try again ourselves, from where we were.
        es.close();
        if (this.source === es) this.source = null;
        if (this.started) this.retry = setTimeout(() => this.connect(), RECONNECT_MS);
      }
    };
  }

  private startPolling(): void {
    this.poll ??= setInterval(() => this.emit({ kind: 'refetch' }), POLL_MS);
  }

  private stopPolling(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
  }
}

export const events = new EventStream();
