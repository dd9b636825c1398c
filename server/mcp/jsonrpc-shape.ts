// The shape of one JSON-RPC 2.0 message, read the same way whatever revision the message claims
// (message-guard.ts, before the SDK sees it), so a malformed message gets the same code and id:
// JSON-RPC's -32600 Invalid Request for a message that is neither a well-formed request,
// notification nor response, -32602 for params that are not an object. Pure: no I/O.

export type MessageId = string | number | null;

export type MessageShape =
  | { kind: 'request'; id: string | number; method: string }
  | { kind: 'notification'; method: string }
  | { kind: 'response'; id: MessageId }
  | { kind: 'invalid'; id: MessageId; code: typeof INVALID_REQUEST | typeof INVALID_PARAMS; message: string };

export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The id of a message when it has a valid one (JSON-RPC: a string or a finite number), else null. */
export function messageIdOf(message: unknown): MessageId {
  if (!isRecord(message)) return null;
  const id = message.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

const invalid = (id: MessageId, message: string): MessageShape => ({ kind: 'invalid', id, code: INVALID_REQUEST, message: `Invalid Request: ${message}` });

/** What one message is, or why it is invalid (with the id to answer with: the message's when readable). */
export function readMessageShape(message: unknown): MessageShape {
  const id = messageIdOf(message);
  if (!isRecord(message) || message.jsonrpc !== '2.0') return invalid(id, 'not a JSON-RPC 2.0 message');
  if ('id' in message && id === null && message.id !== null) return invalid(null, 'id must be a string or a number');
  // MCP: a request's id MUST NOT be null (JSON-RPC allows null only in errors about unreadable ids).
  if ('method' in message && 'id' in message && message.id === null) return invalid(null, 'a request id must not be null');
  if ('result' in message || 'error' in message) {
    if ('method' in message) return invalid(id, 'a message is either a request or a response, not both');
    if ('result' in message && 'error' in message) return invalid(id, 'a response has either a result or an error, not both');
    if (!('id' in message)) return invalid(null, 'a response needs the id of the request it answers');
    return { kind: 'response', id };
  }
  if (typeof message.method !== 'string' || message.method === '') return invalid(id, 'method must be a non-empty string');
  if ('params' in message && !isRecord(message.params)) return { kind: 'invalid', id, code: INVALID_PARAMS, message: 'Invalid params: params must be an object' };
  return id === null ? { kind: 'notification', method: message.method } : { kind: 'request', id, method: message.method };
}
