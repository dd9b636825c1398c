// SQL for calls, approvals and executions: the read model the call workflow's activities write.
import { prepared } from '../db/prepared.ts';
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { bucketTokenTake, type Bucket } from './rate-limit-store.ts';
import type { Envelope } from '../../core/vault/envelope.ts';
import type { AuditEntry } from '../audit/entry.ts';
import { auditInsert } from '../audit/store.ts';
import { chainAndRules, chainWithRulesQuery, type RideAlongRead } from '../identities/store.ts';

type Db = CommonQueryMethods;

export { approvalRow, callRow, executionRow, type ApprovalRow, type CallRow, type ExecutionRow } from './rows.ts';
import { approvalRow, callRow, executionRow, type ApprovalRow, type CallRow } from './rows.ts';

// Row schemas are module constants: building a zod schema per call costs more than using it.
const sendAttempts = z.object({ send_attempts: z.number() });
const idColumn = z.object({ id: z.string() });
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

/** What the covered path's claim found on the call row before marking it. */
export const callClaim = z.object({
  previously_marked: z.boolean(),
  status: z.string(),
  result: z.unknown(),
  error: z.unknown(),
  http_status_code: z.number().nullable(),
});
export type CallClaim = z.infer<typeof callClaim>;
const sendClaimExtra = z.object({ call: callClaim.nullable(), secret: z.unknown() });

/**
 * The covered path's check read and its durable "about to send" mark in one statement (issue 24):
 * the requester's chain with its rules, and the call row as it was before this attempt marked it.
 * A covered call is sent right after, in the same local activity, so a re-run of the task (a crash
 * before the task completed) finds `previously_marked` — or the final status the first run wrote.
 */
