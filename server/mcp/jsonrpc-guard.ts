// What the MCP SDK's transport answers loosely, checked first with JSON-RPC 2.0's own codes and the
// request's id echoed whenever the body parsed: a malformed message is -32600 Invalid Request, an
// unsupported MCP-Protocol-Version header is -32600 too, and params that do not fit a method this
// server serves are -32602 Invalid params (the SDK would say -32000, -32700 or -32603, with id null).
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  SetLevelRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { ZodType } from 'zod';
import { messageIdOf, readMessageShape, type MessageId } from './jsonrpc-shape.ts';

type Id = MessageId;

export interface JsonRpcError {
  jsonrpc: '2.0';
  id: Id;
  error: { code: number; message: string; data?: unknown };
}

/** The methods this server answers, with the SDK's schema of each request. */
const REQUEST_SCHEMAS: ReadonlyMap<string, ZodType> = new Map<string, ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['logging/setLevel', SetLevelRequestSchema],
]);

const failure = (id: Id, code: number, message: string, data?: unknown): JsonRpcError => ({ jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } });

/** The problem with one message, or null when the SDK may take it. */
function checkMessage(message: unknown): JsonRpcError | null {
  const shape = readMessageShape(message);
  if (shape.kind === 'invalid') return failure(shape.id, shape.code, shape.message);
  if (shape.kind !== 'request') return null; // a response or a notification: nothing may be answered
  const schema = REQUEST_SCHEMAS.get(shape.method);
  if (!schema) return null; // the SDK answers -32601 Method not found, with the id
  const parsed = schema.safeParse(message);
  if (parsed.success) return null;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.filter((p) => p !== 'params').join('.'), message: i.message }));
  return failure(shape.id, ErrorCode.InvalidParams, `Invalid params for ${shape.method}: ${issues.map((i) => `${i.path || '(params)'}: ${i.message}`).join('; ')}`, { issues });
}

/** The MCP revisions that allowed JSON-RPC batches (removed in 2025-06-18). */
const BATCHING_REVISIONS = new Set(['2024-11-05', '2025-03-26']);

export interface GuardAnswer {
  status: number;
  body: JsonRpcError | JsonRpcError[];
}

/**
 * The answer to send instead of handing the body to the SDK, or null when the SDK should take it.
 * `protocolVersion` is the MCP-Protocol-Version header (absent on initialize and old clients).
 */
export function guardJsonRpc(body: unknown, protocolVersion: string | undefined): GuardAnswer | null {
  const messages = Array.isArray(body) ? body : [body];
  if (Array.isArray(body) && body.length === 0) return { status: 400, body: failure(null, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch') };
  // Batching was removed in 2025-06-18: refused there and after (and without a version header,
  // which means initialize or a newer client); the older revisions that allowed it get arrays.
  if (Array.isArray(body) && !BATCHING_REVISIONS.has(protocolVersion ?? '')) {
    return { status: 400, body: failure(null, ErrorCode.InvalidRequest, `Invalid Request: JSON-RPC batches are not part of MCP protocol version ${protocolVersion ?? 'negotiated by initialize'} (only ${[...BATCHING_REVISIONS].join(', ')})`) };
  }
  if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
    const message = `Invalid Request: unsupported MCP-Protocol-Version ${JSON.stringify(protocolVersion)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;
    const errors = messages.map((m) => failure(messageIdOf(m), ErrorCode.InvalidRequest, message));
    return { status: 400, body: Array.isArray(body) ? errors : errors[0]! };
  }
  const problems = messages.map(checkMessage);
  if (problems.every((p) => p === null)) return null;
  // A batch with a bad member is answered for its bad members only; nothing in it is run.
  const errors = problems.filter((p): p is JsonRpcError => p !== null);
  const status = errors.every((e) => e.error.code === ErrorCode.InvalidParams) ? 200 : 400;
  return { status, body: Array.isArray(body) ? errors : errors[0]! };
}
