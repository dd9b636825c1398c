// What the API and the worker of the same process hand each other directly, skipping a round trip
// through PostgreSQL or Temporal (the eager start: docs/performance.md). One object per process,
// created with the services and passed as an argument to both sides: the call and approval
// services wait and offer, the call activities take and deliver. A worker in another process has an
// exchange of its own where nobody waits: what it delivers is dropped, nothing is offered to it,
// and each side falls back to the database or the workflow, as after a restart.
import type { StoredRequest } from '../execution/stored-request.ts';
import type { ResolvedInstance } from '../registry/service.ts';
import type { ApprovalRecord, CallOutcome } from '../../workflows/definitions.ts';

/** A covered call's request as the API built, validated and resolved it (what the activity would read back). */
export interface PreparedCall {
  stored: StoredRequest;
  /** What `calls.request_redacted` holds (audit details). */
  redacted: unknown;
  instance: ResolvedInstance;
}

/** `answer`: the call's first answer; `defer`: the call goes on to an approval (the update answers). */
export type FirstAnswer = { kind: 'answer'; outcome: CallOutcome } | { kind: 'defer' };

/** Answers keyed by what both sides know; an entry lives only while someone waits. */
export interface AnswerBox<T> {
  /** Starts waiting for `key`'s answer; `cancel` stops (the promise then never settles). */
  expect(key: string): { answer: Promise<T>; cancel(): void };
  /** The delivering side; true when someone in this process was waiting. */
  deliver(key: string, answer: T): boolean;
}

function answerBox<T>(): AnswerBox<T> {
  const waiting = new Map<string, (a: T) => void>();
  return {
    expect(key) {
      const answer = new Promise<T>((resolve) => waiting.set(key, resolve));
      return { answer, cancel: () => void waiting.delete(key) };
    },
    deliver(key, answer) {
      const resolve = waiting.get(key);
      if (!resolve) return false;
      waiting.delete(key);
      resolve(answer);
      return true;
    },
  };
}

/** Offers are dropped after this long: their workflow ran elsewhere, or never started. */
const OFFER_TTL_MS = 30_000;

/** Prepared calls offered by the API, each taken once by the covered-call activity. */
function preparedCalls() {
  const entries = new Map<string, { call: PreparedCall; at: number }>();
  return {
    offer(callId: string, call: PreparedCall): void {
      const now = Date.now();
      // Entries are inserted in time order: sweep the stale head.
      for (const [id, e] of entries) {
        if (now - e.at < OFFER_TTL_MS) break;
        entries.delete(id);
      }
      entries.set(callId, { call, at: now });
    },
    /** The prepared call, once; undefined when this process did not prepare it (or it went stale). */
    take(callId: string): PreparedCall | undefined {
      const e = entries.get(callId);
      if (!e) return undefined;
      entries.delete(callId);
      return Date.now() - e.at < OFFER_TTL_MS ? e.call : undefined;
    },
    /** An offer whose call will not use it (the start failed, or the call goes on to an approval). */
    withdraw(callId: string): void {
      entries.delete(callId);
    },
  };
}

export function createLocalExchange() {
  const firstAnswers = answerBox<FirstAnswer>();
  const counts = { delivered: 0, deferred: 0 };
  return {
    preparedCalls: preparedCalls(),
    /** A covered call's first answer, delivered by its check-and-send activity once its final state is committed. */
    firstAnswers: {
      expect: (callId: string) => firstAnswers.expect(callId),
      /** null: the call goes on to an approval. */
      deliver(callId: string, outcome: CallOutcome | null): void {
        if (!firstAnswers.deliver(callId, outcome ? { kind: 'answer', outcome } : { kind: 'defer' })) return;
        if (outcome) counts.delivered++;
        else counts.deferred++;
      },
      /** How many were taken here (tests and diagnostics). */
      counts: (): Readonly<typeof counts> => ({ ...counts }),
    },
    /** An allow's record, delivered by the activity that commits the decision and sends the call. */
    decisions: answerBox<ApprovalRecord>(),
  };
}

export type LocalExchange = ReturnType<typeof createLocalExchange>;
