// A small MCP client written against the 2026-07-28 revision (SEP-2575 stateless, SEP-2243
// headers, the tasks extension), for tests: no initialize, every request carries its `_meta`
// (protocol version, client capabilities, client info) and the headers that mirror the body.
// No SDK involved, so the tests see the wire exactly as a 2026-07-28 client sends it.
import { openSse } from './sse.ts';
export const REVISION = '2026-07-28';
export const TASKS = 'io.modelcontextprotocol/tasks';

export interface Capabilities {
  elicitation?: { url?: Record<string, unknown>; form?: Record<string, unknown> };
  extensions?: Record<string, Record<string, unknown>>;
  [k: string]: unknown;
}

export interface RpcAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** The headers and body of one request, built the way the revision says a client builds them. */
export function buildRequest(id: number, method: string, params: Record<string, unknown>, capabilities: Capabilities, extraMeta: Record<string, unknown> = {}) {
  const body = {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': REVISION,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        'io.modelcontextprotocol/clientInfo': { name: 'gateway-test-2026', version: '1.0.0' },
        ...extraMeta,
      },
    },
  };
  const name = method === 'tools/call' || method === 'prompts/get' ? params.name : method.startsWith('tasks/') ? params.taskId : method === 'resources/read' ? params.uri : undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': REVISION,
    'mcp-method': method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
  };
  return { headers, body };
}

export interface Client2026 {
  /** One request; the answer as it came (status, headers, parsed body). */
  raw(method: string, params?: Record<string, unknown>, opts?: { capabilities?: Capabilities; headers?: Record<string, string>; meta?: Record<string, unknown> }): Promise<RpcAnswer>;
  /** One request that must succeed: its `result`. */
  request(method: string, params?: Record<string, unknown>, opts?: { capabilities?: Capabilities }): Promise<any>;
  /** `subscriptions/listen`: the stream's messages as they arrive. */
  listen(notifications: Record<string, unknown>, meta?: Record<string, unknown>): Promise<ListenStream>;
}

export interface ListenStream {
  status: number;
  messages: any[];
  waitFor(ok: (m: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): void;
}

export function client2026(mcpUrl: string, token: string, capabilities: Capabilities = {}): Client2026 {
  let nextId = 1;
  const raw: Client2026['raw'] = async (method, params = {}, opts = {}) => {
    const { headers, body } = buildRequest(nextId++, method, params, opts.capabilities ?? capabilities, opts.meta);
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, ...headers, ...opts.headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  return {
    raw,
    async request(method, params = {}, opts = {}) {
      const answer = await raw(method, params, opts);
      if (answer.status !== 200 || !answer.body?.result) throw new Error(`${method} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer.body.result;
    },
    async listen(notifications, meta = {}) {
      const { headers, body } = buildRequest(nextId++, 'subscriptions/listen', { notifications }, capabilities, meta);
      const sse = await openSse(mcpUrl, { authorization: `Bearer ${token}`, ...headers }, { method: 'POST', body: JSON.stringify(body) });
      return {
        status: sse.status,
        get messages() {
          return sse.events.map((e) => e.data);
        },
        close: () => sse.close(),
        waitFor: async (ok, timeoutMs) => (await sse.waitFor((e) => ok(e.data), timeoutMs)).data,
      };
    },
  };
}
