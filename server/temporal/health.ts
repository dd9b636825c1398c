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

export function watchTemporal(client: Client, logger: Logger, intervalMs = 1_000): TemporalHealth {
  let healthy = true;
  let waiters = new Set<() => void>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const record = (ok: boolean) => {
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
    try {
      await client.connection.withDeadline(Date.now() + timeoutMs, () => client.connection.workflowService.getSystemInfo({}));
    } catch (err) {
      record(false);
      throw err;
    }
    record(true);
  };
  const probe = async () => {
    await check(intervalMs).catch(() => undefined);
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
