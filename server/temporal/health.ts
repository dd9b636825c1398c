// Is Temporal answering? A probe each second keeps the answer fresh, so a call can be refused at
// once (503 `unavailable`, Retry-After) instead of hanging in the client's own retries while the
// server is down, and a call already waiting is released as soon as the server is seen to die.
// /readyz asks through the same watcher, so a replica that reports ready also accepts calls.
import type { Client } from '@temporalio/client';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';

export const RETRY_AFTER_SECONDS = 2;

export interface TemporalHealth {
  /** False from the first failed probe until one succeeds again. */
  up(): boolean;
  /**
   * Runs a Temporal operation unless Temporal is known to be down; answers `unavailable` as soon
   * as a probe fails while it waits (the operation is abandoned on our side).
   */
  guard<T>(op: (signal: AbortSignal) => Promise<T>, what: string): Promise<T>;
  /** Asks Temporal now and records the answer (as a probe does); rejects with the error. */
  check(timeoutMs: number): Promise<void>;
  stop(): void;
}

export function unavailable(dependency: 'temporal' | 'database', message: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('unavailable', message, { dependency, retry_after_seconds: RETRY_AFTER_SECONDS, ...details });
}

/** Runs Temporal operations through `health` (refused or released with 503 while it is down). */
export function viaTemporal(temporal: Client, health: TemporalHealth | undefined) {
  return <T>(what: string, op: () => Promise<T>): Promise<T> =>
    health ? health.guard((signal) => temporal.connection.withAbortSignal(signal, op), what) : op();
}

/**
 * Answers can arrive out of order: a probe asked while Temporal was down may time out after a later
 * check (a /readyz) already heard Temporal answer. `answered(q)` is true when question `q`'s answer
 * is the newest word (no question asked after `q` has been answered yet), so a stale failure never
 * marks a live Temporal down, nor a stale success a dead one up.
 */
export function newestAnswerWins(): { ask(): number; answered(question: number): boolean } {
  let asked = 0;
  let newest = 0;
  return {
    ask: () => ++asked,
    answered(question) {
      if (question < newest) return false;
      newest = question;
      return true;
    },
  };
}

/**
 * `intervalMs` apart, each probe waits `answerWithinMs` for an answer: the bound /readyz uses too, so
 * a Temporal that answers slowly on a busy machine is not called down (which would release calls
 * in flight with 503), while a stopped one is noticed within about three seconds.
 */
export function watchTemporal(client: Client, logger: Logger, intervalMs = 1_000, answerWithinMs = 2_000): TemporalHealth {
  let healthy = true;
  let waiters = new Set<() => void>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const questions = newestAnswerWins();
  const record = (question: number, ok: boolean) => {
    if (!questions.answered(question)) return;
    if (ok !== healthy) {
      healthy = ok;
      if (ok) logger.info('Temporal answers again');
      else logger.warn('Temporal does not answer: calls are refused with 503 until it is back');
    }
    if (!ok) {
      const w = waiters;
      waiters = new Set();
      for (const fn of w) fn();
    }
  };
  const check = async (timeoutMs: number) => {
    const question = questions.ask();
    try {
      await client.connection.withDeadline(Date.now() + timeoutMs, () => client.connection.workflowService.getSystemInfo({}));
    } catch (err) {
      record(question, false);
      throw err;
    }
    record(question, true);
  };
  const probe = async () => {
    await check(answerWithinMs).catch(() => undefined);
    if (!stopped) timer = setTimeout(() => void probe(), intervalMs).unref();
  };
  timer = setTimeout(() => void probe(), intervalMs).unref();

  return {
    up: () => healthy,
    async guard(op, what) {
      if (!healthy) throw unavailable('temporal', `Temporal is unreachable: ${what} cannot run now; retry shortly`);
      const ctrl = new AbortController();
      let onDown!: () => void;
      const down = new Promise<never>((_, reject) => {
        onDown = () => {
          ctrl.abort();
          reject(unavailable('temporal', `Temporal became unreachable during ${what}; it may still complete once Temporal is back`));
        };
        waiters.add(onDown);
      });
      try {
        return await Promise.race([op(ctrl.signal), down]);
      } finally {
        waiters.delete(onDown);
        down.catch(() => undefined);
      }
    },
    check,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
