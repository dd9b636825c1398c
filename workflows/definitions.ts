// Everything shared between workflow code and the rest of the gateway: task queue, message
// definitions and their types. The API, CLI and dashboard import this file, never workflow code.
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FieldChange } from '../core/approvals/request-edit.ts';
import type { CallResult } from '../core/execution/result.ts';
import type { MessageProof } from '../core/decisions/proof.ts';

export const TASK_QUEUE = 'gateway-actions';

// ---------------------------------------------------------------------------------------------
// Wiring proof (issue 2): a workflow whose one activity writes a row to PostgreSQL.

export interface DiagnosticPingInput {
  message: string;
}
export interface DiagnosticPingResult {
  rowId: string;
  workflowId: string;
}
export const diagnosticPingStatusQuery = defineQuery<'running' | 'done'>('diagnosticPingStatus');
export const diagnosticPingWorkflowId = (id: string) => `diagnostic-ping-${id}`;

// ---------------------------------------------------------------------------------------------
// The call workflow (DESIGN.md §4): one per action call, id `call-<callId>`.

export const callWorkflowId = (callId: string) => `call-${callId}`;

export type Risk = 'read' | 'write' | 'delete';
export type ApprovalRisk = 'low' | 'med' | 'high';
export type Runtime = 'http' | 'mcp' | 'platform';

export interface Tier {
  keys: string[];
  description: string;
  /** Remembered with this condition (`remember_condition`): the keys only when it holds. */
  condition?: string;
}

export interface ChainMember {
  id: string;
  kind: 'user' | 'agent' | 'subagent';
  parentId: string | null;
  inheritPermissions: boolean;
}

export interface Clocks {
  /** A pending approval expires this long after it is raised. */
  approvalTtlMs: number;
  /** After an allow, the execution must start within this long or it expires. */
  executionWindowMs: number;
  /** Pending this long without a decision: the approval moves one resolver up. Null = off. */
  autoBubbleMs: number | null;
}

/**
 * What the workflow knows about a call. Never holds secrets or the unredacted request: the full
 * request is stored encrypted in `calls.request_envelope` and decrypted inside activities only.
 */
export interface CallSpec {
  callId: string;
  orgId: string;
  requesterId: string;
  userId: string;
  /** Requester first, the user last. */
  chain: ChainMember[];
  service: string;
  template: string;
  action: string;
  runtime: Runtime;
  risk: Risk;
  approvalRisk: ApprovalRisk;
  permissionKeys: string[];
  description: string;
  autoCallOnApprove: boolean;
  maxPendingPerAgent: number;
  clocks: Clocks;
  approvalUrlBase: string;
  requestId: string | null;
  verbose: boolean;
  /** Keyed digest of the full request: identical pending requests share one approval. */
  callDigest: string;
  /**
   * The gateway's message-signing public keys (hex): the workflow acts only on updates and signals
   * signed by one of them (core/decisions/proof.ts), never on one sent straight to Temporal.
   */
  messageKeys: string[];
  /** The action's `disclose` values (computed over the redacted request, so safe to record). */
  disclosed?: DisclosedValue[];
  /**
   * Conditions derived from the redacted request where the action's schema makes them obvious
   * (core/permissions/derived-conditions.ts): offered as remember tiers after the key tiers.
   */
  rememberConditions?: { condition: string; description: string }[];
  /**
   * Set on the spec the workflow hands its execution steps when the approver edited the request:
   * the send loads the edited request from the approval row, the keys and
   * description above are the edited request's, and the outcome says so.
   */
  edit?: { approvalId: string; diff: FieldChange[] };
}

export type { FieldChange } from '../core/approvals/request-edit.ts';

/**
 * An approver's edit, judged by the API (only narrows, schema-valid) before it reaches the
 * workflow: the edited request's keys, description and redacted form, the diff, and the request
 * itself as an envelope encrypted like `calls.request_envelope` (ciphertext only, never the request).
 */
export interface ApprovedEdit {
  envelope: unknown;
  redacted: unknown;
  diff: FieldChange[];
  permissionKeys: string[];
  description: string;
  disclosed?: DisclosedValue[];
}

/** What an outcome of an edited request adds, so the agent's model knows what actually ran. */
export interface EditedMark {
  modified_by_approver?: true;
  diff?: FieldChange[];
}

