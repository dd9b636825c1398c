// POST /mcp in the 2026-07-28 revision: one JSON-RPC request, one answer, no session. The same
// tools as the SDK path (tools.ts), the revision's envelope (revision-2026.ts), pending approvals as
// tasks for clients that declare the tasks extension (tasks.ts), a URL elicitation when the
// caller's own person decides, and `subscriptions/listen` for what the GET stream carries today.
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pkg from '../../package.json' with { type: 'json' };
import type { AgentPrincipal } from '../auth/principal.ts';
import type { StreamGuard } from '../auth/stream-guard.ts';
import { AppError, forbidden } from '../errors.ts';
import { TOOLS_LIST_CHANGED, type AgentEventHub } from '../events/agent-events.ts';
import {
  declaresExtension,
  logLevelAllows,
  META,
  readStatelessRequest,
  RPC,
  rpcFailure,
  STATELESS_REVISION,
  SUPPORTED_REVISIONS,
  TASKS_EXTENSION,
  type RpcFailure,
  type StatelessRequest,
} from './revision-2026.ts';
import { cancelTask, createdTask, readTask, type DetailedTask } from './tasks.ts';
import { approvalElicitation, decodeState, ENDED_BECAUSE, pendingResult, readElicitationAction } from './approval-elicitation.ts';
import { agentEventWaker, holdWhile } from './hold.ts';
import { GATEWAY_TOOLS, invokeToolAs, SELF_APPROVE_OFF, TOOL_NAMES, toolError, type GatewayTool, type ToolContext } from './tools.ts';

export const SERVER_INFO = { name: 'agent-action-gateway', title: 'Agent Action Gateway', version: pkg.version };

export interface StatelessDeps {
  instructions: string;
  events: AgentEventHub;
  guard: StreamGuard;
  keepAliveMs: number;
}

/**
 * How long a retry after the approval elicitation is held while the person has not decided (or the
 * approved call still executes): the official clients retry at once and give up after 10 rounds,
 * so each round waits for the decision instead. Below the clients' own request timeouts (30 s and
 * more).
 */
export const RETRY_HOLD_MS = 20_000;
/** A held retry re-reads on every agent event, and at this pace besides (events are best effort). */
const HOLD_POLL_MS = 1_000;

type Result = Record<string, unknown>;

/** Thrown inside a method to answer with a JSON-RPC error. */
class RpcError extends Error {
  readonly failure: RpcFailure;
  constructor(failure: RpcFailure) {
    super(failure.body.error.message);
    this.failure = failure;
  }
}

const fail = (r: StatelessRequest, status: number, code: number, message: string, data?: unknown) => new RpcError(rpcFailure(status, r.id, code, message, data));
const invalidParams = (r: StatelessRequest, message: string) => fail(r, 400, RPC.invalidParams, `Invalid params: ${message}`);

/** The tools a caller sees in the revision's shape (JSON Schema 2020-12 from the same zod schemas). */
function listTools(selfApprove: boolean) {
  return GATEWAY_TOOLS.filter((t) => t.name !== TOOL_NAMES.approveSelf || selfApprove).map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { io: 'input', target: 'draft-2020-12' }),
    outputSchema: z.toJSONSchema(t.output, { io: 'output', target: 'draft-2020-12' }),
    annotations: t.annotations,
    // A call that needs a person may become a task (never required: plain clients resume by id).
    ...(CALL_TOOLS.has(t.name) ? { execution: { taskSupport: 'optional' } } : {}),
  }));
}

const CALL_TOOLS: ReadonlySet<string> = new Set([TOOL_NAMES.call, TOOL_NAMES.read]);

// --- the handler ------------------------------------------------------------------------------------

