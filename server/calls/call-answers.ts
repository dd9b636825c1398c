// A call's answer read back from its rows: what a keyed retry (Idempotency-Key) returns once the
// call has an outcome, and the keyed call id itself. No I/O here: the service reads the rows.
import { createHash } from 'node:crypto';
import type { CallOutcome, CallResult, ErrorBody, Tier } from '../../workflows/definitions.ts';
import { AppError } from '../errors.ts';
import type { ApprovalRow, CallRow, ExecutionRow } from './store.ts';

/**
 * The call id an Idempotency-Key names, scoped to the calling identity: a UUID (version 8, RFC
 * 9562's custom layout) from SHA-256 over the identity and the key. The same identity and key
 * always name the same call, hence the same workflow (`call-<id>`).
 */
export function keyedCallId(identityId: string, key: string): string {
  const h = createHash('sha256').update(`idempotency-key\0${identityId}\0${key}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80; // version 8
  h[8] = (h[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The answer of a call that ended without an approval (called, failed, denied); null otherwise. */
export function finalAnswer(row: Pick<CallRow, 'status' | 'result' | 'error' | 'description'>): CallOutcome | null {
  if (row.status === 'called' && row.result) return { status: 'called', result: row.result as CallResult, action_description: row.description };
  if (row.status === 'failed' && row.error) return { status: 'error', error: row.error as ErrorBody };
  if (row.status === 'denied') return { status: 'denied', reason: (row.error as ErrorBody | null)?.message ?? 'denied by a rule' };
  return null;
}

/** The first answer of a call that raised an approval: `pending_approval`, as the workflow gave it. */
export function pendingAnswer(a: ApprovalRow, publicUrl: string): CallOutcome {
  return {
    status: 'pending_approval',
    approval_id: a.id,
    approval_url: `${publicUrl}/approvals/${a.id}`,
    action_description: a.action_description,
    expires_at: a.expires_at.toISOString(),
    // The caller's relationship to the requester, as the approval record says it: the answer goes
    // to the requester itself (who decides is the record's `resolver_id`).
    relationship: 'self',
    suggested_tiers: a.suggested_tiers as Tier[],
    auto_call_on_approve: a.auto_call_on_approve,
    risk: a.risk,
    permission_keys: a.permission_keys,
    ...(a.gap_reasons.length ? { gap_reasons: a.gap_reasons } : {}),
  };
}

/**
 * What a call that raised (or joined) an approval answers now, from its approval and execution
 * rows: `denied`; the execution's outcome once it ran (`called`, or its error, e.g.
 * `outcome_unknown`); `conflict` when the approval or its execution closed without running. Null
 * while it is still open (pending, or allowed and not yet run): its workflow answers then. A resume
 * and a keyed retry read the same answer, so they never disagree with `GET /v1/calls/{id}`.
 */
export function approvalAnswer(
  a: Pick<ApprovalRow, 'status' | 'reason' | 'edit_diff' | 'edited_description'>,
  exec: Pick<ExecutionRow, 'status' | 'result' | 'error'> | null | undefined,
  callDescription: string,
): CallOutcome | null {
  if (a.status === 'denied') return { status: 'denied', reason: a.reason ?? 'denied' };
  if (a.status === 'pending' || a.status === 'bubbled') return null;
  if (a.status !== 'allowed') throw new AppError('conflict', `the approval is ${a.status}`, { status: a.status });
  if (exec?.status === 'executed' || exec?.status === 'failed') {
    // An approver's edit ran: the agent learns what actually ran (issue 31).
    const edited = a.edit_diff ? { modified_by_approver: true as const, diff: a.edit_diff } : {};
    return exec.status === 'executed'
      ? { status: 'called', result: exec.result as CallResult, action_description: a.edited_description ?? callDescription, ...edited }
      : { status: 'error', error: exec.error as ErrorBody, ...edited };
  }
  if (exec && (exec.status === 'expired' || exec.status === 'cancelled')) {
    throw new AppError('conflict', `the execution is ${exec.status}`, { status: exec.status });
  }
  return null;
}

/**
 * A call as `GET /v1/calls/{id}` shows it: its status, and its result or error — the call's own
 * (covered) or its execution's (after an approval) — with the approval and execution ids.
 */
export function presentCall(call: CallRow, approval: ApprovalRow | null, execution: ExecutionRow | null) {
  const result = execution ? execution.result : call.result;
  const error = execution ? execution.error : call.error;
  return {
    call_id: call.id,
    status: call.status,
    service: call.service,
    action: call.action,
    action_description: call.description,
    requester_id: call.requester_id,
    created_at: call.created_at.toISOString(),
    finished_at: call.finished_at?.toISOString() ?? null,
    http_status_code: execution?.http_status_code ?? call.http_status_code,
    ...(result !== null && result !== undefined ? { result } : {}),
    ...(error !== null && error !== undefined ? { error: error as ErrorBody } : {}),
    approval_id: approval?.id ?? null,
    approval_status: approval?.status ?? null,
    execution_id: execution?.id ?? null,
    execution_status: execution?.status ?? null,
  };
}
