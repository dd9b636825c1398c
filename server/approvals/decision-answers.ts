// The approver's answer to an allow whose approved call is sent in the same activity as the
// decision (issue 28, item 3: `send-on-allow-v1`). The activity records the decision, hands the
// approver's answer here once it is committed, and goes on to re-check and send; the API answers
// the approver from here instead of waiting for the send to end and the update to complete. Only
// a process that runs a worker offers a key; should the activity run in another process, the
// update's own result answers (after the send). Entries live only while someone waits.
import type { ApprovalRecord } from '../../workflows/definitions.ts';

const waiting = new Map<string, (record: ApprovalRecord) => void>();

/** Starts waiting for the decision recorded under `key`; `cancel` stops (the promise then never settles). */
export function expectDecisionAnswer(key: string): { answer: Promise<ApprovalRecord>; cancel(): void } {
  const answer = new Promise<ApprovalRecord>((resolve) => waiting.set(key, resolve));
  return { answer, cancel: () => void waiting.delete(key) };
}

/** The activity's side: the decision is committed; the approver waiting in this process (if any) gets `record`. */
export function deliverDecisionAnswer(key: string, record: ApprovalRecord): void {
  const resolve = waiting.get(key);
  if (!resolve) return;
  waiting.delete(key);
  resolve(record);
}
