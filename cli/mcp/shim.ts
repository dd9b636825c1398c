// `gateway mcp`: a stdio-to-HTTP shim for editors that only speak stdio. Each newline-delimited
// JSON-RPC frame read from stdin is POSTed to `<url>/mcp`; each JSON-RPC message that comes back
// (a JSON body, or the events of an SSE body) is written to stdout as one line. Notifications get
// no reply and print nothing. After `notifications/initialized`, server-initiated notifications
// from `GET /mcp` are forwarded too. Frames are independent, so they are sent concurrently.
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { SseParser, parseSseBody } from './sse.ts';

/** How the shim authenticates: a static agent key, or an OAuth session that refreshes itself. */
export interface ShimSession {
  url: string;
  token(): Promise<string>;
  /** After a 401 for `sent`: a newer token, or null when there is none. */
  renew(sent: string): Promise<string | null>;
}

export interface ShimOptions {
  session: ShimSession;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  log: (line: string) => void;
  /** Forward notifications from `GET /mcp` (default true). */
  events?: boolean;
}

type JsonRpcId = string | number;
type Message = Record<string, unknown>;

const UNAUTHENTICATED = -32001;
const INTERNAL = -32603;

export function agentKeySession(url: string, key: string): ShimSession {
  return { url, token: async () => key, renew: async () => null };
}

export async function runShim(opts: ShimOptions): Promise<number> {
  const { session, output, log } = opts;
  const endpoint = `${session.url}/mcp`;
  let protocolVersion: string | undefined;
  const events = new AbortController();
  let eventsStarted = false;

  const write = (m: unknown) => output.write(JSON.stringify(m) + '\n');
  const errorReply = (id: JsonRpcId | null, code: number, message: string) => write({ jsonrpc: '2.0', id, error: { code, message } });

  const headers = (token: string, accept: string): Record<string, string> => ({
    authorization: `Bearer ${token}`,
    accept,
    ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}),
  });

  async function send(init: (token: string) => RequestInit): Promise<Response> {
    const token = await session.token();
    const res = await fetch(endpoint, init(token));
    if (res.status !== 401) return res;
    const next = await session.renew(token);
    if (!next) return res;
    await res.body?.cancel();
    return fetch(endpoint, init(next));
  }

  /** The JSON-RPC messages of a response, or an error text when it carries none. */
  async function repliesOf(res: Response): Promise<{ messages: Message[] } | { error: string; status: number }> {
    if (res.status === 202 || res.status === 204) return { messages: [] };
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    let parsed: unknown[];
    try {
      parsed = type.includes('text/event-stream') ? parseSseBody(text).map((d) => JSON.parse(d) as unknown) : [JSON.parse(text) as unknown].flat();
    } catch {
      return { error: `the gateway answered HTTP ${res.status} with a body that is not JSON-RPC`, status: res.status };
    }
    const messages = parsed.filter((m): m is Message => typeof m === 'object' && m !== null && (m as Message).jsonrpc === '2.0');
    if (messages.length > 0 || res.ok) return { messages };
    const envelope = parsed[0] as { error?: { message?: unknown } } | undefined;
    const reason = typeof envelope?.error?.message === 'string' ? envelope.error.message : res.statusText;
    return { error: reason, status: res.status };
  }

  async function handleLine(line: string): Promise<void> {
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch {
      errorReply(null, -32700, 'Parse error: a line on stdin is not JSON');
      return;
    }
    const messages = (Array.isArray(frame) ? frame : [frame]) as Message[];
    const ids = messages.filter((m) => m && typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')).map((m) => m.id as JsonRpcId);
    const initializeId = messages.find((m) => m?.method === 'initialize')?.id;
    let res: Response;
    try {
      res = await send((token) => ({ method: 'POST', headers: { ...headers(token, 'application/json, text/event-stream'), 'content-type': 'application/json' }, body: line }));
    } catch (err) {
      for (const id of ids) errorReply(id, INTERNAL, `cannot reach the gateway at ${session.url}: ${(err as Error).message}`);
      return;
    }
    const replies = await repliesOf(res);
    if ('error' in replies) {
      const code = replies.status === 401 ? UNAUTHENTICATED : INTERNAL;
      const hint = replies.status === 401 ? ' (run `gateway mcp login`, or check GATEWAY_AGENT_KEY)' : '';
      for (const id of ids) errorReply(id, code, `gateway error (HTTP ${replies.status}): ${replies.error}${hint}`);
      if (ids.length === 0) log(`gateway mcp: HTTP ${replies.status}: ${replies.error}`);
      return;
    }
    for (const m of replies.messages) {
      // A transport-level error without an id answers the one request of this frame.
      if (m.id === null && 'error' in m && ids.length === 1) m.id = ids[0];
      if (initializeId !== undefined && m.id === initializeId) {
        const version = (m.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
        if (typeof version === 'string') protocolVersion = version;
      }
      write(m);
    }
    if (opts.events !== false && !eventsStarted && messages.some((m) => m?.method === 'notifications/initialized')) {
      eventsStarted = true;
      void forwardEvents(events.signal);
    }
  }

  /** Server-initiated notifications (GET /mcp), reconnecting with backoff until stdin closes. */
  async function forwardEvents(signal: AbortSignal): Promise<void> {
    let delay = 1000;
    while (!signal.aborted) {
      try {
        const res = await send((token) => ({ method: 'GET', headers: headers(token, 'text/event-stream'), signal }));
        if (res.status === 405 || res.status === 404 || res.status === 401) {
          await res.body?.cancel();
          if (res.status === 401) log('gateway mcp: the notification stream was refused (401)');
          return;
        }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        delay = 1000;
        const parser = new SseParser();
        for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
          for (const data of parser.push(chunk)) {
            try {
              write(JSON.parse(data));
            } catch {
              /* not JSON: skip */
            }
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        log(`gateway mcp: notification stream interrupted: ${(err as Error).message}`);
      }
      await sleep(delay, undefined, { signal }).catch(() => undefined);
      delay = Math.min(delay * 2, 30_000);
    }
  }

  const inflight = new Set<Promise<void>>();
  const rl = readline.createInterface({ input: opts.input, crlfDelay: Infinity });
  for await (const raw of rl) {
    const line = raw.trim();
    if (!line) continue;
    const p = handleLine(line).catch((err: unknown) => log(`gateway mcp: ${(err as Error).message}`));
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  }
  await Promise.all(inflight);
  events.abort();
  return 0;
}
