// Keeps an embedded child (PostgreSQL, the Temporal dev server) running: when it dies without
// being asked to, it is started again on the same data and port, with a growing pause between
// attempts (logged), so the gateway recovers without a manual restart. The cluster uses it for
// each of its processes too (server/cluster/kept-running.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.ts';

export interface RunningChild {
  pid: number;
  /** Resolves when the process exits (with whatever the caller tracks, e.g. the exit code). */
  exited: Promise<unknown>;
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
  /** Also tells a person, in plain words: the child died, is back, did not come back. */
  announce?: (line: string) => void;
}): Supervision {
  const { name, logger } = opts;
  const announce = opts.announce ?? (() => undefined);
  const seconds = (ms: number) => `${ms / 1000} s`;
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
      announce(`${name} (pid ${current.pid}) exited unexpectedly: restarting it in ${seconds(delay)}`);
      for (;;) {
        await sleep(delay);
        if (released) return;
        delay = Math.min(delay * 2, MAX_DELAY_MS);
        try {
          current = await opts.restart();
          if (released) return await opts.stopLate(current.pid);
          startedAt = Date.now();
          logger.info({ child: name, pid: current.pid }, `${name} restarted`);
          announce(`${name} is back (pid ${current.pid})`);
          break;
        } catch (err) {
          if (released) return; // a start cut short by the deliberate stop
          logger.error({ child: name, err: (err as Error).message, retry_in_ms: delay }, `${name} did not restart`);
          announce(`${name} did not restart (${(err as Error).message}): next attempt in ${seconds(delay)}`);
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
