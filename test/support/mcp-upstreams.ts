// Upstream MCP servers for the connected-servers suite (issue 43), all on loopback:
//   - the official reference server `@modelcontextprotocol/server-everything` in streamableHttp mode;
//   - a counting relay in front of it (how many `tools/call` requests reached it, by tool);
//   - a server on the v2 server SDK whose tool list the test changes (descriptions, schemas, tools);
//   - a stateful one (v1 server SDK, sessions and the GET stream) that also announces the change.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, Server, type Tool } from '@modelcontextprotocol/server';

/** Listens on a free loopback port and answers it. */
async function loopbackPort(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = http.createServer();
  const port = await loopbackPort(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** server-everything over Streamable HTTP at `<url>` (its `/mcp`), ready when it says it listens. */
export async function startEverything(): Promise<RunningServer> {
  const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json');
  const script = path.join(path.dirname(entry), 'dist', 'index.js');
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', path.join(import.meta.dirname, 'loopback-listen.mjs'), script, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`listening on port ${port}`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Relays every request to `target`, recording the tool of each `tools/call` it passes on, and the
 * params of each `notifications/cancelled` (which request the client gave up on, and why).
 */
export async function startCountingRelay(target: string): Promise<RunningServer & { toolCalls: string[]; cancelled: unknown[] }> {
  const toolCalls: string[] = [];
  const cancelled: unknown[] = [];
  const upstream = new URL(target);
  const server = http.createServer(async (req, res) => {
    const body = await readBody(req);
    try {
      const msg = JSON.parse(body.toString()) as { method?: string; params?: { name?: string } };
      if (msg.method === 'tools/call') toolCalls.push(String(msg.params?.name));
      if (msg.method === 'notifications/cancelled') cancelled.push(msg.params);
    } catch {
      // not JSON (a GET or DELETE): relayed as it is
    }
    const out = http.request({ host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    out.end(body);
  });
  const port = await loopbackPort(server);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    toolCalls,
    cancelled,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface SeenCall {
  name: string;
  args: unknown;
  authorization?: string | undefined;
  apiKey?: string | undefined;
}

/** A server whose tools the test sets; `calls` records each tools/call (name, arguments, credential headers). */
export async function startChangeableServer(initial: Tool[], opts: { stall?: readonly string[] } = {}): Promise<RunningServer & { tools: Tool[]; calls: SeenCall[] }> {
  const state = { tools: initial, calls: [] as SeenCall[] };
  // Calls of these tools are taken and never answered (a tool that stalls).
  const stall = new Set(opts.stall ?? []);
  let credentials: Pick<SeenCall, 'authorization' | 'apiKey'> = {};
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'changeable', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler('tools/list', () => ({ tools: state.tools }));
    server.setRequestHandler('tools/call', (request) => {
      state.calls.push({ name: request.params.name, args: request.params.arguments, ...credentials });
      if (stall.has(request.params.name)) return new Promise<never>(() => undefined);
      return { content: [{ type: 'text', text: JSON.stringify({ ran: request.params.name, arguments: request.params.arguments ?? {} }) }] };
    });
    return server;
  });
  const http1 = http.createServer(async (req, res) => {
    credentials = { authorization: req.headers.authorization, apiKey: req.headers['x-api-key'] as string | undefined };
    const body = await readBody(req);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const web = await handler.fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, ...(body.length > 0 ? { body } : {}) }));
    res.writeHead(web.status, Object.fromEntries(web.headers.entries()));
    res.end(Buffer.from(await web.arrayBuffer()));
  });
  const port = await loopbackPort(http1);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get tools() {
      return state.tools;
    },
    set tools(next: Tool[]) {
      state.tools = next;
    },
    calls: state.calls,
    close: async () => {
      await handler.close();
      http1.closeAllConnections();
      await new Promise((resolve) => http1.close(resolve));
    },
  };
}

/**
 * A server whose tool list the test changes, like startChangeableServer, but stateful (sessions,
 * the standalone GET stream) so it can tell its listeners: `notify()` sends
 * `notifications/tools/list_changed` on every open session. `listeners` counts open GET streams.
 */
export async function startNotifyingServer(initial: Tool[]): Promise<RunningServer & { tools: Tool[]; listeners: number; notify(): Promise<void> }> {
  const state = { tools: initial };
  const sessions = new Map<string, { server: LegacyServer; transport: StreamableHTTPServerTransport }>();
  let listeners = 0;
  const http1 = http.createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let session = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!session) {
      if (req.method !== 'POST') return void res.writeHead(400).end();
      const server = new LegacyServer({ name: 'notifying', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: state.tools as never }));
      server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: 'text', text: `ran ${request.params.name}` }] }));
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, { server, transport }),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      session = { server, transport };
    }
    if (req.method === 'GET') {
      listeners++;
      res.on('close', () => listeners--);
    }
    await session.transport.handleRequest(req, res);
  });
  const port = await loopbackPort(http1);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get tools() {
      return state.tools;
    },
    set tools(next: Tool[]) {
      state.tools = next;
    },
    get listeners() {
      return listeners;
    },
    notify: async () => {
      for (const { server } of sessions.values()) await server.sendToolListChanged().catch(() => undefined);
    },
    close: async () => {
      for (const { transport } of sessions.values()) await transport.close().catch(() => undefined);
      http1.closeAllConnections();
      await new Promise((resolve) => http1.close(resolve));
    },
  };
}

/**
 * An MCP server with one write tool, `create_item {name}`, that answers after `delayMs()` and
 * counts the `tools/call` requests that reached it per name (chaos: a name called twice is a
 * duplicate). Stateless (v2 server SDK, one server per request).
 */
export async function startCountingToolServer(delayMs: () => number): Promise<RunningServer & { hits(name: string): number }> {
  const hits = new Map<string, number>();
  const createItem: Tool = {
    name: 'create_item',
    description: 'Create an item',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    annotations: { destructiveHint: false },
  };
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'counting', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', () => ({ tools: [createItem] }));
    server.setRequestHandler('tools/call', async (request) => {
      const name = String((request.params.arguments as { name?: unknown } | undefined)?.name);
      hits.set(name, (hits.get(name) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, delayMs()));
      return { content: [{ type: 'text', text: JSON.stringify({ created: name }) }] };
    });
    return server;
  });
  const http1 = http.createServer(async (req, res) => {
    const body = await readBody(req);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    try {
      const web = await handler.fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, ...(body.length > 0 ? { body } : {}) }));
      res.writeHead(web.status, Object.fromEntries(web.headers.entries()));
      res.end(Buffer.from(await web.arrayBuffer()));
    } catch {
      res.destroy(); // the caller went away mid-call (a killed gateway)
    }
  });
  const port = await loopbackPort(http1);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    hits: (name) => hits.get(name) ?? 0,
    close: async () => {
      await handler.close();
      http1.closeAllConnections();
      await new Promise((resolve) => http1.close(resolve));
    },
  };
}
