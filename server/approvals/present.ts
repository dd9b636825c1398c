// The approval as the API shows it ("Approval record" of the spec, with the gated action and the
// requester), built in one place from the row approvals/store.ts reads; the execution summary is
// shared with the webhook and event payloads the call activities send.
import { canBubble, type Person } from '../../core/permissions/routing.ts';
import type { ApprovalExecution, ApprovalViewRow } from './store.ts';

/** An execution as its viewers see it: why it did not run (e.g. `outcome_unknown`) included. */
export function presentExecution(exec: Omit<ApprovalExecution, 'expires_at'>) {
  return {
    id: exec.id,
    status: exec.status,
    runtime: exec.runtime,
    ...(exec.triggered_by ? { triggered_by: exec.triggered_by } : {}),
    ...(exec.http_status_code !== null ? { http_status_code: exec.http_status_code } : {}),
    ...(exec.result !== null ? { result: exec.result } : {}),
    ...(exec.error !== null && exec.status !== 'executed' ? { error: exec.error } : {}),
  };
}

/** Allowed with changes: the edited request (redacted), its keys and description, and the diff. */
export function editOfApproval(a: Pick<ApprovalViewRow, 'edit_diff' | 'edited_request_redacted' | 'edited_permission_keys' | 'edited_description'>) {
  if (!a.edit_diff) return {};
  return {
    modified_by_approver: true as const,
    diff: a.edit_diff,
    edited_request: a.edited_request_redacted,
    edited_permission_keys: a.edited_permission_keys ?? [],
    edited_description: a.edited_description ?? '',
  };
}

/**
 * Whether "Bubble up" would move this approval now (open, and someone above where it sits), so
 * no client offers a step that can only be refused. The people come with the row (store.ts).
 */
export function bubbleUpPossible(a: Pick<ApprovalViewRow, 'status' | 'routed_to' | 'resolver_id' | 'people'>): boolean {
  if (a.status !== 'pending' && a.status !== 'bubbled') return false;
  const u = a.people.user;
  const user: Person = { id: u.id, name: u.name, role: u.role, approverId: u.approver_id, active: true };
  const approver = a.people.approver;
  const people: Person[] = [
    user,
    ...(approver && approver.id !== user.id ? [{ id: approver.id, name: approver.name, role: approver.role, approverId: null, active: approver.active }] : []),
    ...a.people.admin_ids.filter((id) => id !== user.id && id !== approver?.id).map((id): Person => ({ id, name: '', role: 'admin', approverId: null, active: true })),
  ];
  return canBubble({ stage: a.routed_to, resolverId: a.resolver_id, user }, people);
}

/** `description` replaces the stored one (names looked up with the viewer's own authority). */
export function presentApproval(a: ApprovalViewRow, publicUrl: string, description?: string, routing?: { stage: string; why: string | null }) {
  const exec = a.execution;
  return {
    id: a.id,
    status: a.status,
    relationship: a.relationship,
    risk: a.risk,
    permission_keys: a.permission_keys,
    suggested_tiers: a.suggested_tiers,
    derived_keys: a.derived_keys,
    ...(a.gap_reasons.length ? { gap_reasons: a.gap_reasons } : {}),
    expires_at: (exec ? exec.expires_at : a.expires_at).toISOString(),
    ...(exec && a.status === 'allowed' ? { execution: presentExecution(exec) } : {}),
    action: a.call ? { ...a.call, description: description ?? a.call.description } : null,
    ...editOfApproval(a),
    requester: a.requester ?? { id: a.requester_id },
    resolver_id: a.resolver_id,
    auto_call_on_approve: a.auto_call_on_approve,
    decision: a.decision,
    reason: a.reason,
    resolved_by: a.resolved_by,
    resolved_at: a.resolved_at?.toISOString() ?? null,
    created_at: a.created_at.toISOString(),
    approval_url: `${publicUrl}/approvals/${a.id}`,
    can_bubble: bubbleUpPossible(a),
    ...(routing ? { routing } : {}),
  };
}
export type ApprovalView = ReturnType<typeof presentApproval>;
