// SQL for calls, approvals and executions: the read model the call workflow's activities write.
// Approvals and decisions are in decision-store.ts, executions in execution-store.ts; this module
// answers for all three, so a caller imports one store.
import { prepared } from '../db/prepared.ts';
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { bucketTokenTake, type Bucket } from './rate-limit-store.ts';
import type { Envelope } from '../../core/vault/envelope.ts';
import type { AuditEntry } from '../audit/entry.ts';
import { auditInsert } from '../audit/store.ts';
import { chainAndRules, chainWithRulesQuery } from '../identities/store.ts';
import { callStatusUpdate, type CallFinish } from './call-status-store.ts';

type Db = CommonQueryMethods;

export { approvalRow, callRow, executionRow, type ApprovalRow, type CallRow, type ExecutionRow } from './rows.ts';
export * from './decision-store.ts';
export * from './execution-store.ts';
export type { CallFinish } from './call-status-store.ts';
import { callRow, type ApprovalRow, type CallRow, type ExecutionRow } from './rows.ts';
import { getApproval, getApprovalOfCall } from './decision-store.ts';
import { getExecutionByApproval } from './execution-store.ts';

// Row schemas are module constants: building a zod schema per call costs more than using it.
const sendAttempts = z.object({ send_attempts: z.number() });
const closedFlag = z.object({ closed: z.boolean() });

/** What writing a call's row did: refused by the rate limit, inserted, or found (a keyed retry). */
export type CallInsert = { kind: 'rate_limited'; tokens: number } | { kind: 'inserted' } | { kind: 'existing'; row: CallRow };

const insertOutcome = z.object({ allowed: z.boolean(), tokens: z.number(), inserted: z.boolean(), existing_id: z.string().nullable() });

export async function insertCall(
  db: Db,
  c: {
    id: string;
    orgId: string;
    requesterId: string;
    userId: string;
    service: string;
    template: string;
    action: string;
    runtime: string;
    risk: string;
    permissionKeys: string[];
    description: string;
    requestRedacted: unknown;
    requestEnvelope: Envelope;
    disclosed: unknown;
    requestId: string | null;
    requestDigest: string;
  },
  /** The caller's rate-limit bucket: its token is taken in the same statement (null: no limit). */
  bucket: Bucket | null,
): Promise<CallInsert> {
  // A call id derived from an Idempotency-Key may exist already: then nothing is written and the
  // existing row is returned (the caller compares digests and attaches to that call). An empty
  // bucket writes nothing.
  const token = bucket ? bucketTokenTake(bucket) : sql.fragment`SELECT 0::float8 AS tokens, true AS last_allowed`;
  const out = await db.one(prepared(sql.type(insertOutcome)`
    WITH token AS (${token}),
    ins AS (
      INSERT INTO calls (id, org_id, requester_id, user_id, service, template, action, runtime, risk, permission_keys,
                         description, request_redacted, request_envelope, disclosed, request_id, request_digest)
      SELECT ${c.id}, ${c.orgId}, ${c.requesterId}, ${c.userId}, ${c.service}, ${c.template}, ${c.action}, ${c.runtime}, ${c.risk},
             ${sql.array(c.permissionKeys, 'text')}, ${c.description}, ${sql.jsonb(c.requestRedacted as never)},
             ${sql.jsonb(c.requestEnvelope as never)}, ${sql.jsonb(c.disclosed as never)}, ${c.requestId}, ${c.requestDigest}
      WHERE (SELECT last_allowed FROM token)
      ON CONFLICT (id) DO NOTHING
      RETURNING id)
    SELECT t.last_allowed AS allowed, t.tokens, EXISTS (SELECT 1 FROM ins) AS inserted,
           (SELECT id FROM calls WHERE id = ${c.id} AND NOT EXISTS (SELECT 1 FROM ins)) AS existing_id
    FROM token t`));
  if (!out.allowed) return { kind: 'rate_limited', tokens: out.tokens };
  if (out.inserted || !out.existing_id) return { kind: 'inserted' };
  // A keyed retry: the row as it stands (a second read, on this rare path only).
  const row = await getCall(db, c.id);
  return row ? { kind: 'existing', row } : { kind: 'inserted' };
}

