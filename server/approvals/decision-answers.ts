// The approver's answer to an allow whose approved call is sent in the same activity as the
// decision. The activity records the decision, re-checks,
// and hands the approver's answer here as soon as the request has left (or the call stopped, or
// must wait for a dependency); the API answers the approver from here instead of waiting for the
// upstream's response and the update to complete. Only
// a process that runs a worker offers a key; should the activity run in another process, the
// update's own result answers (after the send).
import type { ApprovalRecord } from '../../workflows/definitions.ts';
import { inProcessAnswers } from '../temporal/in-process-answers.ts';

const answers = inProcessAnswers<ApprovalRecord>();

/** Starts waiting for the decision recorded under `key`; `cancel` stops (the promise then never settles). */
export const expectDecisionAnswer = (key: string) => answers.expect(key);

/** The activity's side: the decision is committed; the approver waiting in this process (if any) gets `record`. */
export const deliverDecisionAnswer = (key: string, record: ApprovalRecord): void => void answers.deliver(key, record);
