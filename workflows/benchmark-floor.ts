// Temporal's own floor for `npm run bench:call`: Update-with-Start of a workflow that does
// nothing, on the same server, task queue and worker as real calls. And, for `npm run bench:eager`,
// the least a covered call of issue 28's shape can do: started eagerly, one local activity that
// hands the answer to the caller in-process, then complete.
import { condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import { benchmarkFloorUpdate, type BenchmarkActivities } from './definitions.ts';

export async function benchmarkFloorWorkflow(): Promise<void> {
  let answered = false;
  setHandler(benchmarkFloorUpdate, () => {
    answered = true;
    return 'ok';
  });
  await condition(() => answered);
}

const { benchmarkAnswer } = proxyLocalActivities<BenchmarkActivities>({ startToCloseTimeout: '10 seconds' });

/** The covered call's shape with nothing of the call in it (run only by bench/eager-start.ts's own worker). */
export async function benchmarkLocalAnswerWorkflow(id: string): Promise<void> {
  await benchmarkAnswer(id);
}
