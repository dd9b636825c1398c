// Keeps an embedded child (PostgreSQL, the Temporal dev server) running: when it dies without
// being asked to, it is started again on the same data and port, with a growing pause between
// attempts (logged), so the gateway recovers without a manual restart.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.ts';

export interface RunningChild {
  pid: number;
  /** Resolves when the process exits. */
  exited: Promise<void>;
}

export interface Supervision {
  pid(): number;
  /** Stop restarting (before a deliberate stop). */
  release(): void;
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;
/** Up this long: the next crash starts again from the short pause. */
const STABLE_AFTER_MS = 60_000;

export function superviseRestarts(opts: {
  name: string;
  logger: Logger;
  first: RunningChild;
  restart: () => Promise<RunningChild>;
  /** Stops a child that finished restarting after the supervision was released. */
  stopLate: (pid: number) => Promise<void>;
}): Supervision {
  const { name, logger } = opts;
  let current = opts.first;
  let released = false;
  let startedAt = Date.now();

  void (async () => {
    let delay = FIRST_DELAY_MS;
    for (;;) {
      await current.exited;
      if (released) return;
      if (Date.now() - startedAt > STABLE_AFTER_MS) delay = FIRST_DELAY_MS;
      logger.warn({ child: name, pid: current.pid, restart_in_ms: delay }, `${name} exited unexpectedly: restarting it on the same data`);
      for (;;) {
        await sleep(delay);
        if (released) return;
        delay = Math.min(delay * 2, MAX_DELAY_MS);
        try {
          current = await opts.restart();
          if (released) return await opts.stopLate(current.pid);
          startedAt = Date.now();
          logger.info({ child: name, pid: current.pid }, `${name} restarted`);
          break;
        } catch (err) {
          logger.error({ child: name, err: (err as Error).message, retry_in_ms: delay }, `${name} did not restart`);
        }
      }
      if (released) return;
    }
  })();

  return {
    pid: () => current.pid,
    release: () => {
      released = true;
    },
  };
}
