// Answers an activity hands to the API waiting in the same process (issue 28): a covered call's
// first answer (server/calls/first-answers.ts), an allow's record once its decision is committed
// (server/approvals/decision-answers.ts). Keyed by what both sides know; an entry lives only while
// someone waits, and an answer nobody waits for here (the task ran in another process) is dropped:
// the waiting side falls back to the workflow.
export interface InProcessAnswers<T> {
  /** Starts waiting for `key`'s answer; `cancel` stops (the promise then never settles). */
  expect(key: string): { answer: Promise<T>; cancel(): void };
  /** The activity's side; true when someone in this process was waiting. */
  deliver(key: string, answer: T): boolean;
}

export function inProcessAnswers<T>(): InProcessAnswers<T> {
  const waiting = new Map<string, (a: T) => void>();
  return {
    expect(key) {
      const answer = new Promise<T>((resolve) => waiting.set(key, resolve));
      return { answer, cancel: () => void waiting.delete(key) };
    },
    deliver(key, answer) {
      const resolve = waiting.get(key);
      if (!resolve) return false;
      waiting.delete(key);
      resolve(answer);
      return true;
    },
  };
}
