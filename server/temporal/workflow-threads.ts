// The SDK runs workflow code in worker threads and, by default, enters a workflow's sandbox
// through `vm` with a timeout (its deadlock detection). Node starts a watchdog thread for every
// such entry, and a workflow task enters several times: on this machine that was about 3.5 ms of
// the gateway's CPU per covered call, a fifth of it. The gateway's worker enters without the
// per-entry timeout (through the SDK's protected `createWorkflowCreator`, no patch) and watches
// each workflow thread instead, once a second: a thread whose event loop stays busy without one
// answer for `stuckAfterMs` is running a workflow task that does not end (a loop in workflow
// code). That thread is ended and the worker fails with the report: the process stops to be
// restarted, and the task times out on the server and runs again, as after any crash
// (docs/decisions.md).
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
  /** How long its event loop had been busy without answering. */
  busyMs: number;
}

export interface ThreadWatchOptions {
  /** Busy without an answer this long is stuck (the SDK's own detection gave up after 5 s). */
  stuckAfterMs?: number;
  intervalMs?: number;
  onStuck(stuck: StuckThread): void;
}

/** A tick counts as busy when the thread's event loop was this busy in it (a blocked loop reads 1). */
const BUSY_UTILIZATION = 0.9;

/**
 * Watches threads that answer requests by message: stuck is busy for `stuckAfterMs` with no
 * message posted meanwhile. A busy thread that keeps answering (a loaded worker) is not stuck; an
 * idle one is not busy. Reports each thread once; stop() ends the watch.
 */
export function watchThreads(threads: readonly Thread[], opts: ThreadWatchOptions): { stop(): void } {
  const stuckAfterMs = opts.stuckAfterMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 1_000;
  const watched = threads.map((thread) => {
    const w = { thread, answered: false, busyMs: 0, reported: false, elu: thread.performance.eventLoopUtilization() };
    thread.on('message', () => {
      w.answered = true;
    });
    return w;
  });
  const timer = setInterval(() => {
    for (const w of watched) {
      if (w.reported) continue;
      const now = w.thread.performance.eventLoopUtilization();
      const tick = w.thread.performance.eventLoopUtilization(now, w.elu);
      w.elu = now;
      w.busyMs = !w.answered && tick.utilization >= BUSY_UTILIZATION ? w.busyMs + tick.active : 0;
      w.answered = false;
      if (w.busyMs >= stuckAfterMs) {
        w.reported = true;
        opts.onStuck({ thread: w.thread, busyMs: Math.round(w.busyMs) });
      }
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
  const threads: Thread[] = [];
  const onThread = (thread: Thread) => threads.push(thread);
  process.on('worker', onThread);
  let worker: Worker;
  try {
    worker = await WorkerWithoutEntryTimeout.create(options);
  } finally {
    process.off('worker', onThread);
  }
  if (threads.length === 0) {
    await worker.shutdown();
    throw new Error('the Temporal worker started no workflow thread to watch (the SDK changed how it runs workflows?)');
  }
  let fail: (err: Error) => void = () => undefined;
  const stuck = new Promise<never>((_, reject) => {
    fail = reject;
  });
  // Only a caller that awaits it sees the failure; unobserved it must not crash the process.
  stuck.catch(() => undefined);
  const watcher = watchThreads(threads, {
    ...watch,
    onStuck: ({ thread, busyMs }) => {
      fail(new Error(`workflow thread ${thread.threadId} has been busy for ${busyMs} ms without finishing a workflow task: workflow code stuck in a loop`));
      // Ends the loop (a core no longer burnt); the SDK then fails the worker's other tasks too.
      void thread.terminate();
    },
  });
  return { worker, stuck, stopWatching: watcher.stop };
}
