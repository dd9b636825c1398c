// What an agent (agent key or OAuth access token, agent or subagent) may do on the REST API: least
// privilege, decided here and only here. One row per `/v1` route; a route without a row is closed
// to agents, so a new route is never open to them by accident. People (sessions) are not limited
// by this table: their rights (admin / member) stay in the domain services. The same table is in
// docs/decisions.md ("Agent authority on the REST API").
import type { NextFunction, Request, Response } from 'express';
import type { ChainReader } from '../identities/readers.ts';
import { AppError, forbidden } from '../errors.ts';
import type { Principal } from './principal.ts';

/**
 * - `allow`: agents may call it; the domain service still shows them only their own subtree.
 * - `descendant`: the route's `:id` must be a strict descendant of the calling agent (never the
 *   agent itself or an ancestor): keys and revocation of subagents below it.
 * - `deny`: never for agents.
 * - `public`: answered before authentication (no principal at all).
 */
export type AgentAccess = 'allow' | 'descendant' | 'deny' | 'public';

export interface AuthorityRow {
  /** `METHOD /path` relative to `/v1`, Express-style `:params`. */
  route: string;
  agent: AgentAccess;
}

export const AGENT_AUTHORITY: readonly AuthorityRow[] = [
  { route: 'GET /openapi.json', agent: 'public' },
  { route: 'POST /auth/login', agent: 'public' },
  { route: 'POST /auth/logout', agent: 'deny' },
  { route: 'GET /connections/callback', agent: 'public' },
  // Approval notices (issue 30): Slack and email links authenticate themselves; settings are people's.
  { route: 'POST /integrations/slack/interactions', agent: 'public' },
  { route: 'GET /integrations/email/decisions/:token', agent: 'public' },
  { route: 'POST /integrations/email/decisions/:token', agent: 'public' },
  { route: 'GET /notification-channels', agent: 'deny' },
  { route: 'POST /notification-channels', agent: 'deny' },
  { route: 'DELETE /notification-channels/:id', agent: 'deny' },
  { route: 'GET /notification-rules', agent: 'deny' },
  { route: 'PUT /notification-rules', agent: 'deny' },
  { route: 'GET /notification-reminders', agent: 'deny' },
  { route: 'PUT /notification-reminders', agent: 'deny' },
  { route: 'GET /approvals/:id/notifications', agent: 'deny' },
  // Itself, its descendants and their approvals.
  { route: 'GET /identities/me', agent: 'allow' },
  { route: 'GET /identities', agent: 'allow' },
  { route: 'GET /identities/:id', agent: 'allow' },
  { route: 'GET /identities/:id/rules', agent: 'allow' },
  // Subagents below itself, their keys included; never keys for itself or an ancestor.
  { route: 'POST /identities/agents', agent: 'allow' },
  { route: 'POST /identities/:id/revoke', agent: 'descendant' },
  { route: 'POST /identities/:id/archive', agent: 'descendant' },
  { route: 'GET /identities/:id/keys', agent: 'descendant' },
  { route: 'POST /identities/:id/keys', agent: 'descendant' },
  { route: 'POST /identities/:id/keys/:keyId/revoke', agent: 'descendant' },
  // Permissions are granted by people only; so are settings that widen them (inherit_permissions).
  { route: 'PATCH /identities/:id', agent: 'deny' },
  { route: 'POST /identities/:id/rules', agent: 'deny' },
  { route: 'POST /identities/:id/rules/:ruleId/revoke', agent: 'deny' },
  // Calls, reads, search, approvals of descendants, downloads of its results.
  { route: 'POST /actions/call', agent: 'allow' },
  { route: 'POST /actions/http', agent: 'allow' },
  // A call it made (or one of its descendants made): the service answers 404 for anyone else.
  { route: 'GET /calls/:id', agent: 'allow' },
  { route: 'GET /approvals', agent: 'allow' },
  { route: 'GET /approvals/:id', agent: 'allow' },
  { route: 'POST /approvals/:id/resolve', agent: 'allow' },
  // Several at once: each approval judged as the single resolve judges it (its own authority).
  { route: 'POST /approvals/resolve', agent: 'allow' },
  // Its own pending approval only (the service and the workflow check it is the requester).
  { route: 'POST /approvals/:id/cancel', agent: 'allow' },
  // The dashboard's: weighing a remembered tier, the people's event stream (agents have GET /mcp).
  { route: 'GET /approvals/:id/blast-radius', agent: 'deny' },
  // The dashboard's "Edit before allowing" form and its live preview (agents edit through resolve).
  { route: 'GET /approvals/:id/edit', agent: 'deny' },
  { route: 'POST /approvals/:id/edit-preview', agent: 'deny' },
  { route: 'GET /events', agent: 'deny' },
  { route: 'GET /downloads/:id', agent: 'allow' },
  { route: 'GET /search', agent: 'allow' },
  { route: 'GET /services', agent: 'allow' },
  { route: 'GET /services/:name', agent: 'allow' },
  { route: 'GET /templates', agent: 'allow' },
  { route: 'POST /services', agent: 'deny' },
  { route: 'DELETE /services/:name', agent: 'deny' },
  { route: 'POST /templates', agent: 'deny' },
  { route: 'GET /templates/:id', agent: 'deny' },
  { route: 'PUT /templates/:id', agent: 'deny' },
  { route: 'DELETE /templates/:id', agent: 'deny' },
  { route: 'POST /templates/import', agent: 'deny' },
  { route: 'POST /templates/:id/publish', agent: 'deny' },
  // Connected MCP servers (issue 43): people's to manage; agents call their tools as services.
  { route: 'GET /mcp-servers', agent: 'deny' },
  { route: 'POST /mcp-servers', agent: 'deny' },
  { route: 'GET /mcp-servers/:id', agent: 'deny' },
  { route: 'DELETE /mcp-servers/:id', agent: 'deny' },
  { route: 'PATCH /mcp-servers/:id', agent: 'deny' },
  { route: 'POST /mcp-servers/:id/refresh', agent: 'deny' },
  { route: 'PATCH /mcp-servers/:id/tools/:tool', agent: 'deny' },
  { route: 'POST /mcp-servers/:id/tools/:tool/accept', agent: 'deny' },
  // Connections: read its human's, start one (as gateway_auth connect does); never manage them.
  { route: 'GET /connections', agent: 'allow' },
  { route: 'POST /connections', agent: 'allow' },
  { route: 'GET /connections/:id', agent: 'allow' },
  { route: 'POST /connections/:id/authorize', agent: 'deny' },
  { route: 'POST /connections/:id/refresh', agent: 'deny' },
  { route: 'DELETE /connections/:id', agent: 'deny' },
  // OAuth app credentials, the OAuth client list, org settings, the vault, webhooks: people only.
  { route: 'GET /oauth-apps', agent: 'deny' },
  { route: 'PUT /oauth-apps/:provider', agent: 'deny' },
  { route: 'GET /oauth/clients', agent: 'deny' },
  { route: 'POST /oauth/clients/:clientId/revoke', agent: 'deny' },
  // Its own MCP binding: see it and end it (the service shows an agent its own binding only).
  { route: 'GET /oauth/bindings', agent: 'allow' },
  { route: 'POST /oauth/bindings/:id/revoke', agent: 'allow' },
  { route: 'PATCH /oauth/bindings/:id', agent: 'deny' },
  { route: 'GET /org/settings', agent: 'deny' },
  { route: 'PATCH /org/settings', agent: 'deny' },
  { route: 'GET /secrets', agent: 'deny' },
  { route: 'POST /secrets', agent: 'deny' },
  { route: 'GET /secrets/:id', agent: 'deny' },
  { route: 'DELETE /secrets/:id', agent: 'deny' },
  { route: 'GET /secrets/:id/versions', agent: 'deny' },
  { route: 'POST /secrets/:id/versions/:version/restore', agent: 'deny' },
  { route: 'GET /webhooks', agent: 'deny' },
  { route: 'POST /webhooks', agent: 'deny' },
  { route: 'DELETE /webhooks/:id', agent: 'deny' },
  { route: 'GET /webhooks/:id/deliveries', agent: 'deny' },
  { route: 'GET /webhooks/:id/events', agent: 'deny' },
  { route: 'POST /webhooks/:id/test', agent: 'deny' },
  { route: 'POST /webhooks/:id/events/:eventId/redeliver', agent: 'deny' },
  // The audit log: the rows whose identity chain contains the agent.
  { route: 'GET /audit', agent: 'allow' },
  { route: 'GET /audit/export', agent: 'allow' },
  // The org's people and invitations (issue 29): people only; an invitation link's token is its own credential.
  { route: 'GET /org/members', agent: 'deny' },
  { route: 'GET /org/members/:id', agent: 'deny' },
  { route: 'PATCH /org/members/:id', agent: 'deny' },
  { route: 'POST /org/members/:id/deactivate', agent: 'deny' },
  { route: 'GET /org/invitations', agent: 'deny' },
  { route: 'POST /org/invitations', agent: 'deny' },
  { route: 'POST /org/invitations/:id/revoke', agent: 'deny' },
  { route: 'POST /invitations/lookup', agent: 'public' },
  { route: 'POST /invitations/accept', agent: 'public' },
  { route: 'GET /auth/sso', agent: 'public' },
  { route: 'POST /auth/sso/start', agent: 'public' },
  { route: 'GET /auth/sso/callback', agent: 'public' },
  { route: 'GET /org/sso', agent: 'deny' },
  { route: 'PUT /org/sso', agent: 'deny' },
  { route: 'POST /diagnostics/ping', agent: 'deny' },
  { route: 'GET /diagnostics/ping/:workflowId', agent: 'deny' },
];

