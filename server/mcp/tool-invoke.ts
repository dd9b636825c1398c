// Running the gateway's tools (tools.ts) for MCP: the tools a caller sees and how `tools/list`
// shows them, the arguments checked the gateway's way (every failure a tool result with the error
// envelope, DESIGN.md §5, never a protocol error), and results with `structuredContent` plus the
// same JSON as text.
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { z, ZodError } from 'zod';
import type { AgentPrincipal } from '../auth/principal.ts';
import { AppError, appErrorBody, zodToAppError } from '../errors.ts';
import { jsonInputError } from '../http/input-guard.ts';
import { GATEWAY_TOOLS, TOOL_NAMES, type GatewayTool, type ToolContext } from './tools.ts';

export function toolResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

export function toolError(err: AppError): CallToolResult {
  const envelope = { error: appErrorBody(err) };
  return { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope, isError: true };
}

const issuesError = (tool: string, err: ZodError): AppError => zodToAppError(err, `invalid arguments for ${tool}`);

/** Validates the arguments (envelope errors, never protocol errors) and runs the tool as `p`. */
export async function invokeTool(tool: GatewayTool, rawArgs: unknown, p: AgentPrincipal, ctx: ToolContext): Promise<CallToolResult> {
  try {
    const args = (rawArgs ?? {}) as Record<string, unknown>;
    // The REST input guard's rule, for tool arguments too: no NUL or lone surrogate, no hostile nesting.
    const unstorable = jsonInputError(args, 'argument');
    if (unstorable) throw unstorable;
    const shapeError = tool.precheck?.(args);
    if (shapeError) throw shapeError;
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) throw issuesError(tool.name, parsed.error);
    return toolResult(await tool.run(p, parsed.data, ctx));
  } catch (err) {
    if (err instanceof AppError) return toolError(err);
    if (err instanceof ZodError) return toolError(issuesError(tool.name, err));
    ctx.logger.error({ err, tool: tool.name, request_id: ctx.requestId }, 'MCP tool failed');
    return toolError(new AppError('internal', 'internal error'));
  }
}

/** The tools a caller sees (gateway_approve_self only with the flag on). */
export const visibleTools = (selfApprove: boolean): GatewayTool[] => GATEWAY_TOOLS.filter((t) => t.name !== TOOL_NAMES.approveSelf || selfApprove);

/** The calls that may wait for a person: they may become a task (never required: plain clients resume by id). */
export const CALL_TOOLS: ReadonlySet<string> = new Set([TOOL_NAMES.call, TOOL_NAMES.read]);

/**
 * A tool as `tools/list` shows it: JSON Schema 2020-12 from the same zod schemas that validate it.
 * `tasks`: the caller may get a task (2026-07-28 tasks extension); the 2025 revisions' own task
 * augmentation is not served, so they are never told a call may become one.
 */
export function listedTool(t: GatewayTool, tasks: boolean): Tool {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { io: 'input', target: 'draft-2020-12' }) as Tool['inputSchema'],
    outputSchema: z.toJSONSchema(t.output, { io: 'output', target: 'draft-2020-12' }) as Tool['outputSchema'],
    annotations: t.annotations,
    ...(tasks && CALL_TOOLS.has(t.name) ? { execution: { taskSupport: 'optional' } } : {}),
  };
}

