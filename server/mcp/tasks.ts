// Pending approvals as MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663). The
// task IS the call: its id is the call id (the workflow is `call-<id>`), and every `tasks/get`
// reads the call and its approval from PostgreSQL, so a task survives gateway restarts and any
// replica answers for it. Nothing about a task lives in memory.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { AgentPrincipal } from '../auth/principal.ts';
import { AppError } from '../errors.ts';
import type { Services } from '../services.ts';
import { toolError, toolResult } from './tool-invoke.ts';

/** How often a client should poll: an approval takes a person, so seconds are plenty. */
export const TASK_POLL_INTERVAL_MS = 2_000;

export const EXECUTING = 'approved: the call is executing';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** null: the call's record is kept, so the task does not expire. */
  ttlMs: null;
  pollIntervalMs: number;
}

export type DetailedTask = Task & { result?: CallToolResult; error?: { code: number; message: string } };

type TaskServices = Pick<Services, 'calls' | 'approvals'>;

/** What a pending approval answers to a client that declared the tasks extension. */
export function createdTask(pending: { call_id: string; approval_url: string; expires_at: string }): Task {
  const now = new Date().toISOString();
  return {
    taskId: pending.call_id,
    status: 'working',
    statusMessage: waitingMessage(pending.approval_url, pending.expires_at),
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
}

const waitingMessage = (url: string, expiresAt: string) => `waiting for a person to approve the call at ${url} (the approval expires at ${expiresAt})`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The call behind a task id, as its requester sees it; `null` when there is no such task for it. */
async function readCall(s: TaskServices, p: AgentPrincipal, taskId: string) {
  if (!UUID.test(taskId)) return null;
  try {
    return await s.calls.get(p, taskId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return null;
    throw err;
  }
}

/** An error result in the gateway's envelope (the same as a failed tool call). */
const errorResult = (code: ConstructorParameters<typeof AppError>[0], message: string, details?: Record<string, unknown>) => toolError(new AppError(code, message, details));
/** A denial is the answer `gateway_call` gives today (status "denied"), flagged as an error result. */
const deniedResult = (reason: string, callId: string): CallToolResult => ({ ...toolResult({ status: 'denied', reason, call_id: callId }), isError: true });

/**
 * The task as it stands now, or null when the caller has no such task. An approved call of an
 * agent that resumes by hand (`auto_call_on_approve: false`) is resumed here: for a task client,
 * polling is the resume.
 */
export async function readTask(s: TaskServices, p: AgentPrincipal, taskId: string): Promise<DetailedTask | null> {
  const call = await readCall(s, p, taskId);
  if (!call) return null;
  if (!call.approval_id) {
    // A call that never needed a person: still being checked, or answered already.
    return finished(call, call.status === 'checking' ? { status: 'working', statusMessage: 'the call is being checked' } : { status: 'completed', result: callResult(call) });
  }
  const approval = await s.approvals.get(p, call.approval_id);
  switch (call.status) {
    case 'executed':
    case 'called':
    case 'failed':
    case 'execution_failed':
      return finished(call, { status: 'completed', result: callResult(call) });
    case 'denied':
      return finished(call, { status: 'completed', result: deniedResult(approval.reason ?? 'denied', call.call_id) });
    case 'expired':
    case 'execution_expired':
      return finished(call, { status: 'completed', result: errorResult('conflict', 'the approval expired before anyone decided', { status: call.status, call_id: call.call_id }) });
    case 'cancelled':
    case 'superseded':
    case 'execution_cancelled':
      return finished(call, { status: 'cancelled', statusMessage: `the call was ${call.status.replace('execution_', 'execution ')}` });
    case 'allowed': {
      // The execution waits (`pending`) for its requester's resume when it does not run by itself.
      if ((call.execution_status ?? 'pending') === 'pending' && !approval.auto_call_on_approve) {
        const outcome = await s.calls.resume(p, call.approval_id).catch((err: unknown) => (err instanceof AppError ? err : Promise.reject(err)));
        if (!(outcome instanceof AppError)) return readTask(s, p, taskId);
      }
      return finished(call, { status: 'working', statusMessage: EXECUTING });
    }
    default:
      return finished(call, { status: 'working', statusMessage: waitingMessage(approval.approval_url, approval.expires_at) });
  }
}

type CallView = Awaited<ReturnType<Services['calls']['get']>>;

/** The tool result of a call that ran (or could not run), as `gateway_call` would have answered. */
function callResult(call: CallView): CallToolResult {
  if (call.status === 'denied') return deniedResult(call.error?.message ?? 'denied by a rule', call.call_id);
  if (call.error || call.status === 'failed' || call.status === 'execution_failed') {
    return { ...toolResult({ error: call.error ?? { code: 'upstream_error', message: 'the call failed' } }), isError: true };
  }
  return toolResult({ status: 'called', result: call.result, action_description: call.action_description, call_id: call.call_id });
}

function finished(call: CallView, state: Pick<DetailedTask, 'status' | 'statusMessage' | 'result'>): DetailedTask {
  return {
    taskId: call.call_id,
    ...state,
    createdAt: call.created_at,
    lastUpdatedAt: call.finished_at ?? new Date().toISOString(),
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
}

/**
 * `tasks/cancel`: withdraws the pending approval exactly as `POST /v1/approvals/{id}/cancel` does
 * (the approval service's `cancel`, the workflow's cancel update). A task that already ended stays as it is (the ack is the same).
 * False when the caller has no such task.
 */
export async function cancelTask(s: TaskServices, p: AgentPrincipal, taskId: string): Promise<boolean> {
  const call = await readCall(s, p, taskId);
  if (!call) return false;
  if (!call.approval_id || call.approval_status !== 'pending') return true;
  try {
    await s.approvals.cancel(p, call.approval_id, 'cancelled by the requesting agent (MCP tasks/cancel)');
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'conflict') throw err;
  }
  return true;
}
