// Holding a request while something it waits for may change (a person deciding an approval, an
// approved call executing): re-read on every event for the agent (PostgreSQL LISTEN/NOTIFY, any
// replica) and at a slow poll besides (events are best effort), until it changes, a deadline passes
// or the client goes away.
import type { AgentEventHub } from '../events/agent-events.ts';
import type { Logger } from '../logger.ts';

/** Sleeps that end early on a wake-up; one rung before the sleep is not lost. */
export interface Waker {
  sleep(ms: number): Promise<void>;
  close(): void;
}

export function createWaker(): Waker & { ring(): void } {
  let rung = false;
  let wake: (() => void) | null = null;
  return {
    ring() {
      if (wake) wake();
      else rung = true;
    },
    sleep(ms) {
      if (rung) {
        rung = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          wake = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        wake = done;
      });
    },
    close() {
      wake?.();
    },
  };
}

/** A waker rung by the agent's events and by the client going away (`signal`). */
export async function agentEventWaker(events: AgentEventHub, agentId: string, signal: AbortSignal, logger: Pick<Logger, 'warn'>): Promise<Waker> {
  const waker = createWaker();
  let unsubscribe = () => {};
  try {
    unsubscribe = await events.subscribe(agentId, () => waker.ring(), () => waker.ring());
  } catch (err) {
    // The poll alone still sees the change, a little later.
    logger.warn({ err: (err as Error).message }, 'could not listen for agent events while holding an MCP request');
  }
  const onAbort = () => waker.ring();
  signal.addEventListener('abort', onAbort);
  return {
    sleep: (ms) => waker.sleep(ms),
    close() {
      signal.removeEventListener('abort', onAbort);
      unsubscribe();
      waker.close();
    },
  };
}

/**
 * Re-reads with `read` while `waiting` holds for what it read, until `deadline` (epoch ms) or
 * `signal` aborts; the last read is returned (null: there is nothing to read any more).
 */
export async function holdWhile<T>(
  read: () => Promise<T | null>,
  waiting: (value: T) => boolean,
  opts: { deadline: number; signal: AbortSignal; waker: Waker; pollMs: number },
): Promise<T | null> {
  let value = await read();
  while (value !== null && waiting(value) && !opts.signal.aborted) {
    const left = opts.deadline - Date.now();
    if (left <= 0) break;
    await opts.waker.sleep(Math.min(left, opts.pollMs));
    if (opts.signal.aborted) break;
    value = await read();
  }
  return value;
}
