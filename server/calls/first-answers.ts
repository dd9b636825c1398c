// The first answer of a call whose workflow started eagerly in this process (issue 28). The server
// hands the first workflow task straight back to this process's worker; the check-and-send
// activity then delivers the call's answer here once its final state is committed, and the API
// answers from it, without waiting for the task to complete and an update to travel back. A call
// answered elsewhere (its task retried on another worker) is never delivered here: the waiting
// side falls back to the `outcome` update. Entries live only while someone waits.
import type { CallOutcome } from '../../workflows/definitions.ts';
import { inProcessAnswers } from '../temporal/in-process-answers.ts';

/** `answer`: the call's first answer; `defer`: the call goes on to an approval (the update answers). */
export type FirstAnswer = { kind: 'answer'; outcome: CallOutcome } | { kind: 'defer' };

const answers = inProcessAnswers<FirstAnswer>();
const counts = { delivered: 0, deferred: 0 };

/** Starts waiting for the call's first answer; `cancel` stops (the promise then never settles). */
export const expectFirstAnswer = (callId: string) => answers.expect(callId);

/** The activity's side: the first answer (null: an approval decides), if this process waits for it. */
export function deliverFirstAnswer(callId: string, outcome: CallOutcome | null): void {
  if (!answers.deliver(callId, outcome ? { kind: 'answer', outcome } : { kind: 'defer' })) return;
  if (outcome) counts.delivered++;
  else counts.deferred++;
}

/** How many answers were taken in this process (tests and diagnostics). */
export const firstAnswerCounts = (): Readonly<typeof counts> => ({ ...counts });
