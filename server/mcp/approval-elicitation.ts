// The self-approval URL elicitation of the 2026-07-28 revision (a multi round-trip request): the
// first answer asks the caller's own person to open the approval page (`input_required`), the
// client retries with `requestState` and the person's `inputResponses`. What goes on the wire and
// what comes back is built and read here; call-answer.ts does the I/O. Pure: no I/O.
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { toolResult } from './tool-invoke.ts';

/** The key of the one input request this server sends (`inputRequests.approval`). */
export const APPROVAL_INPUT = 'approval';

/**
 * What the client echoes after the URL elicitation: the call it waits for and who asked. Not a
 * secret and not trusted: every use re-reads the call with the caller's own authority.
 */
const requestStateSchema = z.strictObject({ call_id: z.uuid(), agent_id: z.uuid() });
export type ElicitationState = z.infer<typeof requestStateSchema>;

export const encodeState = (s: ElicitationState) => Buffer.from(JSON.stringify(s)).toString('base64url');

export function decodeState(raw: unknown): ElicitationState | null {
  if (typeof raw !== 'string' || raw.length > 400) return null;
  try {
    const parsed = requestStateSchema.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export interface PendingCall {
  call_id: string;
  approval_id: string;
  approval_url: string;
  expires_at: string;
  action_description: string;
}

/** The `input_required` result: open the approval page (URL mode; nothing is collected in-band). */
export function approvalElicitation(agentId: string, pending: PendingCall): Record<string, unknown> {
  return {
    resultType: 'input_required',
    inputRequests: {
      [APPROVAL_INPUT]: {
        method: 'elicitation/create',
        params: {
          mode: 'url',
          elicitationId: pending.approval_id,
          url: pending.approval_url,
          message: `Approve or deny "${pending.action_description}" (the approval expires at ${pending.expires_at}).`,
        },
      },
    },
    requestState: encodeState({ call_id: pending.call_id, agent_id: agentId }),
  };
}

// An elicitation result (ElicitResult): URL mode carries no content, only the person's action.
const inputResponsesSchema = z.looseObject({ [APPROVAL_INPUT]: z.looseObject({ action: z.enum(['accept', 'decline', 'cancel']) }).optional() });

/**
 * What the person did with the elicitation; `missing`: the retry carries no answer to it (a
 * state-only retry, or the answer left out), so it is asked again (SEP-2322: re-request what is
 * missing).
 */
export type ElicitationAction = 'accept' | 'decline' | 'cancel' | 'missing';

/** The person's action, or an error message for `inputResponses` that are not an elicitation result. */
export function readElicitationAction(inputResponses: unknown): { action: ElicitationAction } | { error: string } {
  if (inputResponses === undefined) return { action: 'missing' };
  const parsed = inputResponsesSchema.safeParse(inputResponses);
  if (!parsed.success) {
    return { error: `inputResponses must be an object whose "${APPROVAL_INPUT}" member, when present, is an elicitation result {action: "accept" | "decline" | "cancel"}` };
  }
  return { action: parsed.data[APPROVAL_INPUT]?.action ?? 'missing' };
}

/** The approval as the pending result needs it (the approval service's view). */
export interface PendingApprovalView {
  id: string;
  approval_url: string;
  expires_at: string;
  risk: unknown;
  permission_keys: string[];
  suggested_tiers: unknown;
  auto_call_on_approve: boolean;
}

/**
 * The call still waits for its person: `gateway_call`'s own `pending_approval` answer, led by a
 * sentence saying why the exchange ends here and how to resume (`gateway_call {approval_id}`).
 */
export function pendingResult(callId: string, actionDescription: string, approval: PendingApprovalView, why: string): CallToolResult {
  const result = toolResult({
    status: 'pending_approval',
    approval_id: approval.id,
    approval_url: approval.approval_url,
    action_description: actionDescription,
    expires_at: approval.expires_at,
    relationship: 'self',
    suggested_tiers: approval.suggested_tiers,
    auto_call_on_approve: approval.auto_call_on_approve,
    risk: approval.risk,
    permission_keys: approval.permission_keys,
    call_id: callId,
  });
  const next = approval.auto_call_on_approve
    ? `once allowed it runs by itself; read its result with gateway_call {"approval_id": "${approval.id}"}`
    : `once allowed, resume it with gateway_call {"approval_id": "${approval.id}"}`;
  return { ...result, content: [{ type: 'text', text: `${why} The call waits for a decision at ${approval.approval_url} until ${approval.expires_at}: ${next}.` }, ...result.content] };
}

/** Why the exchange ends while the approval is still pending. */
export const ENDED_BECAUSE = {
  decline: 'The approval page was declined, so nothing more is asked here.',
  cancel: 'The approval page was dismissed, so nothing more is asked here.',
  undecided: 'Nobody has decided yet.',
} as const;