export const getCall = (db: Db, id: string) => db.maybeOne(sql.type(callRow)`SELECT * FROM calls WHERE id = ${id}`);

/**
 * The call, its approval and that approval's execution from one snapshot (a read-only
 * REPEATABLE READ transaction): the writers change a call's status together with its approval's
 * or execution's, so this never shows one change without the other.
 */
export async function callAsOfNow(pool: DatabasePool, id: string): Promise<{ call: CallRow; approval: ApprovalRow | null; execution: ExecutionRow | null } | null> {
  return asOfOneMoment(pool, async (tx) => {
    const call = await getCall(tx, id);
    if (!call) return null;
    const approval = call.approval_id ? await getApproval(tx, call.approval_id) : await getApprovalOfCall(tx, call.id);
    const execution = approval ? await getExecutionByApproval(tx, approval.id) : null;
    return { call, approval, execution };
  });
}

/** An approval and its execution from one snapshot, as callAsOfNow reads a call's. */
export async function approvalAsOfNow(pool: DatabasePool, approvalId: string): Promise<{ approval: ApprovalRow; execution: ExecutionRow | null } | null> {
  return asOfOneMoment(pool, async (tx) => {
    const approval = await getApproval(tx, approvalId);
    return approval ? { approval, execution: await getExecutionByApproval(tx, approvalId) } : null;
  });
}

/** Reads in a read-only REPEATABLE READ transaction: every statement sees the same snapshot. */
function asOfOneMoment<T>(pool: DatabasePool, read: (tx: Db) => Promise<T>): Promise<T> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
    return read(tx);
  });
}

/** What the covered path's claim found on the call row before marking it. */
export const callClaim = z.object({
  previously_marked: z.boolean(),
  status: z.string(),
  result: z.unknown(),
  error: z.unknown(),
  http_status_code: z.number().nullable(),
  /** The redacted projection rule conditions read (issue 44). */
  request_redacted: z.unknown(),
});
export type CallClaim = z.infer<typeof callClaim>;
const sendClaimExtra = z.object({ call: callClaim.nullable(), secret: z.unknown() });

/**
 * The covered path's check read and its durable "about to send" mark in one statement (issue 24):
 * the requester's chain with its rules, and the call row as it was before this attempt marked it.
 * A covered call is sent right after, in the same local activity, so a re-run of the task (a crash
 * before the task completed) finds `previously_marked` — or the final status the first run wrote.
 */
export async function chainWithSendClaim(db: Db, requesterId: string, keys: readonly string[], callId: string, alsoRead?: { secret: ReturnType<typeof sql.fragment> }) {
  const rows = await db.any(
    prepared(chainWithRulesQuery(requesterId, keys, {
      with: sql.fragment`
        prev AS (SELECT id, send_marked_at IS NOT NULL AS previously_marked, status, result, error, http_status_code, request_redacted
                 FROM calls WHERE id = ${callId} FOR UPDATE),
        mark AS (UPDATE calls c SET send_marked_at = now() FROM prev WHERE c.id = prev.id RETURNING c.id),
        sec AS (SELECT ${alsoRead?.secret ?? sql.fragment`NULL::json`} AS envelope)`,
      // The secret's envelope (issue 28): the one the send will inject, read here, not by one more statement.
      also: sql.fragment`json_build_object('call', (SELECT row_to_json(prev) FROM prev), 'secret', (SELECT envelope FROM sec))`,
      schema: sendClaimExtra,
    })),
  );
  const extra = (rows[0] as { extra?: z.infer<typeof sendClaimExtra> } | undefined)?.extra;
  return { ...chainAndRules(rows), call: extra?.call ?? null, secretEnvelope: extra?.secret ?? null };
}

/**
 * An approved execution's "about to send" mark, written just before the request leaves. Returns
 * how many sends were marked so far, this one included (more than 1: an earlier one may have left).
 */
export const markExecutionSend = (db: Db, id: string) =>
  db.oneFirst(sql.type(sendAttempts)`
    UPDATE executions SET send_marked_at = now(), send_attempts = send_attempts + 1 WHERE id = ${id}
    RETURNING send_attempts`);

