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
    /** Why a failed or cancelled execution did not run, e.g. `outcome_unknown` (issue 11). */
    error: z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }).optional(),
  })
  .meta({ id: 'Execution' });

/** One `disclose` field as an approver sees it (a failed filter: `value: null, error: true`). */
export const DisclosedValue = z
  .strictObject({
    label: z.string(),
    value: z.unknown(),
    error: z.literal(true).optional(),
    truncated: z.literal(true).describe('The value was longer than the bound and was cut (it is then a string).').optional(),
  })
  .meta({ id: 'DisclosedValue' });

/**
 * The call's request as persisted, `redact` paths replaced by `[REDACTED]` (which may replace a
 * whole member, hence the string alternatives). Raw `http` calls add the header names and the
 * injected secret's name, never values.
 */
export const RedactedRequest = z
  .strictObject({
    method: z.string(),
    url: z.string(),
    params: z.union([z.record(z.string(), z.unknown()), z.string()]),
    body: z.unknown(),
    headers: z.array(z.string()).optional(),
    secret: z.strictObject({ name: z.string(), in: z.enum(['header', 'query']), param: z.string() }).optional(),
  })
  .meta({ id: 'RedactedRequest' });

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
  .strictObject({ ...approvalRecordFields, disclosed: z.array(DisclosedValue).optional() })
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
        request: RedactedRequest,
        disclosed: z.array(DisclosedValue),
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
