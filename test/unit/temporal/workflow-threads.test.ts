// The workflow-thread watch (server/temporal/workflow-threads.ts) on real threads: a thread stuck
// in a loop is reported and only it; a thread that is busy but keeps answering, or idle, is not.
import { Worker as Thread } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { watchThreads, type StuckThread } from '../../../server/temporal/workflow-threads.ts';

/** A thread that answers each message after `workMs` of busy work; 'loop' makes it spin for good. */
const THREAD_CODE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => {
  if (m === 'loop') { for (;;) {} }
  const until = Date.now() + m;
  while (Date.now() < until) {}
  parentPort.postMessage('done');
});
parentPort.postMessage('ready');
`;

const threads: Thread[] = [];
async function startThread(): Promise<Thread> {
  const thread = new Thread(THREAD_CODE, { eval: true });
  threads.push(thread);
  await new Promise((resolve) => thread.once('message', resolve));
  return thread;
}

afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.terminate()));
});

const WATCH = { stuckAfterMs: 600, intervalMs: 150 };

describe('watchThreads', () => {
  it('reports a thread stuck in a loop, once, and not the idle one beside it', async () => {
    const [looping, idle] = [await startThread(), await startThread()];
    const reports: StuckThread[] = [];
    const reported = new Promise<void>((resolve) => {
      const watch = watchThreads([looping, idle], {
        ...WATCH,
        onStuck: (s) => {
          reports.push(s);
          resolve();
          // Later ticks may not report it again (checked below after a few more).
          setTimeout(() => watch.stop(), WATCH.intervalMs * 4);
        },
      });
    });
    looping.postMessage('loop');
    await reported;
    await new Promise((r) => setTimeout(r, WATCH.intervalMs * 5));
    expect(reports).toHaveLength(1);
    expect(reports[0]!.thread).toBe(looping);
    expect(reports[0]!.busyMs).toBeGreaterThanOrEqual(WATCH.stuckAfterMs);
  });

  it('does not report a thread that is busy all the time but keeps answering', async () => {
    const busy = await startThread();
    const reports: StuckThread[] = [];
    const watch = watchThreads([busy], { ...WATCH, onStuck: (s) => reports.push(s) });
    // Back to back requests of 40 ms for five times the stuck threshold: the loop never idles.
    let answered = 0;
    busy.on('message', () => {
      answered++;
      busy.postMessage(40);
    });
    busy.postMessage(40);
    await new Promise((r) => setTimeout(r, WATCH.stuckAfterMs * 5));
    watch.stop();
    expect(answered).toBeGreaterThan(10);
    expect(reports).toEqual([]);
  });
});
