// Response bodies of the call and approval routes (the spec's result tags and approval record).
import { z } from 'zod';
import { nextCursor, timestamp, uuid } from '../http/openapi/common.ts';

const approvalRisk = z.enum(['low', 'med', 'high']);
/** Every answer names its call: `GET /v1/calls/{call_id}` tells what became of it. */
const callId = uuid.describe('The call this answer belongs to: `GET /v1/calls/{call_id}` reads its current state.');
const ErrorBody = z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });
const Tier = z
  .strictObject({
    keys: z.array(z.string()),
    description: z.string(),
    condition: z.string().optional().describe('Remember this tier by sending its keys as remember_keys and this condition as remember_condition: the rule covers the keys only when it holds.'),
  })
  .meta({ id: 'Tier' });

/** One field an approver changed (issue 31): dotted path, before and after (`[REDACTED]` where redacted). */
export const FieldChange = z
  .strictObject({ field: z.string(), before: z.unknown().optional(), after: z.unknown().optional() })
  .meta({ id: 'FieldChange' });
const modifiedByApprover = z.literal(true).optional().describe('The approver edited the request before allowing it: `diff` says what changed, and that is what ran.');

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
    modified_by_approver: modifiedByApprover,
    diff: z.array(FieldChange).optional(),
    call_id: callId,
  })
  .meta({ id: 'CallCalled' });

export const Denied = z.strictObject({ status: z.literal('denied'), reason: z.string(), call_id: callId }).meta({ id: 'CallDenied' });

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
    gap_reasons: z.array(z.string()).optional().describe('Why rules that matched the keys did not cover the call: a condition that was false ("body.amount <= 50 was false: amount is 60") or a spent budget.'),
    call_id: callId,
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
    error: ErrorBody.optional(),
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
    fixed_headers: z.record(z.string(), z.string()).optional().describe("A service action's fixed headers (an API version), as its template declares them."),
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
  gap_reasons: z.array(z.string()).optional().describe('Why rules that matched the keys did not cover the call (a false condition, a spent budget).'),
  expires_at: timestamp,
  execution: Execution.optional(),
  modified_by_approver: modifiedByApprover,
  diff: z.array(FieldChange).optional(),
  edited_permission_keys: z.array(z.string()).optional().describe('The keys re-derived from the edited request (what was checked, run and remembered).'),
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
    edited_request: RedactedRequest.optional().describe('The request the approver allowed instead of the agent\'s (`action.request`), redacted alike.'),
    edited_description: z.string().optional(),
    requester: z.strictObject({ id: uuid, kind: z.enum(['user', 'agent', 'subagent']).optional(), name: z.string().optional() }),
    resolver_id: uuid,
    auto_call_on_approve: z.boolean(),
    decision: z.string().nullable(),
    reason: z.string().nullable(),
    resolved_by: uuid.nullable(),
    resolved_at: timestamp.nullable(),
    created_at: timestamp,
    approval_url: z.string(),
    can_bubble: z.boolean().describe('Whether `bubble` would move the approval now: it is open and someone is above where it sits (the next identity in the chain, the user\'s approver, or other admins).'),
    routing: z
      .strictObject({
        stage: z.enum(['chain', 'approver', 'admins']).describe('`chain`: inside the requester\'s identity chain; `approver`: bubbled past the user to their approver; `admins`: to the org\'s admins.'),
        why: z.string().nullable().describe('Why it is yours to decide when it was routed to you ("bubbled from Dana: you are Sam\'s approver"); null otherwise.'),
      })
      .optional(),
  })
  .meta({ id: 'Approval' });

export const ApprovalPage = z.strictObject({ approvals: z.array(Approval), next_cursor: nextCursor });

/** `GET /v1/calls/{id}`: a call as it stands now. */
export const CallView = z
  .strictObject({
    call_id: uuid,
    status: z
      .string()
      .describe(
        '`checking` (not answered yet), `called`, `failed`, `denied`; with an approval: `pending_approval`, `deduplicated` (joined an identical pending approval), `allowed`, `executed`, `execution_failed`, `execution_cancelled`, `execution_expired`, `expired`, `superseded`, `cancelled`',
      ),
    service: z.string(),
    action: z.string(),
    action_description: z.string(),
    requester_id: uuid,
    created_at: timestamp,
    finished_at: timestamp.nullable(),
    http_status_code: z.int().nullable(),
    result: z.unknown().optional().describe('The upstream result once the call (or its approved execution) ran.'),
    error: ErrorBody.optional().describe('Why the call failed, e.g. `outcome_unknown` when a request that may have left was not sent again.'),
    approval_id: uuid.nullable(),
    approval_status: approvalStatus.nullable(),
    execution_id: uuid.nullable(),
    execution_status: executionStatus.nullable(),
  })
  .meta({ id: 'Call' });