export function createStatelessHandler(deps: StatelessDeps) {
  const withMeta = (result: Result): Result => ({ ...result, resultType: result.resultType ?? 'complete', _meta: { [META.serverInfo]: SERVER_INFO } });

  async function toolsCall(r: StatelessRequest, p: AgentPrincipal, ctx: ToolContext, gone: AbortSignal): Promise<Result> {
    const { name, arguments: args, requestState, inputResponses } = r.params;
    if (typeof name !== 'string') throw invalidParams(r, 'name must be a string');
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) throw invalidParams(r, 'arguments must be an object');
    const selfApprove = await ctx.services.oauth.selfApproveEnabled(p);
    const tool = GATEWAY_TOOLS.find((t) => t.name === name && (t.name !== TOOL_NAMES.approveSelf || selfApprove));
    if (!tool) {
      if (name === TOOL_NAMES.approveSelf) return toolError(forbidden(SELF_APPROVE_OFF)) as Result;
      throw invalidParams(r, `tool ${name} not found`);
    }
    // The retry after the approval elicitation: the answer is whatever became of the call.
    if (requestState !== undefined || inputResponses !== undefined) {
      if (!CALL_TOOLS.has(tool.name)) throw invalidParams(r, `${tool.name} does not ask for input: requestState and inputResponses do not go with it`);
      return resumeAfterElicitation(r, p, ctx, gone);
    }
    return answerCall(r, tool, await invokeToolAs(tool, args ?? {}, p, ctx), p, ctx);
  }

  /** A pending approval becomes an elicitation (the caller's own person decides) or a task. */
  async function answerCall(r: StatelessRequest, tool: GatewayTool, result: CallToolResult, p: AgentPrincipal, ctx: ToolContext): Promise<Result> {
    const sc = result.structuredContent as Record<string, unknown> | undefined;
    if (!CALL_TOOLS.has(tool.name) || result.isError || sc?.status !== 'pending_approval') return result as Result;
    const pending = sc as { call_id: string; approval_id: string; approval_url: string; expires_at: string; action_description: string; relationship: string };
    // A task client polls the task (and the person decides on the page its status names), even when
    // it could also open a URL: a task outlives any one request, a held retry does not.
    if (declaresExtension(r.capabilities, TASKS_EXTENSION)) return { resultType: 'task', ...createdTask(pending) };
    // `relationship` is the caller's to the requester (always `self` here); who decides is the
    // approval's resolver: the caller's own person can be asked right here, in their editor.
    if (r.capabilities.elicitation?.url && (await ctx.services.approvals.get(p, pending.approval_id)).resolver_id === p.userId) return approvalElicitation(p.identityId, pending);
    return result as Result;
  }

  /**
   * The retry after the approval elicitation. Accepted: held while the person has not decided or the
   * approved call still executes, then answered with the call's result, or, still undecided, with
   * what the client resumes from (its task, else the pending answer): never a second
   * `input_required`, which the clients would retry at once until they give up. Declined or
   * dismissed: the exchange ends with the pending answer (the approval stays open). No answer at
   * all: asked again while the approval is pending.
   */
  async function resumeAfterElicitation(r: StatelessRequest, p: AgentPrincipal, ctx: ToolContext, gone: AbortSignal): Promise<Result> {
    const state = decodeState(r.params.requestState);
    if (!state || state.agent_id !== p.identityId) throw invalidParams(r, 'requestState is not one this server issued for you');
    const answer = readElicitationAction(r.params.inputResponses);
    if ('error' in answer) throw invalidParams(r, answer.error);
    const read = () => readTask(ctx.services, p, state.call_id);
    let task: DetailedTask | null = await read();
    if (!task) throw invalidParams(r, 'requestState names no call of yours');
    if (answer.action === 'missing' && task.status === 'working' && r.capabilities.elicitation?.url) {
      const asked = await askAgain(p, ctx, state.call_id);
      if (asked) return asked;
    }
    if ((answer.action === 'accept' || answer.action === 'missing') && task.status === 'working') {
      const waker = await agentEventWaker(deps.events, p.identityId, gone, ctx.logger);
      try {
        task = await holdWhile(read, (t) => t.status === 'working', { deadline: Date.now() + RETRY_HOLD_MS, signal: gone, waker, pollMs: HOLD_POLL_MS });
      } finally {
        waker.close();
      }
    }
    if (!task) throw invalidParams(r, 'requestState names no call of yours');
    if (task.status === 'completed' && task.result) return task.result as Result;
    if (task.status === 'cancelled') return toolError(new AppError('conflict', task.statusMessage ?? 'the call was cancelled', { call_id: state.call_id })) as Result;
    const ended = answer.action === 'decline' || answer.action === 'cancel' ? answer.action : null;
    if (!ended && declaresExtension(r.capabilities, TASKS_EXTENSION)) return { resultType: 'task', ...task, result: undefined };
    const view = await ctx.services.calls.get(p, state.call_id);
    const approval = view.approval_id ? await ctx.services.approvals.get(p, view.approval_id) : null;
    if (approval?.status === 'pending') return pendingResult(view.call_id, view.action_description, approval, ENDED_BECAUSE[ended ?? 'undecided']) as Result;
    // Allowed, and its execution outlasted the hold.
    return toolError(new AppError('conflict', `the call is not finished yet (${task.statusMessage ?? task.status}): resume it with gateway_call {approval_id}`, { call_id: view.call_id, approval_id: view.approval_id })) as Result;
  }

  /** The same elicitation again while the call's approval is still pending; null once it is not. */
  async function askAgain(p: AgentPrincipal, ctx: ToolContext, callId: string): Promise<Result | null> {
    const view = await ctx.services.calls.get(p, callId);
    const approval = view.approval_id ? await ctx.services.approvals.get(p, view.approval_id) : null;
    if (approval?.status !== 'pending') return null;
    return approvalElicitation(p.identityId, { call_id: view.call_id, approval_id: approval.id, approval_url: approval.approval_url, expires_at: approval.expires_at, action_description: view.action_description });
  }

  function requireTasks(r: StatelessRequest): string {
    if (!declaresExtension(r.capabilities, TASKS_EXTENSION)) {
      throw fail(r, 400, RPC.missingCapability, `${r.method} needs the ${TASKS_EXTENSION} extension in _meta ${META.clientCapabilities}`, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    }
    const taskId = r.params.taskId;
    if (typeof taskId !== 'string') throw invalidParams(r, 'taskId must be a string');
    return taskId;
  }

  async function dispatch(r: StatelessRequest, p: AgentPrincipal, ctx: ToolContext, gone: AbortSignal): Promise<Result> {
    switch (r.method) {
      case 'server/discover':
        return {
          supportedVersions: SUPPORTED_REVISIONS,
          capabilities: { tools: { listChanged: true }, logging: {}, extensions: { [TASKS_EXTENSION]: {} } },
          instructions: deps.instructions,
          ttlMs: 0,
          cacheScope: 'private',
        };
      case 'tools/list':
        // Private and never fresh: the list depends on the caller's self-approval flag.
        return { tools: listTools(await ctx.services.oauth.selfApproveEnabled(p)), ttlMs: 0, cacheScope: 'private' };
      case 'tools/call':
        return toolsCall(r, p, ctx, gone);
      case 'tasks/get': {
        const task = await readTask(ctx.services, p, requireTasks(r));
        if (!task) throw invalidParams(r, 'no such task');
        return { ...task };
      }
      case 'tasks/cancel':
        if (!(await cancelTask(ctx.services, p, requireTasks(r)))) throw invalidParams(r, 'no such task');
        return {};
      case 'tasks/update':
        requireTasks(r);
        // The gateway's tasks wait for a person on the approval page, never for client input.
        throw invalidParams(r, 'this task is not waiting for input: a person decides on the approval page');
      default:
        throw fail(r, 404, RPC.methodNotFound, `Method not found: ${r.method} (MCP ${STATELESS_REVISION})`);
    }
  }

  /** `subscriptions/listen`: an SSE stream of the notifications the client opted in to. */
  async function listen(r: StatelessRequest, p: AgentPrincipal, res: Response, token: string): Promise<void> {
    const filter = r.params.notifications;
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw invalidParams(r, 'notifications must be an object (the subscription filter)');
    // Only tool-list changes exist here (no prompts, no resources); approval events are log
    // messages, sent when the request's _meta asks for a log level (the revision's opt-in).
    const granted = (filter as Record<string, unknown>).toolsListChanged === true ? { toolsListChanged: true } : {};
    const meta = { [META.subscriptionId]: r.id };
    const send = (method: string, params: Record<string, unknown>) => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta: meta } })}\n\n`);
    const cleanup: Array<() => void> = [];
    let closed = false;
    const end = () => {
      closed = true;
      for (const undo of cleanup.splice(0)) undo();
      if (!res.writableEnded) res.end();
    };
    res.on('close', end);
    cleanup.push(
      await deps.events.subscribe(
        p.identityId,
        (event) => {
          if (event.type === TOOLS_LIST_CHANGED) {
            if (granted.toolsListChanged) send('notifications/tools/list_changed', {});
          } else if (logLevelAllows(r.logLevel, 'info')) {
            send('notifications/message', { level: 'info', logger: 'gateway', data: event });
          }
        },
        end,
      ),
    );
    if (closed) return end();
    cleanup.push(await deps.guard.watch(token, { session: false, agentKey: true, oauth: true }, end));
    if (closed) return end();
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    send('notifications/subscriptions/acknowledged', { notifications: granted });
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), deps.keepAliveMs);
    cleanup.push(() => clearInterval(keepAlive));
  }

  return async function handle(req: Request, res: Response, p: AgentPrincipal, token: string, ctx: ToolContext): Promise<void> {
    const r = readStatelessRequest(req.body, (name) => req.get(name));
    if (r === null) {
      res.status(202).end(); // a notification: nothing to answer
      return;
    }
    if ('status' in r) {
      res.status(r.status).json(r.body);
      return;
    }
    try {
      if (r.method === 'subscriptions/listen') return await listen(r, p, res, token);
      // A request held for a person's decision stops waiting when its client goes away.
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const result = await dispatch(r, p, ctx, gone.signal);
      res.status(200).json({ jsonrpc: '2.0', id: r.id, result: withMeta(result) });
    } catch (err) {
      if (err instanceof RpcError) {
        res.status(err.failure.status).json(err.failure.body);
        return;
      }
      if (err instanceof AppError && r.method !== 'tools/call') {
        // A service refusal outside a tool (e.g. tasks/cancel by someone else): an invalid request.
        res.status(400).json(rpcFailure(400, r.id, RPC.invalidParams, err.message, { code: err.code }).body);
        return;
      }
      ctx.logger.error({ err, method: r.method, request_id: ctx.requestId }, 'MCP request failed');
      if (!res.headersSent) res.status(500).json(rpcFailure(500, r.id, RPC.internal, 'Internal error').body);
      else res.end();
    }
  };
}
