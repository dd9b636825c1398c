// Temporal's own floor for `npm run bench:call`: Update-with-Start of a workflow that does
// nothing, on the same server, task queue and worker as real calls.
import { condition, setHandler } from '@temporalio/workflow';
import { benchmarkFloorUpdate } from './definitions.ts';

export async function benchmarkFloorWorkflow(): Promise<void> {
  let answered = false;
  setHandler(benchmarkFloorUpdate, () => {
    answered = true;
    return 'ok';
  });
  await condition(() => answered);
}
