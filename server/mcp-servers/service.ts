// Connected MCP servers: connect (discover every tool, publish them as a generated template of
// runtime `mcp`), refresh (re-list: new tools arrive disabled, removed ones are disabled, changed
// ones keep their published pin and are refused at call time until accepted), per-tool admin
// overrides, accept, delete. Every change is audited. The generated template is what the
// registry, search and the call path read; these tables are what it is generated from.
import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { SECRET_SERVICE } from '../../core/permissions/keys.ts';
import { serviceDocument, effectiveRisk, type ServerRecord, type ToolRecord, type UpstreamAuth } from '../../core/mcp-servers/definition.ts';
import { keyTools, pinDiff, pinHash, pinOf, riskFromAnnotations, toolSummary, type ToolPin, type UpstreamTool } from '../../core/mcp-servers/tools.ts';
import type { ToolChangeEvent } from '../../core/mcp-servers/change-notice.ts';
import type { TemplateOrigin } from '../../core/registry/catalog.ts';
import type { AuditEvent } from '../audit/entry.ts';
import type { AuditWriter } from '../audit/writer.ts';
import type { Principal } from '../auth/principal.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import { credentialFor, templateTrusted, type ExecutorDeps } from '../execution/execute.ts';
import { assertAddressAllowed } from '../execution/http-client.ts';
import { loadServiceDocument } from '../registry/loader.ts';
import * as templates from '../registry/store.ts';
import { CALLBACK_PATH, type ConnectionService } from '../connections/service.ts';
import { discoverTools, DEFAULT_DISCOVERY_LIMITS, type DiscoveryLimits } from './discovery.ts';
import { discoverUpstreamAuthorization, upstreamClient, upstreamProvider } from './upstream-oauth.ts';
import * as store from './store.ts';
import { serverRecord, serverView, toolRecord } from './views.ts';

export interface McpServerDeps {
  pool: DatabasePool;
  executor: ExecutorDeps;
  audit: AuditWriter;
  /** OAuth upstreams: their apps, and each person's connection holding the tokens. */
  connections: Pick<ConnectionService, 'putUpstreamApp' | 'getOAuthApp' | 'ownConnections' | 'credentialError' | 'getFreshAccessToken'>;
  /** The gateway's public base URL: an OAuth upstream redirects the person's browser to its connection callback. */
  publicUrl: string;
  /** Tells the org's admins (webhook `mcp_server.tools_changed`, notices) that a re-list changed tools. */
  announce?: (orgId: string, data: ToolsChanged) => Promise<void>;
  limits?: DiscoveryLimits;
}

/** One re-list's changes, announced once (the webhook event's `data`). */
export interface ToolsChanged { server_id: string; service: string; trigger: RelistTrigger; changes: { event: ToolChangeEvent; tool: string }[] }

/** What a caller gives as `auth`: OAuth names no endpoints (they are discovered), at most a client. */
export type UpstreamAuthInput =
  | Exclude<UpstreamAuth, { type: 'oauth' }>
  | { type: 'oauth'; client_id?: string | undefined; client_secret?: string | undefined };

type Person = Extract<Principal, { type: 'user' }>;

/**
 * Who a re-list acts as: a person (refresh, connect), or the gateway itself on the upstream's
 * `notifications/tools/list_changed` or the schedule, with the credentials of the person who
 * connected the server (never starting an authorization nobody is there to finish).
 */
export interface Acting {
  orgId: string;
  userId: string;
  /** The person's identity, null for the gateway itself (the audit then names no actor). */
  identityId: string | null;
  person: Person | null;
}

export type RelistTrigger = 'refresh' | 'list_changed' | 'schedule';

const acting = (who: Person): Acting => ({ orgId: who.orgId, userId: who.userId, identityId: who.identityId, person: who });