export async function chainWithSendClaim(db: Db, requesterId: string, callId: string, alsoRead?: { secret: ReturnType<typeof sql.fragment> }) {
  const rows = await db.any(
    prepared(chainWithRulesQuery(requesterId, {
      with: sql.fragment`
        prev AS (SELECT id, send_marked_at IS NOT NULL AS previously_marked, status, result, error, http_status_code
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
function callStatusUpdate(id: string, status: string, finished: CallFinish | null, onlyIf?: ReturnType<typeof sql.fragment>) {
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

export const getApproval = (db: Db, id: string) => db.maybeOne(sql.type(approvalRow)`SELECT * FROM approvals WHERE id = ${id}`);

/** Approvals still waiting for a decision, raised by any of these identities. */
export const openApprovalsOf = (db: Db, requesterIds: readonly string[]) =>
  db.any(sql.type(approvalRow)`
    SELECT * FROM approvals WHERE requester_id = ANY(${sql.array(requesterIds, 'uuid')}) AND status IN ('pending', 'bubbled')`);

/** The approval a call raised (a call that joined another's has none of its own). */
export const getApprovalOfCall = (db: Db, callId: string) => db.maybeOne(sql.type(approvalRow)`SELECT * FROM approvals WHERE call_id = ${callId}`);

/** The calls that joined an approval raised by another call (deduplicated into it). */
export const callsJoinedTo = (db: Db, approvalId: string, raisedBy: string) =>
  db.anyFirst(sql.type(idColumn)`
    SELECT id FROM calls WHERE approval_id = ${approvalId} AND status = 'deduplicated' AND id <> ${raisedBy}`);

export const findPendingDuplicate = (db: Db, requesterId: string, dedupeKey: string) =>
  db.maybeOne(sql.type(approvalRow)`
    SELECT * FROM approvals WHERE requester_id = ${requesterId} AND dedupe_key = ${dedupeKey} AND status = 'pending'`);

/** Inserts unless an identical pending approval exists (then null: the caller joins that one). */
export async function insertApproval(
  db: Db,
  a: {
    id: string;
    callId: string;
    orgId: string;
    requesterId: string;
    userId: string;
    gapIdentityId: string;
    resolverId: string;
    risk: string;
    permissionKeys: string[];
    derivedKeys: string[];
    suggestedTiers: unknown;
    actionDescription: string;
    autoCallOnApprove: boolean;
    dedupeKey: string;
    expiresAt: Date;
  },
): Promise<ApprovalRow | null> {
  return db.maybeOne(sql.type(approvalRow)`
    INSERT INTO approvals (id, call_id, org_id, requester_id, user_id, gap_identity_id, resolver_id, status, risk,
                           permission_keys, derived_keys, suggested_tiers, action_description, auto_call_on_approve,
                           dedupe_key, expires_at)
    VALUES (${a.id}, ${a.callId}, ${a.orgId}, ${a.requesterId}, ${a.userId}, ${a.gapIdentityId}, ${a.resolverId}, 'pending',
            ${a.risk}, ${sql.array(a.permissionKeys, 'text')}, ${sql.array(a.derivedKeys, 'text')},
            ${sql.jsonb(a.suggestedTiers as never)}, ${a.actionDescription}, ${a.autoCallOnApprove}, ${a.dedupeKey},
            ${sql.timestamp(a.expiresAt)})
    ON CONFLICT (requester_id, dedupe_key) WHERE status = 'pending' DO NOTHING
    RETURNING *`);
}

/** Pending approvals of a requester beyond the cap, oldest first (to be superseded). */
export const pendingBeyondCap = (db: Db, requesterId: string, cap: number) =>
  db.any(sql.type(approvalRow)`
    SELECT * FROM approvals WHERE requester_id = ${requesterId} AND status = 'pending'
    ORDER BY created_at DESC, id OFFSET ${cap}`);

export interface ApprovalUpdate {
  status?: string;
  resolverId?: string;
  decision?: string | null;
  reason?: string | null;
  rememberKeys?: string[] | null;
  rememberTtl?: string | null;
  resolvedBy?: string | null;
  resolved?: boolean;
  bubbled?: boolean;
  /** Allowed with changes: the edited request (encrypted and redacted), the diff, its keys and description. */
  edit?: { envelope: unknown; redacted: unknown; diff: unknown; permissionKeys: string[]; description: string };
}

export async function updateApproval(db: Db, id: string, u: ApprovalUpdate): Promise<ApprovalRow> {
  return db.one(sql.type(approvalRow)`UPDATE approvals SET ${approvalSets(u)} WHERE id = ${id} RETURNING *`);
}

/**
 * A decision with everything it changes, in one statement (atomic, one round trip): the approval,
 * the execution an allow opens, the call's status (final unless `open`), and the audit row.
 * Nothing is written, and it throws, when the approval does not exist. An allow is written once:
 * a retry whose first attempt committed (its execution exists) writes nothing and succeeds.
 */
/** A decision as one statement writes it: the approval, the execution it opens, the call's status. */
export interface DecisionWrite {
  approvalId: string;
  update: ApprovalUpdate;
  execution?: { id: string; runtime: string; expiresAt: Date };
  call: { id: string; status: string; open: boolean };
}

/**
 * A decision's writes as CTEs (`approval`, `execution`, `call`, `audit`), written once: an allow
 * whose execution exists already (a retry) writes nothing. `written`: this statement wrote it;
 * `recorded`: its execution existed before (the statement's snapshot does not see its own insert).
 */
function decisionWrites(d: DecisionWrite, entry: AuditEntry) {
  const execution = d.execution
    ? sql.fragment`execution AS (
        INSERT INTO executions (id, approval_id, status, runtime, expires_at)
        VALUES (${d.execution.id}, ${d.approvalId}, 'pending', ${d.execution.runtime}, ${sql.timestamp(d.execution.expiresAt)})
        ON CONFLICT (id) DO NOTHING),`
    : sql.fragment``;
  const found = sql.fragment`EXISTS (SELECT 1 FROM approval)`;
  const call = callStatusUpdate(d.call.id, d.call.status, d.call.open ? null : { httpStatusCode: null }, found);
  const notYet = d.execution ? sql.fragment` AND NOT EXISTS (SELECT 1 FROM executions WHERE id = ${d.execution.id})` : sql.fragment``;
  return {
    ctes: sql.fragment`
      approval AS (UPDATE approvals SET ${approvalSets(d.update)} WHERE id = ${d.approvalId}${notYet} RETURNING id),
      ${execution}
      call AS (${call}),
      audit AS (${auditInsert(entry, found)})`,
    written: found,
    recorded: d.execution ? sql.fragment`EXISTS (SELECT 1 FROM executions WHERE id = ${d.execution.id})` : sql.fragment`false`,
  };
}

/** True when this statement wrote the decision; false when an earlier attempt had (its execution exists). */
function decisionWritten(d: DecisionWrite, r: { written: boolean; recorded: boolean }): boolean {
  if (!r.written && !r.recorded) throw new Error(`approval ${d.approvalId} not found`);
  return r.written;
}

const decisionOutcome = z.object({ written: z.boolean(), recorded: z.boolean() });

export async function recordDecision(db: Db, d: DecisionWrite, entry: AuditEntry): Promise<boolean> {
  const w = decisionWrites(d, entry);
  return decisionWritten(d, await db.one(prepared(sql.type(decisionOutcome)`WITH ${w.ctes} SELECT ${w.written} AS written, ${w.recorded} AS recorded`)));
}

const sendReadExtra = z.object({
  written: z.boolean(),
  recorded: z.boolean(),
  call: z.object({ request_envelope: z.unknown(), request_redacted: z.unknown() }).nullable(),
  also: z.unknown(),
});

/**
 * An allow and what its send reads, in one statement: the decision's
 * writes, the requester's chain with its rules (the re-check, as the chain is at the decision), the
 * call's stored request and what `alongside` reads for the requester's org and user (the instance
 * lookup of its service; null: nothing). One round trip where four ran side by side; the reads see
 * the rows as they were before the decision's writes, which touch none of what they read but the
 * call's status.
 */
export async function recordDecisionForSend(db: Db, d: DecisionWrite, entry: AuditEntry, read: { requesterId: string; alongside?: RideAlongRead | undefined }) {
  const alongside = read.alongside ? sql.fragment`(SELECT ${read.alongside(sql.fragment`me.org_id`, sql.fragment`me.user_id`, sql.fragment`me.id`)} FROM chain me WHERE me.depth = 0)` : sql.fragment`NULL::json`;
  const w = decisionWrites(d, entry);
  const rows = await db.any(
    prepared(chainWithRulesQuery(read.requesterId, {
      with: w.ctes,
      also: sql.fragment`json_build_object(
        'written', ${w.written}, 'recorded', ${w.recorded},
        'call', (SELECT json_build_object('request_envelope', request_envelope, 'request_redacted', request_redacted) FROM calls WHERE id = ${d.call.id}),
        'also', ${alongside})`,
      schema: sendReadExtra,
    })),
  );
  // An identity is never deleted: the requester's row is always there to carry the extra column.
  const extra = (rows[0] as { extra?: z.infer<typeof sendReadExtra> } | undefined)?.extra;
  if (!extra) throw new Error(`identity ${read.requesterId} not found`);
  return { written: decisionWritten(d, extra), ...chainAndRules(rows), call: extra.call, also: extra.also };
}

function approvalSets(u: ApprovalUpdate) {
  const sets = [sql.fragment`updated_at = now()`];
  if (u.status !== undefined) sets.push(sql.fragment`status = ${u.status}`);
  if (u.resolverId !== undefined) sets.push(sql.fragment`resolver_id = ${u.resolverId}`);
  if (u.decision !== undefined) sets.push(sql.fragment`decision = ${u.decision}`);
  if (u.reason !== undefined) sets.push(sql.fragment`reason = ${u.reason}`);
  if (u.rememberKeys !== undefined) sets.push(sql.fragment`remember_keys = ${u.rememberKeys ? sql.array(u.rememberKeys, 'text') : null}`);
  if (u.rememberTtl !== undefined) sets.push(sql.fragment`remember_ttl = ${u.rememberTtl}`);
  if (u.resolvedBy !== undefined) sets.push(sql.fragment`resolved_by = ${u.resolvedBy}`);
  if (u.resolved) sets.push(sql.fragment`resolved_at = now()`);
  if (u.bubbled) sets.push(sql.fragment`bubble_count = bubble_count + 1`);
  if (u.edit) {
    sets.push(sql.fragment`edited_request_envelope = ${sql.jsonb(u.edit.envelope as never)}`);
    sets.push(sql.fragment`edited_request_redacted = ${sql.jsonb(u.edit.redacted as never)}`);
    sets.push(sql.fragment`edit_diff = ${sql.jsonb(u.edit.diff as never)}`);
    sets.push(sql.fragment`edited_permission_keys = ${sql.array(u.edit.permissionKeys, 'text')}`);
    sets.push(sql.fragment`edited_description = ${u.edit.description}`);
  }
  return sql.join(sets, sql.fragment`, `);
}

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
