// SQL for an approved call's execution: started (with its send mark), marked, updated, read.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { AuditEntry } from '../audit/entry.ts';
import { auditInsert } from '../audit/store.ts';
import { prepared } from '../db/prepared.ts';
import { executionRow } from './rows.ts';

type Db = CommonQueryMethods;

/** An approved call starts executing, with its audit row, in one statement. */
export async function startExecution(db: Db, id: string, triggeredBy: string, entry: AuditEntry): Promise<void> {
  await db.query(sql.unsafe`
    WITH started AS (UPDATE executions SET ${executionSets({ status: 'executing', triggeredBy, started: true })} WHERE id = ${id})
    ${auditInsert(entry)}`);
}

const startedMarked = z.object({ attempts: z.number(), secret: z.unknown() });

/**
 * `startExecution` and `markExecutionSend` in one statement, for a send that follows its start at
 * once: written only while the execution is still `pending`. Returns the send
 * attempts so far, this one included, and what `alsoRead.secret` read (a template secret's
 * envelope, issue 28); null when the execution had already left `pending`.
 */
export async function startExecutionMarked(db: Db, id: string, triggeredBy: string, entry: AuditEntry, alsoRead?: { secret: ReturnType<typeof sql.fragment> }) {
  const started = sql.fragment`EXISTS (SELECT 1 FROM started)`;
  return db.maybeOne(prepared(sql.type(startedMarked)`
    WITH started AS (
      UPDATE executions SET ${executionSets({ status: 'executing', triggeredBy, started: true })}, send_marked_at = now(), send_attempts = send_attempts + 1
      WHERE id = ${id} AND status = 'pending' RETURNING send_attempts),
    audit AS (${auditInsert(entry, started)})
    SELECT send_attempts AS attempts, ${alsoRead?.secret ?? sql.fragment`NULL::json`} AS secret FROM started`));
}
interface ExecutionUpdate {
  status: string;
  triggeredBy?: string | null;
  httpStatusCode?: number | null;
  result?: unknown;
  error?: unknown;
  started?: boolean;
  finished?: boolean;
}

export async function updateExecution(db: Db, id: string, u: ExecutionUpdate): Promise<void> {
  await db.query(sql.unsafe`UPDATE executions SET ${executionSets(u)} WHERE id = ${id}`);
}

function executionSets(u: ExecutionUpdate) {
  const sets = [sql.fragment`status = ${u.status}`];
  if (u.triggeredBy !== undefined) sets.push(sql.fragment`triggered_by = ${u.triggeredBy}`);
  if (u.httpStatusCode !== undefined) sets.push(sql.fragment`http_status_code = ${u.httpStatusCode}`);
  if (u.result !== undefined) sets.push(sql.fragment`result = ${sql.jsonb(u.result as never)}`);
  if (u.error !== undefined) sets.push(sql.fragment`error = ${sql.jsonb(u.error as never)}`);
  if (u.started) sets.push(sql.fragment`started_at = now()`);
  if (u.finished) sets.push(sql.fragment`finished_at = now()`);
  return sql.join(sets, sql.fragment`, `);
}

export const getExecution = (db: Db, id: string) => db.maybeOne(sql.type(executionRow)`SELECT * FROM executions WHERE id = ${id}`);

export const getExecutionByApproval = (db: Db, approvalId: string) =>
  db.maybeOne(sql.type(executionRow)`SELECT * FROM executions WHERE approval_id = ${approvalId}`);