export function createMcpServerService(deps: McpServerDeps) {
  const { pool } = deps;
  // Discovery waits no longer than any upstream call may (UPSTREAM_TIMEOUT_MS), and at most 15 s.
  const limits = deps.limits ?? { ...DEFAULT_DISCOVERY_LIMITS, timeoutMs: Math.min(DEFAULT_DISCOVERY_LIMITS.timeoutMs, deps.executor.outbound.timeoutMs) };

  function person(p: Principal): Person {
    if (p.type !== 'user') throw forbidden('only people may connect or change MCP servers');
    return p;
  }

  /** The server if the caller may see it; changing an org server takes an admin. */
  async function visible(p: Principal, id: string): Promise<store.ServerRow> {
    const row = await store.getServer(pool, id);
    if (!row || row.org_id !== p.orgId || (row.owner_id !== null && row.owner_id !== p.userId)) throw notFound('MCP server');
    return row;
  }

  async function changeable(p: Principal, id: string): Promise<{ row: store.ServerRow; who: Person }> {
    const who = person(p);
    const row = await visible(p, id);
    if (row.owner_id === null && who.role !== 'admin') throw forbidden('only admins may change the org’s MCP servers');
    return { row, who };
  }

  /** Lists the upstream's tools with the caller's credential for it (a bound vault secret, or their OAuth connection). */
  async function discover(who: Acting, server: ServerRecord, origin: TemplateOrigin): Promise<UpstreamTool[]> {
    const url = new URL(server.url);
    if (!templateTrusted(origin)) await assertAddressAllowed(url, deps.executor.outbound.policy);
    // The server's own timeout bounds discovery too, still at most 15 s.
    const timeoutMs = server.timeoutMs === null ? limits.timeoutMs : Math.min(server.timeoutMs, DEFAULT_DISCOVERY_LIMITS.timeoutMs);
    return discoverTools(url, await headersFor(who, server, origin), { ...limits, timeoutMs });
  }

  /** The credential headers for the upstream, fetched anew for every request (a token may have been refreshed). */
  async function headersFor(who: Acting, server: ServerRecord, origin: TemplateOrigin): Promise<Record<string, string>> {
    return server.auth.type === 'oauth' ? oauthHeaders(who, server) : upstreamHeaders(who, server, new URL(server.url), origin);
  }

  async function upstreamHeaders(who: Acting, server: ServerRecord, url: URL, origin: TemplateOrigin): Promise<Record<string, string>> {
    if (server.auth.type === 'none') return {};
    const loaded = await loadServiceDocument(serviceDocument(server, []), 'mcp-server');
    if (!loaded.ok) throw new AppError('internal', 'the generated MCP service document is invalid', { problems: loaded.problems });
    if (server.auth.type === 'oauth') throw new AppError('internal', 'an OAuth upstream has no vault secret');
    const choice = { type: 'secret' as const, method: 'upstream', secretName: server.auth.secret_name, available: true };
    const injection = await credentialFor(deps.executor, who.orgId, loaded.service, [choice], null, who.userId, { host: url.hostname, origin });
    return injection.headers;
  }

  /**
   * The person's OAuth connection to the upstream, refreshed as every connection is. Without an
   * active one: `needs_authentication` with the auth_url to open (a pending connection is started).
   */
  async function oauthHeaders(who: Acting, server: ServerRecord): Promise<Record<string, string>> {
    if (server.auth.type !== 'oauth') return {};
    const auth = server.auth;
    const own = await deps.connections.ownConnections(who.orgId, who.userId, auth.provider);
    const active = own.find((c) => c.status === 'active');
    if (!active) {
      if (!who.person) throw new AppError('needs_authentication', `the OAuth connection to the MCP server "${server.name}" of the person who connected it is not active: they connect or refresh it again`);
      const err = await deps.connections.credentialError(who.person, { provider: auth.provider, connectionId: own[0]?.id ?? null, requiredScopes: auth.scopes });
      if (err.code !== 'needs_authentication' && err.code !== 'reauth_required') throw err;
      throw new AppError(err.code, `the MCP server "${server.name}" asks for OAuth: open auth_url, authorize the gateway there, then connect or refresh it again`, err.details);
    }
    const token = await deps.connections.getFreshAccessToken({ orgId: who.orgId, id: active.id });
    return { authorization: `Bearer ${token.accessToken}` };
  }

  /**
   * For `auth: {type: "oauth"}`: follows the server's 401 to its authorization server and makes sure
   * the org has an OAuth app there (registered now by dynamic client registration, or the client
   * given). An app already registered for this server is reused; replacing it, or keeping a client
   * secret, takes an admin.
   */
  async function prepareOAuth(who: Person, serverUrl: string, given: Extract<UpstreamAuthInput, { type: 'oauth' }>, origin: TemplateOrigin): Promise<UpstreamAuth> {
    const url = new URL(serverUrl);
    if (!templateTrusted(origin)) await assertAddressAllowed(url, deps.executor.outbound.policy);
    const found = await discoverUpstreamAuthorization(url, limits.timeoutMs);
    if (!templateTrusted(origin)) {
      for (const endpoint of [found.authorizationUrl, found.tokenUrl, found.registrationUrl]) {
        if (endpoint) await assertAddressAllowed(new URL(endpoint), deps.executor.outbound.policy);
      }
    }
    const provider = upstreamProvider(serverUrl);
    const existing = await deps.connections.getOAuthApp(who.orgId, provider);
    const configured = given.client_id === undefined ? null : { clientId: given.client_id, clientSecret: given.client_secret ?? null };
    if (given.client_secret !== undefined && configured === null) throw invalidRequest('auth.client_secret needs auth.client_id', { field: 'auth' });
    if (!existing || configured) {
      if (existing && who.role !== 'admin') throw forbidden('only admins may replace the OAuth client of an MCP server');
      const app = await upstreamClient(found, {
        configured,
        redirectUri: deps.publicUrl.replace(/\/+$/, '') + CALLBACK_PATH,
        clientName: 'Agent Action Gateway',
        timeoutMs: limits.timeoutMs,
        host: url.host,
      });
      if (app.clientSecret !== null && who.role !== 'admin') throw forbidden('only admins may keep an OAuth client secret for an MCP server');
      await deps.connections.putUpstreamApp(who, provider, app);
    }
    return { type: 'oauth', provider, authorization_url: found.authorizationUrl, token_url: found.tokenUrl, scopes: found.scopes };
  }

  /** The template document for these tools, refused (nothing written) when the registry would not load it. */
  async function validDocument(server: ServerRecord, tools: readonly ToolRecord[]): Promise<Record<string, unknown>> {
    const document = serviceDocument(server, tools);
    const loaded = await loadServiceDocument(document, 'mcp-server');
    if (!loaded.ok) {
      throw new AppError('invalid_service_definition', `the MCP server's tools do not make a valid service (${loaded.problems.length} problem(s))`, { problems: loaded.problems });
    }
    return document;
  }

  async function publish(tx: DatabaseTransactionConnection, row: store.ServerRow): Promise<void> {
    const tools = (await store.listTools(tx, row.id)).map(toolRecord);
    const document = await validDocument(serverRecord(row), tools);
    await templates.updateTemplate(tx, row.template_id, { key: row.name, title: String((document.info as { title: string }).title), document });
  }

  const audit = (who: Pick<Acting, 'userId' | 'identityId' | 'person'>, row: { org_id: string; name: string }, event: AuditEvent, details: Record<string, unknown>, tool?: string) =>
    deps.audit.append({ orgId: row.org_id, event, userId: who.person ? who.userId : null, actorId: who.identityId, service: row.name, action: tool ?? null, details });

  /**
   * Re-lists the server's tools. New tools arrive disabled (status `new`); a tool gone from the
   * list is disabled (`removed`), never deleted; a changed tool keeps its published pin (calls
   * are refused with `tool_changed`) until accepted. Each change is audited, and the change set
   * announced once (webhooks, the admins' notices).
   */
  async function relist(row: store.ServerRow, who: Acting, trigger: RelistTrigger) {
    const listed = keyed(await discover(who, serverRecord(row), row.owner_id ? 'user' : 'org'));
    const events: { event: ToolChangeEvent; tool: string; details: Record<string, unknown> }[] = [];
    await pool.transaction(async (tx) => {
      const existing = new Map((await store.listTools(tx, row.id)).map((t) => [t.name, t]));
      for (const { tool, key } of listed) {
        const current = pinOf(tool);
        const before = existing.get(tool.name);
        existing.delete(tool.name);
        if (!before) {
          await store.upsertTool(tx, { server_id: row.id, name: tool.name, action_key: key, summary: toolSummary(tool), pinned: { ...current }, current: { ...current }, status: 'new' });
          events.push({ event: 'mcp_server.tool_added', tool: tool.name, details: { enabled: false } });
          continue;
        }
        const pinned = before.pinned as unknown as ToolPin;
        const last = before.current as unknown as ToolPin;
        const status = before.status === 'removed' ? 'new' : before.status;
        if (before.status === 'removed') events.push({ event: 'mcp_server.tool_added', tool: tool.name, details: { enabled: false, returned: true } });
        if (pinHash(current) !== pinHash(last) && pinHash(current) !== pinHash(pinned)) {
          events.push({ event: 'mcp_server.tool_changed', tool: tool.name, details: { changed: pinDiff(pinned, current) } });
        }
        await store.upsertTool(tx, { ...before, current: { ...current }, status, override: before.override });
      }
      for (const gone of existing.values()) {
        if (gone.status === 'removed') continue;
        await store.upsertTool(tx, { ...gone, status: 'removed', override: gone.override });
        events.push({ event: 'mcp_server.tool_removed', tool: gone.name, details: {} });
      }
      await store.markRefreshed(tx, row.id);
      await publish(tx, row);
    });
    for (const e of events) await audit(who, row, e.event, { ...e.details, trigger }, e.tool);
    await audit(who, row, 'mcp_server.refreshed', { tools: listed.length, changes: events.length, trigger });
    if (events.length > 0 && deps.announce) {
      await deps.announce(row.org_id, {
        server_id: row.id,
        service: row.name,
        trigger,
        changes: events.map((e) => ({ event: e.event, tool: e.tool })),
      });
    }
    return view((await store.getServer(pool, row.id)) ?? row);
  }

  function keyed(tools: readonly UpstreamTool[]) {
    const result = keyTools(tools);
    if (!result.ok) {
      throw new AppError('invalid_service_definition', `tool names collide once made action keys: ${result.collisions.map((c) => c.tools.join(' / ')).join('; ')}`, {
        problems: result.collisions.map((c) => ({ code: 'tool_name_collision', path: `/tools/${c.key}`, message: `tools ${c.tools.map((n) => `"${n}"`).join(', ')} all become action "${c.key}"` })),
      });
    }
    return result.tools;
  }

  async function view(row: store.ServerRow) {
    return serverView(row, await store.listTools(pool, row.id));
  }

  return {
    async connect(p: Principal, input: { name: string; url: string; auth?: UpstreamAuthInput | undefined; scope: 'org' | 'user'; timeout_ms?: number | undefined }) {
      const who = person(p);
      if (input.scope === 'org' && who.role !== 'admin') throw forbidden('only admins may connect MCP servers for the org');
      if (input.name === SECRET_SERVICE) throw invalidRequest(`the name "${SECRET_SERVICE}" is reserved`, { field: 'name' });
      const origin: TemplateOrigin = input.scope === 'org' ? 'org' : 'user';
      const auth = input.auth?.type === 'oauth' ? await prepareOAuth(who, input.url, input.auth, origin) : (input.auth ?? { type: 'none' as const });
      const server: ServerRecord = { name: input.name, url: input.url, auth, timeoutMs: input.timeout_ms ?? null };
      const listed = keyed(await discover(acting(who), server, origin));
      const records: ToolRecord[] = listed.map(({ tool, key }) => ({
        name: tool.name,
        key,
        summary: toolSummary(tool),
        pinned: pinOf(tool),
        annotationRisk: riskFromAnnotations(tool.annotations),
        status: 'active',
        override: {},
      }));
      const document = await validDocument(server, records);
      try {
        const row = await pool.transaction(async (tx) => {
          const template = await templates.insertTemplate(tx, {
            orgId: p.orgId,
            ownerId: input.scope === 'user' ? p.userId : null,
            key: server.name,
            title: String((document.info as { title: string }).title),
            document,
            createdBy: who.identityId,
          });
          const inserted = await store.insertServer(tx, { orgId: p.orgId, ownerId: template.owner_id, name: server.name, url: server.url, auth: server.auth, timeoutMs: server.timeoutMs, templateId: template.id, createdBy: who.identityId });
          for (const r of records) {
            await store.upsertTool(tx, { server_id: inserted.id, name: r.name, action_key: r.key, summary: r.summary, pinned: { ...r.pinned }, current: { ...r.pinned }, status: 'active' });
          }
          return inserted;
        });
        await audit(acting(who), row, 'mcp_server.connected', { url: row.url, tools: records.map((r) => ({ name: r.name, risk: effectiveRisk(r) })) });
        return view(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`a ${input.scope} service named "${server.name}" exists`);
        throw err;
      }
    },

    async list(p: Principal) {
      const rows = await store.listServers(pool, p.orgId, p.userId);
      return Promise.all(rows.map(view));
    },

    async get(p: Principal, id: string) {
      return view(await visible(p, id));
    },

    /** Re-lists the server's tools now, as the person asking (see `relist`). */
    async refresh(p: Principal, id: string) {
      const { row, who } = await changeable(p, id);
      return relist(row, acting(who), 'refresh');
    },

    /**
     * For the watcher (watcher.ts): every connected server, with how to reach it as the person who
     * connected it. A server whose creator is gone is reached as its owner, else not at all.
     */
    async watchTargets() {
      const rows = await store.listWatchable(pool);
      const targets = [];
      for (const row of rows) {
        const userId = row.creator_user_id ?? row.owner_id;
        if (!userId) continue;
        const who: Acting = { orgId: row.org_id, userId, identityId: null, person: null };
        targets.push({
          id: row.id,
          url: row.url,
          refreshedAt: row.refreshed_at,
          /** Credential headers, read for each request so a refreshed token is used. */
          headers: () => headersFor(who, serverRecord(row), row.owner_id ? 'user' : 'org'),
          relist: async (trigger: RelistTrigger) => {
            const current = await store.getServer(pool, row.id);
            if (current) await relist(current, who, trigger);
          },
        });
      }
      return targets;
    },

    /** Publishes a tool as the server describes it now (a new tool is enabled by it); the diff is audited. */
    async acceptTool(p: Principal, id: string, name: string) {
      const { row, who } = await changeable(p, id);
      const diff = await pool.transaction(async (tx) => {
        const tool = (await store.listTools(tx, row.id)).find((t) => t.name === name);
        if (!tool) throw notFound(`tool "${name}"`);
        if (tool.status === 'removed') throw invalidRequest(`tool "${name}" is no longer offered by the server`, { tool: name });
        const changed = pinDiff(tool.pinned as unknown as ToolPin, tool.current as unknown as ToolPin);
        const current = tool.current as unknown as ToolPin & Record<string, unknown>;
        await store.upsertTool(tx, { ...tool, pinned: current, status: 'active', override: tool.override });
        await publish(tx, row);
        return { changed, was: tool.status };
      });
      await audit(acting(who), row, 'mcp_server.tool_accepted', { previous_status: diff.was, changed: diff.changed }, name);
      return view(row);
    },

    /** An admin's risk / scope_param / enabled for one tool (null clears a choice); wins over annotations. */
    async updateTool(p: Principal, id: string, name: string, change: { risk?: 'read' | 'write' | 'delete' | null | undefined; scope_param?: string | null | undefined; enabled?: boolean | null | undefined }) {
      const { row, who } = await changeable(p, id);
      const override = await pool.transaction(async (tx) => {
        const tool = (await store.listTools(tx, row.id)).find((t) => t.name === name);
        if (!tool) throw notFound(`tool "${name}"`);
        const next: Record<string, unknown> = { ...tool.override };
        for (const [k, v] of Object.entries(change)) {
          if (v === null) delete next[k];
          else if (v !== undefined) next[k] = v;
        }
        if (typeof next.scope_param === 'string') {
          const props = ((tool.pinned as unknown as ToolPin).input_schema.properties ?? {}) as Record<string, unknown>;
          if (!Object.hasOwn(props, next.scope_param)) throw invalidRequest(`scope_param "${next.scope_param}" is not an argument of tool "${name}"`, { field: 'scope_param' });
        }
        await store.upsertTool(tx, { ...tool, override: next });
        await publish(tx, row);
        return next;
      });
      await audit(acting(who), row, 'mcp_server.tool_updated', { override }, name);
      return view(row);
    },

    /** The server's own settings: `timeout_ms` (null: the gateway's UPSTREAM_TIMEOUT_MS). */
    async update(p: Principal, id: string, change: { timeout_ms?: number | null | undefined }) {
      const { row, who } = await changeable(p, id);
      if (change.timeout_ms === undefined) return view(row);
      const updated = await pool.transaction(async (tx) => {
        const next = await store.setTimeoutMs(tx, row.id, change.timeout_ms ?? null);
        await publish(tx, next);
        return next;
      });
      await audit(acting(who), row, 'mcp_server.updated', { timeout_ms: updated.timeout_ms });
      return view(updated);
    },

    async remove(p: Principal, id: string) {
      const { row, who } = await changeable(p, id);
      await store.deleteServer(pool, row.id);
      await audit(acting(who), row, 'mcp_server.deleted', { url: row.url });
    },
  };
}

export type McpServerService = ReturnType<typeof createMcpServerService>;