/** One `disclose` entry's value; a filter that failed or timed out gives `value: null, error: true`. */
export interface DisclosedValue {
  label: string;
  value: unknown;
  error?: true;
  /** The value's JSON was longer than the gateway's bound and was cut (value is then a string). */
  truncated?: true;
}

// The result shapes are the pure core's (core/execution/result.ts); the workflow contract carries them.
export type { CallResult, CompactResult, VerboseResult } from '../core/execution/result.ts';

export interface ErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface PendingApprovalOutcome {
  status: 'pending_approval';
  approval_id: string;
  approval_url: string;
  action_description: string;
  expires_at: string;
  relationship: 'self' | 'downstream';
  suggested_tiers: Tier[];
  auto_call_on_approve: boolean;
  risk: ApprovalRisk;
  permission_keys: string[];
  /** Why rules that matched the keys did not cover the call (issue 44); absent when none did. */
  gap_reasons?: string[];
}

export type CallOutcome =
  | ({ status: 'called'; result: CallResult; action_description: string } & EditedMark)
  | PendingApprovalOutcome
  | { status: 'denied'; reason: string }
  | ({ status: 'error'; error: ErrorBody } & EditedMark);

export type ExecutionStatus = 'pending' | 'executing' | 'executed' | 'failed' | 'cancelled' | 'expired';
export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'bubbled' | 'expired' | 'superseded' | 'cancelled';

export interface ExecutionRecord {
  id: string;
  status: ExecutionStatus;
  runtime: Runtime;
  triggered_by?: 'user' | 'agent' | 'auto';
  http_status_code?: number;
  result?: unknown;
  /** Why a `failed` or `cancelled` execution did not run, e.g. `outcome_unknown`. */
  error?: ErrorBody;
}

/** The approval record of the spec ("Approval record"), as resolve returns it. */
export interface ApprovalRecord {
  id: string;
  status: ApprovalStatus;
  relationship: 'self' | 'downstream' | 'not_in_your_chain';
  risk: ApprovalRisk;
  permission_keys: string[];
  suggested_tiers: Tier[];
  derived_keys: string[];
  expires_at: string;
  execution?: ExecutionRecord;
  /** The approver allowed an edited request: its keys and the diff. */
  modified_by_approver?: true;
  diff?: FieldChange[];
  edited_permission_keys?: string[];
}

/**
 * What the call workflow returns (the Temporal UI's Result panel): the final state. A call that
 * raised an approval ends with the approval record, its execution summarised; any other call with
 * its outcome (`called`, `denied`, an error).
 */
export type CallWorkflowResult = CallOutcome | ApprovalRecord;

/** The check's verdict (the first step): covered, denied, a gap an approval must close, or an error. */
export type CheckResult =
  | { outcome: 'covered' }
  | { outcome: 'denied'; reason: string }
  /** `reasons`: why rules that matched by key did not cover (a failed condition, a spent budget). */
  | { outcome: 'gap'; gapIdentityId: string; firstResolverId: string; reasons?: string[] }
  | { outcome: 'error'; error: ErrorBody };

/**
 * The caller's answer once the first step ran: the executed call's outcome, a denial or an error;
 * null when the call goes on to an approval. One reading for the workflow and the in-process answer.
 */
export function firstAnswerOf(check: CheckResult, executed: ExecuteCallResult | null): CallOutcome | null {
  if (check.outcome === 'error') return { status: 'error', error: check.error };
  if (check.outcome === 'denied') return { status: 'denied', reason: check.reason };
  if (check.outcome === 'covered') return executed!.outcome;
  return null;
}

export interface ExecuteCallResult {
  outcome: CallOutcome;
  httpStatusCode: number | null;
  executionStatus: ExecutionStatus | null;
}


/** The workflow ended with its approval's record (it raised or joined one), not a call outcome. */
export const isApprovalRecord = (r: CallWorkflowResult): r is ApprovalRecord => 'id' in r && 'derived_keys' in r;

export type Decision = 'allow' | 'allow_remember' | 'deny' | 'bubble';

