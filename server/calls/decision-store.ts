// SQL for approvals and their decisions: raised, joined, capped, decided (with the audit row and,
// for an allow sent at once, the reads its send needs, in the same statement).
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { AuditEntry } from '../audit/entry.ts';
import { auditInsert } from '../audit/store.ts';
import { prepared } from '../db/prepared.ts';
import { chainAndRules, chainWithRulesQuery, type RideAlongRead } from '../identities/store.ts';
import { callStatusUpdate } from './call-status-store.ts';
import { approvalRow, type ApprovalRow } from './rows.ts';

const idColumn = z.object({ id: z.string() });

type Db = CommonQueryMethods;

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
    gapReasons?: string[];
  },
): Promise<ApprovalRow | null> {
  return db.maybeOne(sql.type(approvalRow)`
    INSERT INTO approvals (id, call_id, org_id, requester_id, user_id, gap_identity_id, resolver_id, status, risk,
                           permission_keys, derived_keys, suggested_tiers, action_description, auto_call_on_approve,
                           dedupe_key, expires_at, gap_reasons)
    VALUES (${a.id}, ${a.callId}, ${a.orgId}, ${a.requesterId}, ${a.userId}, ${a.gapIdentityId}, ${a.resolverId}, 'pending',
            ${a.risk}, ${sql.array(a.permissionKeys, 'text')}, ${sql.array(a.derivedKeys, 'text')},
            ${sql.jsonb(a.suggestedTiers as never)}, ${a.actionDescription}, ${a.autoCallOnApprove}, ${a.dedupeKey},
            ${sql.timestamp(a.expiresAt)}, ${sql.array(a.gapReasons ?? [], 'text')})
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
export async function recordDecisionForSend(db: Db, d: DecisionWrite, entry: AuditEntry, read: { requesterId: string; keys: readonly string[]; alongside?: RideAlongRead | undefined }) {
  const alongside = read.alongside ? sql.fragment`(SELECT ${read.alongside(sql.fragment`me.org_id`, sql.fragment`me.user_id`, sql.fragment`me.id`)} FROM chain me WHERE me.depth = 0)` : sql.fragment`NULL::json`;
  const w = decisionWrites(d, entry);
  const rows = await db.any(
    prepared(chainWithRulesQuery(read.requesterId, read.keys, {
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
