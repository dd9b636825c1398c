// The rows of calls, approvals and executions as read from PostgreSQL: shapes only, no SQL, so
// another feature's store (approvals' listing) can parse them without importing this store.
import { z } from 'zod';

export const callRow = z.object({
  id: z.string(),
  org_id: z.string(),
  requester_id: z.string(),
  user_id: z.string(),
  service: z.string(),
  template: z.string(),
  action: z.string(),
  runtime: z.string(),
  risk: z.enum(['read', 'write', 'delete']),
  permission_keys: z.array(z.string()),
  description: z.string(),
  request_redacted: z.unknown(),
  request_envelope: z.unknown(),
  disclosed: z.unknown(),
  status: z.string(),
  http_status_code: z.number().nullable(),
  request_id: z.string().nullable(),
  created_at: z.date(),
  finished_at: z.date().nullable(),
  send_marked_at: z.date().nullable().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
  request_digest: z.string().nullable().optional(),
  approval_id: z.string().nullable().optional(),
});
export type CallRow = z.infer<typeof callRow>;

export const approvalRow = z.object({
  id: z.string(),
  call_id: z.string(),
  org_id: z.string(),
  requester_id: z.string(),
  user_id: z.string(),
  gap_identity_id: z.string(),
  resolver_id: z.string(),
  status: z.enum(['pending', 'allowed', 'denied', 'bubbled', 'expired', 'superseded', 'cancelled']),
  risk: z.enum(['low', 'med', 'high']),
  permission_keys: z.array(z.string()),
  derived_keys: z.array(z.string()),
  suggested_tiers: z.array(z.object({ keys: z.array(z.string()), description: z.string() })),
  action_description: z.string(),
  auto_call_on_approve: z.boolean(),
  dedupe_key: z.string(),
  expires_at: z.date(),
  decision: z.string().nullable(),
  reason: z.string().nullable(),
  remember_keys: z.array(z.string()).nullable(),
  remember_ttl: z.string().nullable(),
  resolved_by: z.string().nullable(),
  resolved_at: z.date().nullable(),
  bubble_count: z.number(),
  created_at: z.date(),
  updated_at: z.date(),
  /** Edit before approve (0017): the request the approver allowed instead of the agent's. */
  edited_request_envelope: z.unknown().optional(),
  edited_request_redacted: z.unknown().optional(),
  edit_diff: z.array(z.object({ field: z.string(), before: z.unknown().optional(), after: z.unknown().optional() })).nullable().optional(),
  edited_permission_keys: z.array(z.string()).nullable().optional(),
  edited_description: z.string().nullable().optional(),
});
export type ApprovalRow = z.infer<typeof approvalRow>;

export const executionRow = z.object({
  id: z.string(),
  approval_id: z.string(),
  status: z.enum(['pending', 'executing', 'executed', 'failed', 'cancelled', 'expired']),
  runtime: z.enum(['http', 'mcp', 'platform']),
  triggered_by: z.enum(['user', 'agent', 'auto']).nullable(),
  http_status_code: z.number().nullable(),
  result: z.unknown(),
  error: z.unknown(),
  expires_at: z.date(),
  created_at: z.date(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  send_marked_at: z.date().nullable().optional(),
  send_attempts: z.number().optional(),
});
export type ExecutionRow = z.infer<typeof executionRow>;