export interface ResolveInput {
  decision: Decision;
  /** The gateway's signature over the rest (core/decisions/proof.ts). */
  proof?: MessageProof;
  resolverId: string;
  /** The API checked the org role; the workflow checks ancestry against its own chain. */
  resolverIsAdmin: boolean;
  rememberKeys?: string[];
  /** Milliseconds; the API parsed `<n>h|<n>d`. */
  rememberTtlMs?: number;
  rememberTtl?: string;
  /** A CEL condition the remembered rules carry (compiled and bounded by the API). */
  rememberCondition?: string;
  reason?: string;
  /** Allow with changes: the request the approver allows instead of the agent's. */
  edit?: ApprovedEdit;
  /**
   * Offered by an API process that runs a worker: an allow of an auto-call
   * approval is recorded, re-checked and sent in one activity, and the approver's answer is handed
   * to that process under this key once the decision is committed (the local exchange, server/temporal/local-exchange.ts).
   */
  answerKey?: string;
}

export interface ReplayInput {
  callerId: string;
  proof?: MessageProof;
  triggeredBy: 'user' | 'agent';
}

export const outcomeUpdate = defineUpdate<CallOutcome>('outcome');
export const resolveUpdate = defineUpdate<ApprovalRecord, [ResolveInput]>('resolve');
export const replayUpdate = defineUpdate<CallOutcome, [ReplayInput]>('replay');
export interface CancelInput {
  callerId: string;
  proof?: MessageProof;
  reason?: string;
}

export const cancelUpdate = defineUpdate<ApprovalRecord, [CancelInput]>('cancel');
export interface SupersedeInput {
  byApprovalId: string;
  proof?: MessageProof;
}
export const supersedeSignal = defineSignal<[SupersedeInput]>('supersede');
/**
 * The final state of an approval, sent by the call that raised it to the calls that joined it
 * (deduplicated into it): their workflows end with the shared outcome, not `pending_approval`.
 */
export interface SharedOutcomeInput {
  record: ApprovalRecord;
  proof?: MessageProof;
}
export const sharedOutcomeSignal = defineSignal<[SharedOutcomeInput]>('shared-outcome');

export interface CallState {
  approvalId: string | null;
  approvalStatus: ApprovalStatus | null;
  resolverId: string | null;
  executionStatus: ExecutionStatus | null;
}
export const stateQuery = defineQuery<CallState>('state');

/** Errors that an update validator raises; the API maps them to REST error codes. */
export const UPDATE_ERRORS = {
  notPending: 'approval_not_pending',
  notInChain: 'not_in_your_chain',
  selfResolve: 'cannot_resolve_own_approval',
  notReplayable: 'not_replayable',
  replayInFlight: 'replay_in_flight',
  notRequester: 'not_requester',
  cannotBubble: 'cannot_bubble',
  invalidRemember: 'invalid_remember_keys',
  invalidEdit: 'invalid_edit',
  /** The message carries no valid proof that the gateway sent it (sent straight to Temporal?). */
  unverified: 'message_unverified',
} as const;
export type UpdateErrorType = (typeof UPDATE_ERRORS)[keyof typeof UPDATE_ERRORS];

/**
 * The REST error code each refusal answers with. The workflow throws an `ApplicationFailure` whose
 * type is the refusal and whose first detail is the error's details; the API maps it once
 * (server/approvals/update-errors.ts), never by reading the message.
 */
export const UPDATE_ERROR_CODES: Record<UpdateErrorType, 'conflict' | 'forbidden' | 'not_in_your_chain' | 'invalid_request'> = {
  approval_not_pending: 'conflict',
  not_in_your_chain: 'not_in_your_chain',
  cannot_resolve_own_approval: 'forbidden',
  not_replayable: 'conflict',
  replay_in_flight: 'conflict',
  not_requester: 'forbidden',
  cannot_bubble: 'conflict',
  invalid_remember_keys: 'invalid_request',
  invalid_edit: 'invalid_request',
  message_unverified: 'forbidden',
};

/**
 * The call workflow's search attributes, all Keyword: the API sets them at start, the workflow
 * upserts the status. The embedded Temporal is started with them; another is checked for them.
 */
export const CALL_SEARCH_ATTRIBUTES = {
  org: defineSearchAttributeKey('GatewayOrg', 'KEYWORD'),
  agent: defineSearchAttributeKey('GatewayAgent', 'KEYWORD'),
  service: defineSearchAttributeKey('GatewayService', 'KEYWORD'),
  action: defineSearchAttributeKey('GatewayAction', 'KEYWORD'),
  status: defineSearchAttributeKey('GatewayStatus', 'KEYWORD'),
};
