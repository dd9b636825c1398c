// The delivery log of one webhook, per event: attempt rows (every run of every delivery of that
// event, redeliveries included) folded into one line with its state. Pure: the caller supplies
// the rows and, for events not yet delivered, what Temporal says about the delivery's workflow.

export interface AttemptRow {
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  attempted_at: Date;
}

/** What the delivery workflow of an event is doing now (absent: unknown, e.g. past retention). */
export interface WorkflowState {
  running: boolean;
  /** When the next attempt is scheduled, while the workflow waits between attempts. */
  nextAttemptAt: Date | null;
}

export type DeliveryState = 'delivered' | 'retrying' | 'failed';

export interface EventSummary {
  event_id: string;
  event_type: string;
  state: DeliveryState;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  first_attempt_at: string;
  last_attempt_at: string;
  next_retry_at: string | null;
}

const ok = (code: number | null) => code !== null && code >= 200 && code <= 299;

/** Groups attempt rows by event, newest event first (by its latest attempt). */
export function groupAttempts(rows: readonly AttemptRow[]): AttemptRow[][] {
  const byEvent = new Map<string, AttemptRow[]>();
  for (const r of rows) {
    const list = byEvent.get(r.event_id);
    if (list) list.push(r);
    else byEvent.set(r.event_id, [r]);
  }
  const groups = [...byEvent.values()].map((g) => [...g].sort((a, b) => a.attempted_at.getTime() - b.attempted_at.getTime()));
  return groups.sort((a, b) => b.at(-1)!.attempted_at.getTime() - a.at(-1)!.attempted_at.getTime());
}

/** The latest attempt decides: 2xx is delivered; otherwise retrying while the workflow runs, else failed. */
export function summarize(attempts: readonly AttemptRow[], workflow: WorkflowState | null): EventSummary {
  const first = attempts[0]!;
  const last = attempts.at(-1)!;
  const delivered = ok(last.status_code) && last.error === null;
  const running = !delivered && workflow?.running === true;
  return {
    event_id: last.event_id,
    event_type: last.event_type,
    state: delivered ? 'delivered' : running ? 'retrying' : 'failed',
    attempts: attempts.length,
    last_status_code: last.status_code,
    last_error: last.error,
    first_attempt_at: first.attempted_at.toISOString(),
    last_attempt_at: last.attempted_at.toISOString(),
    next_retry_at: running && workflow?.nextAttemptAt ? workflow.nextAttemptAt.toISOString() : null,
  };
}

/** Events whose latest attempt did not succeed: only these need a look at their workflow. */
export const needsWorkflowState = (attempts: readonly AttemptRow[]) => {
  const last = attempts.at(-1)!;
  return !(ok(last.status_code) && last.error === null);
};