export async function finishCall(db: Db, id: string, status: string, httpStatusCode: number | null, kept: Omit<CallFinish, 'httpStatusCode'> = {}): Promise<void> {
  await db.query(sql.unsafe`${callStatusUpdate(id, status, { httpStatusCode, ...kept })}`);
}

/**
 * The covered path's final state — status, outcome and its audit row — in one statement, written
 * only while the call is not final yet (a re-run whose first run committed keeps what was written).
 */
export async function finishCallWithAudit(db: Db, id: string, status: string, finish: CallFinish, entry: AuditEntry): Promise<void> {
  const open = sql.fragment`finished_at IS NULL`;
  await db.query(prepared(sql.unsafe`
    WITH finished AS (${callStatusUpdate(id, status, finish, open)} RETURNING id)
    ${auditInsert(entry, sql.fragment`EXISTS (SELECT 1 FROM finished)`)}`));
}

/**
 * A call closed as never started, with its audit row, in one statement: only while no workflow has
 * claimed it. The workflow's check marks `send_marked_at` under the row lock before anything can
 * be sent, so a call whose workflow ran keeps the state that workflow writes (a late `called`
 * included), and a workflow that starts after this finds the row final and sends nothing.
 * True when this statement closed it.
 */
export async function closeUnclaimedCall(db: Db, id: string, error: unknown, entry: AuditEntry): Promise<boolean> {
  const unclaimed = sql.fragment`finished_at IS NULL AND send_marked_at IS NULL AND status = 'checking'`;
  const closed = await db.oneFirst(prepared(sql.type(closedFlag)`
    WITH finished AS (${callStatusUpdate(id, 'failed', { httpStatusCode: null, error }, unclaimed)} RETURNING id),
    audit AS (${auditInsert(entry, sql.fragment`EXISTS (SELECT 1 FROM finished)`)})
    SELECT EXISTS (SELECT 1 FROM finished) AS closed`));
  return closed;
}

export async function setCallStatus(db: Db, id: string, status: string, approvalId?: string): Promise<void> {
  const approval = approvalId ? sql.fragment`, approval_id = ${approvalId}` : sql.fragment``;
  await db.query(sql.unsafe`UPDATE calls SET status = ${status}${approval} WHERE id = ${id}`);
}

/**
 * Closes an approval whose workflow is gone, so the read model never shows it open: a pending one
 * is cancelled; an allowed one's open execution fails with `workflow_gone`. True when this call closed it.
 */
/**
 * Closes an approval (or its open execution) whose workflow is gone, with its audit row in the same
 * transaction. Only the statement that closed it writes the row: false when it was already closed.
 */
export async function closeWithoutWorkflow(
  pool: DatabasePool,
  c: { approvalId: string; callId: string; executionId: string | null; reason: string; executionError: unknown; entry: AuditEntry },
): Promise<boolean> {
  return pool.transaction(async (tx) => {
    let closed: boolean;
    if (c.executionId) {
      const error = c.executionError;
      const r = await tx.query(sql.unsafe`
        UPDATE executions SET status = 'failed', error = ${sql.jsonb(error as never)}, finished_at = now()
        WHERE id = ${c.executionId} AND status IN ('pending', 'executing')`);
      await finishCall(tx, c.callId, 'execution_failed', null);
      closed = r.rowCount > 0;
    } else {
      const r = await tx.query(sql.unsafe`
        UPDATE approvals SET status = 'cancelled', decision = 'cancel', reason = ${c.reason}, resolved_at = now(), updated_at = now()
        WHERE id = ${c.approvalId} AND status IN ('pending', 'bubbled')`);
      await finishCall(tx, c.callId, 'cancelled', null);
      closed = r.rowCount > 0;
    }
    if (closed) await tx.query(sql.unsafe`${auditInsert(c.entry)}`);
    return closed;
  });
}

/** What an approved call will send, as conditions read it: the approver's edit, else the call's redacted request. */
export const requestToSend = (db: Db, approvalId: string) =>
  db.maybeOneFirst(sql.type(z.object({ request: z.unknown() }))`
    SELECT COALESCE(a.edited_request_redacted, c.request_redacted) AS request
    FROM approvals a JOIN calls c ON c.id = a.call_id WHERE a.id = ${approvalId}`);
