// The data every approval event carries: the approval as it now stands, with its execution when
// there is one, both from one snapshot (a writer changes them together: an event must never show
// one change without the other). Published by server/events/approval-events.ts.
import type { DatabasePool } from 'slonik';
import { injectedSecrets } from '../../core/permissions/keys.ts';
import { presentExecution } from '../approvals/present.ts';
import * as calls from './store.ts';

/** The event's data: the approval as it now stands, with its execution when there is one. */
export async function approvalEventData(pool: DatabasePool, approvalId: string): Promise<Record<string, unknown>> {
  const read = await calls.approvalAsOfNow(pool, approvalId);
  if (!read) return { approval_id: approvalId };
  const { approval: a, execution: exec } = read;
  const secrets = injectedSecrets(a.permission_keys);
  return {
    approval_id: a.id,
    status: a.status,
    risk: a.risk,
    permission_keys: a.permission_keys,
    action_description: a.action_description,
    ...(a.gap_reasons.length > 0 ? { gap_reasons: a.gap_reasons } : {}),
    ...(secrets.length > 0 ? { secrets } : {}),
    requester_id: a.requester_id,
    resolver_id: a.resolver_id,
    decision: a.decision,
    reason: a.reason,
    expires_at: a.expires_at.toISOString(),
    ...(exec ? { execution: presentExecution(exec) } : {}),
    // Allowed with changes: what ran instead of what the agent asked (never the request itself).
    ...(a.edit_diff ? { modified_by_approver: true, diff: a.edit_diff, edited_permission_keys: a.edited_permission_keys, edited_description: a.edited_description } : {}),
  };
}
