// What a `tools/call` of gateway_call or gateway_read answers when the call waits for a person:
// a task for a client that declared the tasks extension (2026-07-28, SEP-2663), a URL elicitation
// of the approval page when the caller's own person decides and the client can open URLs, else
// the plain `pending_approval` result. And the retry after that elicitation: held while the person
// has not decided, then answered with whatever became of the call.
import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import type { AgentPrincipal } from '../auth/principal.ts';
import { AppError } from '../errors.ts';
import type { AgentEventHub } from '../events/agent-events.ts';
import { approvalElicitation, ENDED_BECAUSE, pendingResult, readElicitationAction, type ElicitationState } from './approval-elicitation.ts';
import { agentEventWaker, holdWhile } from './hold.ts';
import { createdTask, readTask, type DetailedTask } from './tasks.ts';
import { CALL_TOOLS, toolError } from './tool-invoke.ts';
import type { GatewayTool, ToolContext } from './tools.ts';

/**
 * How long a retry after the approval elicitation is held while the person has not decided (or the
 * approved call still executes): the official clients retry at once and give up after 10 rounds,
 * so each round waits for the decision instead. Below the clients' own request timeouts (30 s and
 * more).
 */
export const RETRY_HOLD_MS = 20_000;
/** A held retry re-reads on every agent event, and at this pace besides (events are best effort). */
const HOLD_POLL_MS = 1_000;

/** What the client declared on this request (2026-07-28: per request; 2025: nothing here). */
export interface CallerCapabilities {
  tasks: boolean;
  urlElicitation: boolean;
}

/** The answer to a call as the client can take it. Results of the tasks extension are spelled out (the SDK passes them through). */
export type CallAnswer = CallToolResult | Record<string, unknown>;

export const invalidParams = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${message}`);

/** A pending approval becomes a task (tasks clients) or an elicitation (the caller's own person decides). */
export async function answerCall(tool: GatewayTool, result: CallToolResult, p: AgentPrincipal, ctx: ToolContext, caps: CallerCapabilities): Promise<CallAnswer> {
  const sc = result.structuredContent as Record<string, unknown> | undefined;
  if (!CALL_TOOLS.has(tool.name) || result.isError || sc?.status !== 'pending_approval') return result;
  const pending = sc as { call_id: string; approval_id: string; approval_url: string; expires_at: string; action_description: string };
  // A task client polls the task (and the person decides on the page its status names), even when
  // it could also open a URL: a task outlives any one request, a held retry does not.
  if (caps.tasks) return { resultType: 'task', ...createdTask(pending) };
  // Who decides is the approval's resolver: the caller's own person can be asked right here.
  if (caps.urlElicitation && (await ctx.services.approvals.get(p, pending.approval_id)).resolver_id === p.userId) return approvalElicitation(p.identityId, pending);
  return result;
}

/**
 * The retry after the approval elicitation (its `requestState` already checked to be this caller's).
 * Accepted: held while the person has not decided or the approved call still executes, then
 * answered with the call's result, or, still undecided, with what the client resumes from (its
 * task, else the pending answer): never a second `input_required`, which the clients would retry
 * at once until they give up. Declined or dismissed: the pending answer (the approval stays open).
 * No answer at all: asked again while the approval is pending.
 */
export async function resumeAfterElicitation(
  state: ElicitationState,
  inputResponses: unknown,
  p: AgentPrincipal,
  ctx: ToolContext,
  caps: CallerCapabilities,
  hold: { events: AgentEventHub; signal: AbortSignal },
): Promise<CallAnswer> {
  const answer = readElicitationAction(inputResponses);
  if ('error' in answer) throw invalidParams(answer.error);
  const read = () => readTask(ctx.services, p, state.call_id);
  let task: DetailedTask | null = await read();
  if (!task) throw invalidParams('requestState names no call of yours');
  if (answer.action === 'missing' && task.status === 'working' && caps.urlElicitation) {
    const asked = await askAgain(p, ctx, state.call_id);
    if (asked) return asked;
  }
  if ((answer.action === 'accept' || answer.action === 'missing') && task.status === 'working') {
    const waker = await agentEventWaker(hold.events, p.identityId, hold.signal, ctx.logger);
    try {
      task = await holdWhile(read, (t) => t.status === 'working', { deadline: Date.now() + RETRY_HOLD_MS, signal: hold.signal, waker, pollMs: HOLD_POLL_MS });
    } finally {
      waker.close();
    }
  }
  if (!task) throw invalidParams('requestState names no call of yours');
  if (task.status === 'completed' && task.result) return task.result;
  if (task.status === 'cancelled') return toolError(new AppError('conflict', task.statusMessage ?? 'the call was cancelled', { call_id: state.call_id }));
  const ended = answer.action === 'decline' || answer.action === 'cancel' ? answer.action : null;
  if (!ended && caps.tasks) return { resultType: 'task', ...task, result: undefined };
  const view = await ctx.services.calls.get(p, state.call_id);
  const approval = view.approval_id ? await ctx.services.approvals.get(p, view.approval_id) : null;
  if (approval?.status === 'pending') return pendingResult(view.call_id, view.action_description, approval, ENDED_BECAUSE[ended ?? 'undecided']);
  // Allowed, and its execution outlasted the hold.
  return toolError(new AppError('conflict', `the call is not finished yet (${task.statusMessage ?? task.status}): resume it with gateway_call {approval_id}`, { call_id: view.call_id, approval_id: view.approval_id }));
}

/** The same elicitation again while the call's approval is still pending; null once it is not. */
async function askAgain(p: AgentPrincipal, ctx: ToolContext, callId: string): Promise<CallAnswer | null> {
  const view = await ctx.services.calls.get(p, callId);
  const approval = view.approval_id ? await ctx.services.approvals.get(p, view.approval_id) : null;
  if (approval?.status !== 'pending') return null;
  return approvalElicitation(p.identityId, { call_id: view.call_id, approval_id: approval.id, approval_url: approval.approval_url, expires_at: approval.expires_at, action_description: view.action_description });
}
