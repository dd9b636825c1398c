// Temporal's own floor for `npm run bench:call`: Update-with-Start of a workflow that does
// nothing, on the same server, task queue and worker as real calls. And, for `npm run bench:eager`,
// the least a covered call of issue 28's shape can do: started eagerly, one local activity that
// hands the answer to the caller in-process, then complete.
import { condition, proxyActivities, proxyLocalActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { CALL_SEARCH_ATTRIBUTES } from '../../workflows/definitions.ts';
import { benchmarkDecideUpdate, benchmarkFloorUpdate, type BenchmarkActivities } from './definitions.ts';

export async function benchmarkFloorWorkflow(): Promise<void> {
  let answered = false;
  setHandler(benchmarkFloorUpdate, () => {
    answered = true;
    return 'ok';
  });
  await condition(() => answered);
}

const { benchmarkAnswer, benchmarkRaise } = proxyLocalActivities<Required<BenchmarkActivities>>({ startToCloseTimeout: '10 seconds' });
const { benchmarkSendAllowed } = proxyActivities<Required<BenchmarkActivities>>({ startToCloseTimeout: '10 seconds' });

/** The covered call's shape with nothing of the call in it (run only by bench/eager-start.ts's own worker). */
export async function benchmarkLocalAnswerWorkflow(id: string): Promise<void> {
  await benchmarkAnswer(id);
}

/**
 * The same, plus what operators read of a call (bench/least-call.ts): the status search attribute
 * upserted once the answer is in (the starter sets the others and the memo), and a result.
 */
export async function benchmarkOperatorShapeWorkflow(id: string): Promise<{ status: string }> {
  await benchmarkAnswer(id);
  upsertSearchAttributes([{ key: CALL_SEARCH_ATTRIBUTES.status, value: 'called' }]);
  return { status: 'called' };
}

/**
 * The least approved call (bench/least-call.ts): parked as pending by a local activity, allowed by
 * an update, sent by one regular activity scheduled in the task that accepts it (as the gateway's
 * send-on-allow). `operatorShape`: the status search attribute upserted at each step.
 */
export async function benchmarkLeastApprovalWorkflow(id: string, operatorShape: boolean): Promise<{ status: string }> {
  let decided = false;
  setHandler(benchmarkDecideUpdate, () => {
    decided = true;
    return 'allowed';
  });
  await benchmarkRaise(id);
  if (operatorShape) upsertSearchAttributes([{ key: CALL_SEARCH_ATTRIBUTES.status, value: 'pending_approval' }]);
  await condition(() => decided);
  await benchmarkSendAllowed(id);
  if (operatorShape) upsertSearchAttributes([{ key: CALL_SEARCH_ATTRIBUTES.status, value: 'called' }]);
  return { status: 'called' };
}
