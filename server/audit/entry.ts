// An audit entry: what a writer hands the log (`AuditEntry`, built for a call's rows by
// `callAuditEntry`), and its fields, written once: the row as stored and read (store.ts) and the
// entry as answered and exported (responses.ts) differ only in how its time and integers travel.
// Pure: no SQL here, so writers that build entries need not reach into the store.
import { z } from 'zod';
import { injectedSecrets } from '../../core/permissions/keys.ts';

/** Names are read from the identities when the log is read, not stored in it. */
const identityName = z.string().nullable();

export const auditEntryFields = {
  org_id: z.string(),
  event: z.string(),
  user_id: z.string().nullable(),
  actor_id: z.string().nullable(),
  identity_chain: z.array(z.string()).describe('The chain of the call: the requester first, then each parent up to the user.'),
  service: z.string().nullable(),
  action: z.string().nullable(),
  permission_keys: z.array(z.string()),
  decision: z.string().nullable(),
  call_id: z.string().nullable(),
  approval_id: z.string().nullable(),
  execution_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  request_id: z.string().nullable(),
};

/** The names beside the ids, as they are when the log is read. */
export const auditEntryNames = {
  user_name: identityName.describe('The name of `user_id` now (null: no such identity any more).'),
  actor_name: identityName.describe('The name of `actor_id` now (null: no actor, or no such identity any more).'),
  identity_chain_names: z
    .array(identityName)
    .describe('The names of `identity_chain`, in the same order, as they are now (null where no such identity exists any more).'),
};

export type AuditEvent =
  | 'call.called'
  | 'call.denied'
  | 'call.failed'
  | 'approval.raised'
  | 'approval.deduplicated'
  | 'approval.resolved'
  | 'approval.bubbled'
  | 'approval.expired'
  | 'approval.superseded'
  | 'approval.cancelled'
  | 'execution.started'
  | 'execution.executed'
  | 'execution.failed'
  | 'execution.expired'
  | 'execution.cancelled'
  | 'rule.planted'
  // Approval notices (issue 30): each delivery's final state, and decisions taken in Slack or by email.
  | 'notification.delivered'
  | 'notification.failed'
  | 'approval.decided_in_slack'
  | 'approval.decided_by_email'
  // The org's people (issue 29): who invited, joined, changed or deactivated whom.
  | 'member.invited'
  | 'member.joined'
  | 'member.updated'
  | 'member.deactivated'
  | 'invitation.revoked'
  | 'sso.configured'
  // Connected MCP servers (issue 43): what an admin did, and what a refresh found changed.
  | 'mcp_server.connected'
  | 'mcp_server.refreshed'
  | 'mcp_server.deleted'
  | 'mcp_server.tool_added'
  | 'mcp_server.tool_removed'
  | 'mcp_server.tool_changed'
  | 'mcp_server.tool_accepted'
  | 'mcp_server.tool_updated'
  | 'mcp_server.updated';

export interface AuditEntry {
  orgId: string;
  event: AuditEvent;
  userId?: string | null;
  actorId?: string | null;
  identityChain?: readonly string[];
  service?: string | null;
  action?: string | null;
  permissionKeys?: readonly string[];
  decision?: string | null;
  callId?: string | null;
  approvalId?: string | null;
  executionId?: string | null;
  httpStatusCode?: number | null;
  details?: Record<string, unknown>;
  requestId?: string | null;
}

/** What every audit row of one call carries, whoever writes it (the activities, the API). */
export type CallContext = Pick<AuditEntry, 'orgId' | 'userId' | 'identityChain' | 'service' | 'action' | 'permissionKeys' | 'callId' | 'requestId'>;
export type CallEvent = Omit<AuditEntry, keyof CallContext>;

/** One audit row of a call: a call that injects a vault secret names it on every row (never its value). */
export function callAuditEntry(call: CallContext, e: CallEvent): AuditEntry {
  const secrets = injectedSecrets(call.permissionKeys ?? []);
  return { ...call, ...e, ...(secrets.length > 0 ? { details: { ...e.details, secrets } } : {}) };
}
