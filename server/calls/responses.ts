// Response bodies of the call and approval routes (the spec's result tags and approval record).
import { z } from 'zod';
import { nextCursor, timestamp, uuid } from '../http/openapi/common.ts';

const approvalRisk = z.enum(['low', 'med', 'high']);
const Tier = z.strictObject({ keys: z.array(z.string()), description: z.string() }).meta({ id: 'Tier' });

export const CompactResult = z
  .strictObject({
    status_code: z.int(),
    duration_ms: z.int(),
    body: z.unknown().describe('The upstream body parsed as JSON (text otherwise; `{download}` for binary actions).'),
    truncated: z.boolean().optional(),
  })
  .meta({ id: 'CompactResult' });

export const VerboseResult = z
  .strictObject({
    status_code: z.int(),
    headers: z.record(z.string(), z.string()),
    body: z.string(),
    duration_ms: z.int(),
    filtered_body: z.unknown().optional(),
  })
  .meta({ id: 'VerboseResult' });

export const Called = z
  .strictObject({
    status: z.literal('called'),
    result: z.union([CompactResult, VerboseResult]),
    action_description: z.string(),
  })
  .meta({ id: 'CallCalled' });

export const Denied = z.strictObject({ status: z.literal('denied'), reason: z.string() }).meta({ id: 'CallDenied' });

export const PendingApproval = z
  .strictObject({
    status: z.literal('pending_approval'),
    approval_id: uuid,
    approval_url: z.string(),
    action_description: z.string(),
    expires_at: timestamp,
    relationship: z.enum(['self', 'downstream']),
    suggested_tiers: z.array(Tier),
    auto_call_on_approve: z.boolean(),
    risk: approvalRisk,
    permission_keys: z.array(z.string()),
  })
  .meta({ id: 'CallPendingApproval' });

const executionStatus = z.enum(['pending', 'executing', 'executed', 'failed', 'cancelled', 'expired']);
const approvalStatus = z.enum(['pending', 'allowed', 'denied', 'bubbled', 'expired', 'superseded', 'cancelled']);

export const Execution = z
  .strictObject({
    id: uuid,
    status: executionStatus,
    runtime: z.enum(['http', 'mcp', 'platform']),
    triggered_by: z.enum(['user', 'agent', 'auto']).optional(),
    http_status_code: z.int().optional(),
    result: z.unknown().optional(),
  })
  .meta({ id: 'Execution' });

const approvalRecordFields = {
  id: uuid,
  status: approvalStatus,
  relationship: z.enum(['self', 'downstream', 'not_in_your_chain']),
  risk: approvalRisk,
  permission_keys: z.array(z.string()),
  suggested_tiers: z.array(Tier),
  derived_keys: z.array(z.string()),
  expires_at: timestamp,
  execution: Execution.optional(),
};

/** What resolve answers: the spec's approval record, plus the disclosed values. */
export const ApprovalRecord = z
  .strictObject({ ...approvalRecordFields, disclosed: z.unknown().optional() })
  .meta({ id: 'ApprovalRecord' });

/** What GET answers: the record, the gated action, the requester and the decision. */
export const Approval = z
  .strictObject({
    ...approvalRecordFields,
    action: z
      .strictObject({
        service: z.string(),
        template: z.string(),
        action: z.string(),
        description: z.string(),
        request: z.unknown().describe('The resolved request with redacted fields replaced.'),
        disclosed: z.unknown(),
      })
      .nullable(),
    requester: z.strictObject({ id: uuid, kind: z.enum(['user', 'agent', 'subagent']).optional(), name: z.string().optional() }),
    resolver_id: uuid,
    auto_call_on_approve: z.boolean(),
    decision: z.string().nullable(),
    reason: z.string().nullable(),
    resolved_by: uuid.nullable(),
    resolved_at: timestamp.nullable(),
    created_at: timestamp,
    approval_url: z.string(),
  })
  .meta({ id: 'Approval' });

export const ApprovalPage = z.strictObject({ approvals: z.array(Approval), next_cursor: nextCursor });
