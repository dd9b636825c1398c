// Keeps connected MCP servers' tool lists current without a person asking, with the same effects as
// a refresh (service.ts `relist`):
// - a listening session on each server that says it announces tool list changes
//   (`tools.listChanged`): its `notifications/tools/list_changed` re-lists that server;
// - a re-list of every server whose last re-list is older than MCP_SERVER_RELIST_MINUTES (0: off).
// One process of the deployment does this (a PostgreSQL session advisory lock): replicas never
// listen or re-list twice, and another takes over when the holder goes. Runs in the worker role.
import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import type { LeaderLock } from '../db/leader-lock.ts';
import { CLIENT_INFO } from '../execution/runtimes/mcp.ts';
import type { Logger } from '../logger.ts';
import type { McpServerService, RelistTrigger } from './service.ts';

type Target = Awaited<ReturnType<McpServerService['watchTargets']>>[number];

export interface WatcherDeps {
  servers: Pick<McpServerService, 'watchTargets'>;
  lock: LeaderLock;
  logger: Logger;
  /** Re-list every server this often; 0 turns the schedule off (list_changed still re-lists). */
  relistMinutes: number;
  /** How long opening a listening session may take. */
  connectTimeoutMs: number;
}

/** How often the leader looks for new, deleted and due servers (and a follower for the lock). */
const TICK_MS = 10_000;
/** A server that could not be listened to is tried again after this long (not every tick). */
const LISTEN_RETRY_MS = 60_000;

interface Session {
  url: string;
  /** Null when the server announces no tool list changes (nothing to listen to), or refused us. */
  client: Client | null;
  /** Set when listening failed: the session is opened again after this time. */
  retryAt?: number;
}

export function startMcpServerWatcher(deps: WatcherDeps): { stop(): Promise<void> } {
  const { logger } = deps;
  const relistMs = deps.relistMinutes * 60_000;
  const sessions = new Map<string, Session>();
  const relisting = new Map<string, Promise<void>>();
  let stopped = false;

  /** One re-list per server at a time; a notification during one re-lists once more after it. */
  function relist(target: Target, trigger: RelistTrigger): Promise<void> {
    const previous = relisting.get(target.id) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (stopped) return;
      try {
        await target.relist(trigger);
        logger.info({ mcp_server_id: target.id, trigger }, 'MCP server re-listed');
      } catch (err) {
        logger.warn({ mcp_server_id: target.id, trigger, err: (err as Error).message }, 'MCP server re-list failed');
      }
    });
    relisting.set(target.id, next);
    void next.finally(() => {
      if (relisting.get(target.id) === next) relisting.delete(target.id);
    });
    return next;
  }

  async function close(id: string): Promise<void> {
    const session = sessions.get(id);
    sessions.delete(id);
    await session?.client?.close().catch(() => undefined);
  }

  async function listen(target: Target): Promise<void> {
    // Credentials are read for every request, so a refreshed OAuth token is the one sent.
    const withCredentials: FetchLike = async (url, init) => {
      const headers = new Headers(init?.headers);
      for (const [k, v] of Object.entries(await target.headers())) headers.set(k, v);
      return fetch(url, { ...init, headers });
    };
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      fetch: withCredentials,
      requestInit: { headers: { 'user-agent': `${CLIENT_INFO.name}/${CLIENT_INFO.version}` } },
    });
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      listChanged: { tools: { autoRefresh: false, onChanged: () => void relist(target, 'list_changed') } },
    });
    const session: Session = { url: target.url, client };
    sessions.set(target.id, session);
    // A session that ends is opened again on the next tick.
    client.onclose = () => {
      if (sessions.get(target.id) === session) sessions.delete(target.id);
    };
    try {
      await client.connect(transport, { timeout: deps.connectTimeoutMs });
    } catch (err) {
      logger.warn({ mcp_server_id: target.id, err: (err as Error).message }, 'cannot listen to the MCP server');
      await close(target.id);
      sessions.set(target.id, { url: target.url, client: null, retryAt: Date.now() + LISTEN_RETRY_MS });
      return;
    }
    if (!client.getServerCapabilities()?.tools?.listChanged) {
      await client.close().catch(() => undefined);
      sessions.set(target.id, { url: target.url, client: null });
    }
  }

  async function tick(): Promise<void> {
    if (!(await deps.lock.hold())) {
      for (const id of [...sessions.keys()]) await close(id);
      return;
    }
    const targets = await deps.servers.watchTargets();
    const live = new Map(targets.map((t) => [t.id, t]));
    for (const [id, session] of sessions) {
      if (live.get(id)?.url !== session.url || (session.retryAt !== undefined && session.retryAt <= Date.now())) await close(id);
    }
    for (const target of targets) {
      if (stopped) return;
      if (!sessions.has(target.id)) await listen(target);
      if (relistMs > 0 && Date.now() - target.refreshedAt.getTime() >= relistMs && !relisting.has(target.id)) void relist(target, 'schedule');
    }
  }

  // Ticks never overlap: one that finds the previous still running is skipped.
  let running: Promise<void> | null = null;
  const run = () => {
    if (running || stopped) return;
    running = tick()
      .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'MCP server watcher tick failed'))
      .finally(() => (running = null));
  };
  const timer = setInterval(run, Math.min(TICK_MS, relistMs > 0 ? relistMs : TICK_MS));
  timer.unref();
  run();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await Promise.allSettled(relisting.values());
      for (const id of [...sessions.keys()]) await close(id);
      await deps.lock.release();
    },
  };
}
