// In-process hand-off of a call's prepared request from the API to the covered-call activity.
// The API has just built, validated and encrypted the request and resolved the service instance;
// when the workflow's first task runs in the same process (the embedded default, role "all"),
// the activity takes them from here instead of reading the call row back and decrypting it and
// resolving the instance again. In another process, on a retry, or after a restart, the entry is
// absent and the activity reads the database as before. Entries are immutable, taken once, and
// dropped after a short time, so nothing accumulates.
import type { StoredRequest } from '../execution/stored-request.ts';
import type { ResolvedInstance } from '../registry/service.ts';

export interface PreparedCall {
  stored: StoredRequest;
  /** What `calls.request_redacted` holds (audit details). */
  redacted: unknown;
  instance: ResolvedInstance;
}

const TTL_MS = 30_000;
const entries = new Map<string, { call: PreparedCall; at: number }>();

export function offerPreparedCall(callId: string, call: PreparedCall): void {
  const now = Date.now();
  // Entries are inserted in time order: sweep the stale head (workflows that ran elsewhere).
  for (const [id, e] of entries) {
    if (now - e.at < TTL_MS) break;
    entries.delete(id);
  }
  entries.set(callId, { call, at: now });
}

/** The prepared call, once; undefined when this process did not prepare it (or it went stale). */
export function takePreparedCall(callId: string): PreparedCall | undefined {
  const e = entries.get(callId);
  if (!e) return undefined;
  entries.delete(callId);
  return Date.now() - e.at < TTL_MS ? e.call : undefined;
}

/** Drops an offer whose workflow never started (the start failed). */
export function withdrawPreparedCall(callId: string): void {
  entries.delete(callId);
}
