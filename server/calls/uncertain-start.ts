// A workflow start whose answer never came back: Temporal (or the connection to it) failed while
// the start was in flight, or its update outlived the RPC's deadline. The start may well have
// landed and the call run, so nothing may be concluded from the error itself: Temporal is asked,
// once it answers again, whether the call's workflow exists.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { callWorkflowId } from '../../workflows/definitions.ts';
import type { TemporalHealth } from '../temporal/health.ts';

/** `found`: the workflow exists (the call started); `absent`: it does not; `silent`: Temporal did not answer in time. */
export type StartFinding = 'found' | 'absent' | 'silent';

/** How long each question may take: a Temporal restarting on a busy machine answers within this. */
const ANSWER_WITHIN_MS = 2_000;

/** Asks Temporal whether the call's workflow exists, asking again until it answers or `patienceMs` passes. */
export async function findStartedWorkflow(temporal: Client, health: TemporalHealth | undefined, callId: string, patienceMs: number): Promise<StartFinding> {
  const deadline = Date.now() + patienceMs;
  const handle = temporal.workflow.getHandle(callWorkflowId(callId));
  for (let delay = 100; ; delay = Math.min(delay * 2, 1_000)) {
    const within = Math.min(ANSWER_WITHIN_MS, deadline - Date.now());
    if (within <= 0) return 'silent';
    try {
      // The health watcher hears the answer too: the follow-up operations are not refused as "down".
      if (health) await health.check(within);
      await temporal.connection.withDeadline(Date.now() + within, () => handle.describe());
      return 'found';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'absent';
    }
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
  }
}
