// The UPDATE that moves a call's status, as a fragment: the calls store and the decisions' combined
// statements (decision-store.ts) both write a call's status with it.
import { sql } from 'slonik';

/** A call's final state: the upstream's HTTP status and what the caller got (result or error). */
export interface CallFinish {
  httpStatusCode: number | null;
  result?: unknown;
  error?: unknown;
  /** The approval the call joined (a deduplicated call). */
  approvalId?: string;
}

/**
 * The UPDATE of a call's status, as a fragment (also used inside combined statements). `finished`:
 * the final status, with the upstream's HTTP status code. `onlyIf`: written only when it holds.
 */
export function callStatusUpdate(id: string, status: string, finished: CallFinish | null, onlyIf?: ReturnType<typeof sql.fragment>) {
  const kept = sql.join(
    [
      sql.fragment``,
      ...(finished?.result !== undefined ? [sql.fragment`result = ${sql.jsonb(finished.result as never)}`] : []),
      ...(finished?.error !== undefined ? [sql.fragment`error = ${sql.jsonb(finished.error as never)}`] : []),
      ...(finished?.approvalId !== undefined ? [sql.fragment`approval_id = ${finished.approvalId}`] : []),
    ],
    sql.fragment`, `,
  );
  const sets = finished
    ? sql.fragment`status = ${status}, http_status_code = ${finished.httpStatusCode}, finished_at = now()${kept}`
    : sql.fragment`status = ${status}`;
  return sql.fragment`UPDATE calls SET ${sets} WHERE id = ${id}${onlyIf ? sql.fragment` AND ${onlyIf}` : sql.fragment``}`;
}
