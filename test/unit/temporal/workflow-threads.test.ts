// The workflow-thread watch (server/temporal/workflow-threads.ts) on real threads that speak the
// SDK's shape (`{ requestId, input }` answered by `{ requestId, result }`): a thread stuck on a
// request is reported, once, and only it; a thread that is busy but keeps answering, or idle with
// nothing asked of it, is not — even with a profiler running, which made an idle thread's event
// loop look busy to an earlier version of the watch.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker as Thread } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { watchThreads, type StuckThread } from '../../../server/temporal/workflow-threads.ts';

/** Answers each request after `input` ms of busy work; input 'loop' spins for good. */
const THREAD_CODE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ requestId, input }) => {
  if (input === 'loop') { for (;;) {} }
  const until = Date.now() + input;
  while (Date.now() < until) {}
  parentPort.postMessage({ requestId, result: { type: 'ok' } });
});
parentPort.postMessage({ ready: true });
`;

const threads: Thread[] = [];
async function startThread(execArgv: string[] = []): Promise<Thread> {
  const thread = new Thread(THREAD_CODE, { eval: true, execArgv });
  threads.push(thread);
  await new Promise((resolve) => thread.once('message', resolve));
  return thread;
}

afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.terminate()));
});

const WATCH = { stuckAfterMs: 600, intervalMs: 150 };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('watchThreads', () => {
  it('reports a thread stuck on a request, once, and not the idle one beside it', async () => {
    const [looping, idle] = [await startThread(), await startThread()];
    const reports: StuckThread[] = [];
    let reported!: () => void;
    const first = new Promise<void>((r) => (reported = r));
    const watch = watchThreads([looping, idle], {
      ...WATCH,
      onStuck: (s) => {
        reports.push(s);
        reported();
      },
    });
    looping.postMessage({ requestId: 1n, input: 5 });
    looping.postMessage({ requestId: 2n, input: 'loop' });
    await first;
    await pause(WATCH.intervalMs * 5);
    watch.stop();
    expect(reports).toHaveLength(1);
    expect(reports[0]!.thread).toBe(looping);
    expect(reports[0]!.waitedMs).toBeGreaterThanOrEqual(WATCH.stuckAfterMs);
  });

  it('does not report a thread that is busy all the time but keeps answering', async () => {
    const busy = await startThread();
    const reports: StuckThread[] = [];
    const watch = watchThreads([busy], { ...WATCH, onStuck: (s) => reports.push(s) });
    // Back to back requests of 40 ms for five times the stuck threshold: the loop never idles.
    let next = 0n;
    let answered = 0;
    busy.on('message', () => {
      answered++;
      busy.postMessage({ requestId: next++, input: 40 });
    });
    busy.postMessage({ requestId: next++, input: 40 });
    await pause(WATCH.stuckAfterMs * 5);
    watch.stop();
    expect(answered).toBeGreaterThan(10);
    expect(reports).toEqual([]);
  });

  it('does not blame a thread for a stall of the watching process itself', async () => {
    const thread = await startThread();
    const reports: StuckThread[] = [];
    const watch = watchThreads([thread], { ...WATCH, onStuck: (s) => reports.push(s) });
    thread.postMessage({ requestId: 1n, input: 20 });
    // This process blocks longer than the threshold: the answer, posted meanwhile, waits behind it.
    const until = Date.now() + WATCH.stuckAfterMs * 2;
    while (Date.now() < until) {
      // blocking
    }
    await pause(WATCH.intervalMs * 4);
    watch.stop();
    expect(reports).toEqual([]);
  });

  it('does not report an idle thread with nothing asked of it, under a CPU profiler too', async () => {
    const profiles = await mkdtemp(path.join(os.tmpdir(), 'watch-test-profiles-'));
    try {
      const idle = [await startThread(), await startThread(['--cpu-prof', `--cpu-prof-dir=${profiles}`])];
      const reports: StuckThread[] = [];
      const watch = watchThreads(idle, { ...WATCH, onStuck: (s) => reports.push(s) });
      await pause(WATCH.stuckAfterMs * 4);
      watch.stop();
      expect(reports).toEqual([]);
    } finally {
      await Promise.all(threads.splice(0).map((t) => t.terminate()));
      await rm(profiles, { recursive: true, force: true });
    }
  });
});
