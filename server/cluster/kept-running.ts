// A cluster process that is started again when it dies unasked, as docker compose's restart
// policy does for its containers: the embedded children's supervisor (superviseRestarts, backoff
// from 0.5 s to 30 s) around the cluster's own start step, with a line on the cluster's output
// when the process dies and when it is back. A deliberate stop() restarts nothing.
import type { Logger } from '../logger.ts';
import { superviseRestarts, type Supervision } from '../embedded/supervisor.ts';
import type { Supervised } from './temporal-server.ts';

/**
 * Starts the process once; resolves when it is usable (a replica: ready). `signal` aborts a start
 * still waiting when the cluster stops: the start then stops what it launched and throws.
 */
export type StartStep = (signal: AbortSignal) => Promise<Supervised>;

export interface KeptRunning {
  readonly name: string;
  /** The current process; a restart changes it once the new process is usable. */
  readonly pid: number;
  /** Resolves with the exit code of the current process when it ends. */
  readonly exited: Promise<number | null>;
  /** Stops the process; it is not restarted until start(). */
  stop(): Promise<void>;
  /** Starts it again after stop(), supervised again. */
  start(): Promise<void>;
}

export async function keepRunning(opts: { name: string; logger: Logger; announce: (line: string) => void; start: StartStep }): Promise<KeptRunning> {
  let current!: Supervised;
  let supervision: Supervision | undefined;
  let aborter = new AbortController();
  let restarting: Promise<Supervised> | undefined;

  const begin = async () => {
    aborter = new AbortController();
    current = await opts.start(aborter.signal);
    supervision = superviseRestarts({
      name: opts.name,
      logger: opts.logger,
      first: current,
      announce: opts.announce,
      restart: async () => {
        restarting = opts.start(aborter.signal);
        try {
          current = await restarting;
          return current;
        } finally {
          restarting = undefined;
        }
      },
      // stop() waits for a restart in flight and stops its process itself.
      stopLate: async () => undefined,
    });
  };
  await begin();

  return {
    name: opts.name,
    get pid() {
      return current.pid;
    },
    get exited() {
      return current.exited;
    },
    async stop() {
      supervision?.release();
      supervision = undefined;
      aborter.abort();
      await restarting?.catch(() => undefined);
      await current.stop();
    },
    async start() {
      if (supervision) return;
      await begin();
    },
  };
}