interface CompiledRow extends AuthorityRow {
  method: string;
  segments: string[];
  params: number;
}

const COMPILED: CompiledRow[] = AGENT_AUTHORITY.map((row) => {
  const [method, path] = row.route.split(' ') as [string, string];
  const segments = path.split('/').filter(Boolean);
  return { ...row, method, segments, params: segments.filter((s) => s.startsWith(':')).length };
});

/** The row for a request path (relative to /v1) and its params; literal segments win over `:params`. */
export function authorityRowFor(method: string, path: string): { row: AuthorityRow; params: Record<string, string> } | null {
  const parts = path.split('/').filter(Boolean);
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  let best: { row: CompiledRow; params: Record<string, string> } | null = null;
  for (const row of COMPILED) {
    if (row.method !== m || row.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = row.segments.every((seg, i) => {
      if (seg.startsWith(':')) {
        params[seg.slice(1)] = decodeURIComponent(parts[i]!);
        return true;
      }
      return seg === parts[i];
    });
    if (ok && (!best || row.params < best.row.params)) best = { row, params };
  }
  return best && { row: best.row, params: best.params };
}

/**
 * The one authority check for agents on identities: may `p` manage (mint or revoke keys for,
 * revoke, archive) the identity whose chain (itself first, its user last) is `targetChain`? Only
 * a strict descendant: an agent can never re-key or revoke itself or an ancestor, so a key a
 * person revokes cannot have been replaced by the agent itself. People: not limited here.
 */
export function agentMayManage(p: Principal, targetChain: readonly { id: string }[]): boolean {
  if (p.type !== 'agent') return true;
  const [target, ...above] = targetChain;
  return target !== undefined && target.id !== p.identityId && above.some((a) => a.id === p.identityId);
}

/** Express middleware on /v1 after authentication: applies AGENT_AUTHORITY to agent principals. */
export function agentAuthority(identities: ChainReader) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const p = req.principal;
    if (!p || p.type !== 'agent') return next();
    const hit = authorityRowFor(req.method, req.path);
    if (!hit || hit.row.agent === 'deny' || hit.row.agent === 'public') {
      throw forbidden('agents may not use this endpoint: it is reserved for people signed in to the dashboard');
    }
    if (hit.row.agent === 'descendant') {
      const id = hit.params.id ?? '';
      // Itself or an ancestor: refused. Unknown or unrelated ids go on to the service, which
      // answers 404 (ids of others never leak); malformed ones to the route's validation (400).
      const own = await identities.getChain(p.identityId);
      if (own.some((c) => c.id === id)) throw new AppError('forbidden', "an agent may manage only subagents below itself, never its own or an ancestor's keys or status");
    }
    next();
  };
}
