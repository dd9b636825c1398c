// The SDK runs workflow code in worker threads and, by default, enters a workflow's sandbox
// through `vm` with a timeout (its deadlock detection). Node starts a watchdog thread for every
// such entry, and a workflow task enters several times: on this machine that was about 3.5 ms of
// the gateway's CPU per covered call, a fifth of it. The gateway's worker enters without the
// per-entry timeout (through the SDK's protected `createWorkflowCreator`, no patch) and watches
// each workflow thread instead, once a second: a thread that leaves a request unanswered for
// `stuckAfterMs`, answering nothing else meanwhile, is running a workflow task that does not end
// (a loop in workflow code). That thread is ended and the worker fails with the report: the
// process stops to be restarted, and the task times out on the server and runs again, as after
// any crash (docs/decisions.md).
import type { Worker as Thread } from 'node:worker_threads';
import { Worker, type WorkerOptions } from '@temporalio/worker';

/** The SDK's worker, its workflow sandbox entered without the per-entry `vm` timeout. */
class WorkerWithoutEntryTimeout extends Worker {
  protected static override async createWorkflowCreator(...args: Parameters<typeof Worker.createWorkflowCreator>) {
    const [bundle, compiled, logger] = args;
    // Undefined reaches `vm`'s `runInContext` as "no timeout": no watchdog thread per entry.
    return super.createWorkflowCreator(bundle, { ...compiled, isolateExecutionTimeoutMs: undefined as unknown as number }, logger);
  }
}

export interface StuckThread {
  thread: Thread;
  /** How long (in whole ticks of the watch) a request had waited with no answer from the thread. */
  waitedMs: number;
}

export interface ThreadWatchOptions {
  /** A request unanswered this long, with no answer at all meanwhile, is stuck (the SDK's own detection gave up after 5 s). */
  stuckAfterMs?: number;
  intervalMs?: number;
  onStuck(stuck: StuckThread): void;
}

/** The id of a request to the thread, or of the answer to one (the SDK's `{ requestId, … }`). */
function requestIdOf(message: unknown): unknown {
  return typeof message === 'object' && message !== null && 'requestId' in message ? (message as { requestId: unknown }).requestId : undefined;
}

/**
 * Watches threads that answer requests by message, each request once (the SDK's workflow threads
 * answer `{ requestId, input }` with `{ requestId, result }`): stuck is a request unanswered for
 * `stuckAfterMs` while the thread answered nothing else either. A loaded thread keeps answering,
 * and an idle one has nothing to answer: neither is stuck, whatever its event loop looks like (a
 * profiler, say, keeps an idle loop's measure busy). What the threads are sent is seen by
 * wrapping their `postMessage`. Reports each thread once; stop() ends the watch.
 */
export function watchThreads(threads: readonly Thread[], opts: ThreadWatchOptions): { stop(): void } {
  const stuckAfterMs = opts.stuckAfterMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 1_000;
  // Counted in ticks, not by the clock: should this process's own event loop stall (a blocking
  // call, a long collection), answers already posted wait behind the next tick, and a clock would
  // blame the thread for the stall. A tick counts only when it found a request unanswered and saw
  // no answer since the tick before.
  const stuckAfterTicks = Math.max(1, Math.ceil(stuckAfterMs / intervalMs));
  const watched = threads.map((thread) => {
    const w = { thread, pending: new Set<unknown>(), answered: false, silentTicks: 0, reported: false };
    const post = thread.postMessage.bind(thread);
    thread.postMessage = (message: unknown, transfer?: Parameters<Thread['postMessage']>[1]) => {
      const id = requestIdOf(message);
      if (id !== undefined) w.pending.add(id);
      post(message, transfer);
    };
    thread.on('message', (message: unknown) => {
      const id = requestIdOf(message);
      if (id === undefined) return;
      w.pending.delete(id);
      w.answered = true;
    });
    return w;
  });
  const timer = setInterval(() => {
    for (const w of watched) {
      if (w.reported) continue;
      w.silentTicks = w.pending.size > 0 && !w.answered ? w.silentTicks + 1 : 0;
      w.answered = false;
      if (w.silentTicks < stuckAfterTicks) continue;
      w.reported = true;
      opts.onStuck({ thread: w.thread, waitedMs: w.silentTicks * intervalMs });
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

export interface WatchedWorker {
  worker: Worker;
  /** Rejects when a workflow thread is stuck; never resolves otherwise. */
  stuck: Promise<never>;
  stopWatching(): void;
}

/**
 * `Worker.create` with the sandbox entered without its per-entry timeout, and its workflow
 * threads watched. The threads are the ones the SDK starts while the worker is created; a worker
 * that started none would go unwatched, so that fails here instead.
 */
export async function createWatchedWorker(options: WorkerOptions, watch: Omit<ThreadWatchOptions, 'onStuck'> = {}): Promise<WatchedWorker> {
  const { worker, threads } = await createCapturingThreads(options);
  // Thrown before the worker runs (the SDK's shutdown() refuses a worker that never ran, and would
  // hide this message behind its own): the caller closes the connection, and the process stops.
  if (threads.length === 0) throw new Error('the Temporal worker started no workflow thread to watch (the SDK changed how it runs workflows?)');
  let fail: (err: Error) => void = () => undefined;
  const stuck = new Promise<never>((_, reject) => {
    fail = reject;
  });
  // Only a caller that awaits it sees the failure; unobserved it must not crash the process.
  stuck.catch(() => undefined);
  const watcher = watchThreads(threads, {
    ...watch,
    onStuck: ({ thread, waitedMs }) => {
      fail(new Error(`workflow thread ${thread.threadId} has not answered a workflow task for ${waitedMs} ms: workflow code stuck (a loop, or a wait that never ends)`));
      // Ends the loop (a core no longer burnt); the SDK then fails the worker's other tasks too.
      void thread.terminate();
    },
  });
  return { worker, stuck, stopWatching: watcher.stop };
}

/** Worker creations one at a time in this process, so each captures only the threads it started. */
let creating: Promise<unknown> = Promise.resolve();

function createCapturingThreads(options: WorkerOptions): Promise<{ worker: Worker; threads: Thread[] }> {
  const created = creating.then(async () => {
    const threads: Thread[] = [];
    const onThread = (thread: Thread) => threads.push(thread);
    process.on('worker', onThread);
    try {
      return { worker: await WorkerWithoutEntryTimeout.create(options), threads };
    } finally {
      process.off('worker', onThread);
    }
  });
  creating = created.catch(() => undefined);
  return created;
}
