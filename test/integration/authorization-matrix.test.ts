// The authorization matrix (issue 12): every `/v1` route × {admin, member, agent key, subagent key,
// OAuth agent token, no token}, the expected status of each cell in one table. The routes are
// enumerated from the running Express router, so a route added without a row fails this test.
// Also: least privilege for agents in practice (no self-minted keys, no key for an ancestor) and
// total revocation (keys, minted keys, OAuth grants of the agent and its subagents).
import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_AUTHORITY } from '../../server/auth/authority.ts';
import { startTestGateway, type TestGateway, type TestResponse } from '../support/gateway.ts';
import { oauthClientToken as oauthAgentToken } from '../support/oauth-token.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';

const COLUMNS = ['admin', 'member', 'agent', 'subagent', 'oauth', 'none'] as const;
type Column = (typeof COLUMNS)[number];
type Cells = [admin: number, member: number, agent: number, subagent: number, oauth: number, none: number];

interface Ctx {
  /** The member's agent (agent key column), its subagent (subagent key column). */
  agentId: string;
  subId: string;
  /** A fresh subagent of the member's agent (for destructive rows), with a fresh key. */
  fresh(): Promise<{ id: string; keyId: string }>;
}

interface Row {
  path: string | ((ctx: Ctx) => Promise<string> | string);
  body?: unknown;
  /** People's cells use a fresh session (sign-out would end the shared one). */
  freshSession?: true;
  expect: Cells;
}

const RANDOM = randomUUID();

/**
 * THE TABLE. Keys are `METHOD /path` relative to /v1, exactly as the router registers them.
 * Cells: admin, member, agent key, subagent key, OAuth agent token, no token.
 * The agent is the member's; the subagent is the agent's; the OAuth agent is another agent of the
 * member's, bound by consent. `fresh` identities are new subagents of the agent.
 */
const MATRIX: Record<string, Row> = {
  'GET /openapi.json': { path: '/openapi.json', expect: [200, 200, 200, 200, 200, 200] },
  'POST /auth/login': { path: '/auth/login', body: {}, expect: [400, 400, 400, 400, 400, 400] },
  'POST /auth/logout': { path: '/auth/logout', freshSession: true, expect: [204, 204, 403, 403, 403, 401] },
  'GET /connections/callback': { path: '/connections/callback', expect: [400, 400, 400, 400, 400, 400] },

  'GET /identities/me': { path: '/identities/me', expect: [200, 200, 200, 200, 200, 401] },
  'GET /identities': { path: '/identities', expect: [200, 200, 200, 200, 200, 401] },
  'POST /identities/agents': { path: '/identities/agents', body: { name: 'matrix child' }, expect: [201, 201, 201, 201, 201, 401] },
  'GET /identities/:id': { path: (c) => `/identities/${c.subId}`, expect: [200, 200, 200, 200, 404, 401] },
  'PATCH /identities/:id': { path: (c) => `/identities/${c.subId}`, body: { auto_call_on_approve: true }, expect: [200, 200, 403, 403, 403, 401] },
  'GET /identities/:id/rules': { path: (c) => `/identities/${c.subId}/rules`, expect: [200, 200, 200, 200, 404, 401] },
  'POST /identities/:id/revoke': { path: async (c) => `/identities/${(await c.fresh()).id}/revoke`, expect: [200, 200, 200, 404, 404, 401] },
  'POST /identities/:id/archive': { path: async (c) => `/identities/${(await c.fresh()).id}/archive`, expect: [200, 200, 200, 404, 404, 401] },
  // The subagent asking for its own keys: 403 (never itself); the OAuth agent is unrelated: 404.
  'GET /identities/:id/keys': { path: (c) => `/identities/${c.subId}/keys`, expect: [200, 200, 200, 403, 404, 401] },
  'POST /identities/:id/keys': { path: (c) => `/identities/${c.subId}/keys`, body: {}, expect: [201, 201, 201, 403, 404, 401] },
  'POST /identities/:id/keys/:keyId/revoke': {
    path: async (c) => {
      const f = await c.fresh();
      return `/identities/${f.id}/keys/${f.keyId}/revoke`;
    },
    expect: [204, 204, 204, 404, 404, 401],
  },
  'POST /identities/:id/rules': { path: (c) => `/identities/${c.subId}/rules`, body: { effect: 'allow', pattern: 'matrix:read:*' }, expect: [201, 201, 403, 403, 403, 401] },
  'POST /identities/:id/rules/:ruleId/revoke': { path: (c) => `/identities/${c.subId}/rules/${RANDOM}/revoke`, expect: [404, 404, 403, 403, 403, 401] },

  'POST /actions/call': { path: '/actions/call', body: {}, expect: [400, 400, 400, 400, 400, 401] },
  'POST /actions/http': { path: '/actions/http', body: {}, expect: [400, 400, 400, 400, 400, 401] },
  'GET /calls/:id': { path: `/calls/${RANDOM}`, expect: [404, 404, 404, 404, 404, 401] },
  'GET /approvals': { path: '/approvals', expect: [200, 200, 200, 200, 200, 401] },
  'GET /approvals/:id': { path: `/approvals/${RANDOM}`, expect: [404, 404, 404, 404, 404, 401] },
  'POST /approvals/:id/resolve': { path: `/approvals/${RANDOM}/resolve`, body: { decision: 'deny' }, expect: [404, 404, 404, 404, 404, 401] },
  // Answered per id: an unknown approval is refused in the results (not_found), the request itself is 200.
  'POST /approvals/resolve': { path: '/approvals/resolve', body: { ids: [RANDOM], decision: 'deny' }, expect: [200, 200, 200, 200, 200, 401] },
  'POST /approvals/:id/cancel': { path: `/approvals/${RANDOM}/cancel`, body: {}, expect: [404, 404, 404, 404, 404, 401] },
  'GET /approvals/:id/blast-radius': { path: `/approvals/${RANDOM}/blast-radius?tier=0`, expect: [404, 404, 403, 403, 403, 401] },
  'GET /approvals/:id/edit': { path: `/approvals/${RANDOM}/edit`, expect: [404, 404, 403, 403, 403, 401] },
  'POST /approvals/:id/edit-preview': { path: `/approvals/${RANDOM}/edit-preview`, body: { params: { a: 1 } }, expect: [404, 404, 403, 403, 403, 401] },
  // A 200 here is a stream that never ends: a bad resume id shows the route's gate instead (the
  // stream itself: test/integration/dashboard-api.test.ts).
  'GET /events': { path: '/events?last_event_id=not-an-id', expect: [400, 400, 403, 403, 403, 401] },
  'GET /downloads/:id': { path: `/downloads/${RANDOM}`, expect: [404, 404, 404, 404, 404, 401] },

  'GET /search': { path: '/search?q=weather', expect: [200, 200, 200, 200, 200, 401] },
  'GET /services': { path: '/services', expect: [200, 200, 200, 200, 200, 401] },
  'GET /services/:name': { path: '/services/http', expect: [200, 200, 200, 200, 200, 401] },
  'POST /services': { path: '/services', body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'DELETE /services/:name': { path: '/services/no-such-instance', expect: [404, 404, 403, 403, 403, 401] },
  'GET /templates': { path: '/templates', expect: [200, 200, 200, 200, 200, 401] },
  'POST /templates': { path: '/templates', body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'GET /templates/:id': { path: `/templates/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'PUT /templates/:id': { path: `/templates/${RANDOM}`, body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'DELETE /templates/:id': { path: `/templates/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'POST /templates/import': { path: '/templates/import', body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'POST /templates/:id/publish': { path: `/templates/${RANDOM}/publish`, expect: [404, 404, 403, 403, 403, 401] },
  'GET /mcp-servers': { path: '/mcp-servers', expect: [200, 200, 403, 403, 403, 401] },
  'POST /mcp-servers': { path: '/mcp-servers', body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'GET /mcp-servers/:id': { path: `/mcp-servers/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'DELETE /mcp-servers/:id': { path: `/mcp-servers/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'PATCH /mcp-servers/:id': { path: `/mcp-servers/${RANDOM}`, body: {}, expect: [404, 404, 403, 403, 403, 401] },
  'POST /mcp-servers/:id/refresh': { path: `/mcp-servers/${RANDOM}/refresh`, expect: [404, 404, 403, 403, 403, 401] },
  'PATCH /mcp-servers/:id/tools/:tool': { path: `/mcp-servers/${RANDOM}/tools/echo`, body: {}, expect: [404, 404, 403, 403, 403, 401] },
  'POST /mcp-servers/:id/tools/:tool/accept': { path: `/mcp-servers/${RANDOM}/tools/echo/accept`, expect: [404, 404, 403, 403, 403, 401] },

  'GET /connections': { path: '/connections', expect: [200, 200, 200, 200, 200, 401] },
  'POST /connections': { path: '/connections', body: {}, expect: [400, 400, 400, 400, 400, 401] },
  'GET /connections/:id': { path: `/connections/${RANDOM}`, expect: [404, 404, 404, 404, 404, 401] },
  'POST /connections/:id/authorize': { path: `/connections/${RANDOM}/authorize`, expect: [404, 404, 403, 403, 403, 401] },
  'POST /connections/:id/refresh': { path: `/connections/${RANDOM}/refresh`, expect: [404, 404, 403, 403, 403, 401] },
  'DELETE /connections/:id': { path: `/connections/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'GET /oauth-apps': { path: '/oauth-apps', expect: [200, 200, 403, 403, 403, 401] },
  'PUT /oauth-apps/:provider': { path: '/oauth-apps/acme', body: {}, expect: [400, 400, 403, 403, 403, 401] },

  'GET /oauth/clients': { path: '/oauth/clients', expect: [200, 403, 403, 403, 403, 401] },
  'POST /oauth/clients/:clientId/revoke': { path: '/oauth/clients/no-such-client/revoke', expect: [404, 403, 403, 403, 403, 401] },
  'GET /oauth/bindings': { path: '/oauth/bindings', expect: [200, 200, 200, 200, 200, 401] },
  'POST /oauth/bindings/:id/revoke': { path: `/oauth/bindings/${RANDOM}/revoke`, expect: [404, 404, 404, 404, 404, 401] },
  'PATCH /oauth/bindings/:id': { path: `/oauth/bindings/${RANDOM}`, body: { self_approve_enabled: true }, expect: [404, 404, 403, 403, 403, 401] },
  'GET /org/settings': { path: '/org/settings', expect: [200, 200, 403, 403, 403, 401] },
  'PATCH /org/settings': { path: '/org/settings', body: {}, expect: [400, 400, 403, 403, 403, 401] },

  'GET /secrets': { path: '/secrets', expect: [200, 200, 403, 403, 403, 401] },
  'POST /secrets': { path: '/secrets', body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'GET /secrets/:id': { path: `/secrets/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'DELETE /secrets/:id': { path: `/secrets/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'GET /secrets/:id/versions': { path: `/secrets/${RANDOM}/versions`, expect: [404, 404, 403, 403, 403, 401] },
  'POST /secrets/:id/versions/:version/restore': { path: `/secrets/${RANDOM}/versions/1/restore`, expect: [404, 404, 403, 403, 403, 401] },

  // Approval notices (issue 30): public entry points that authenticate themselves, admin settings.
  'POST /integrations/slack/interactions': { path: '/integrations/slack/interactions', body: {}, expect: [401, 401, 401, 401, 401, 401] },
  'GET /integrations/email/decisions/:token': { path: '/integrations/email/decisions/not-a-link', expect: [404, 404, 404, 404, 404, 404] },
  'POST /integrations/email/decisions/:token': { path: '/integrations/email/decisions/not-a-link', body: {}, expect: [404, 404, 404, 404, 404, 404] },
  'GET /notification-channels': { path: '/notification-channels', expect: [200, 403, 403, 403, 403, 401] },
  'POST /notification-channels': { path: '/notification-channels', body: {}, expect: [400, 403, 403, 403, 403, 401] },
  'DELETE /notification-channels/:id': { path: `/notification-channels/${RANDOM}`, expect: [404, 403, 403, 403, 403, 401] },
  'GET /notification-rules': { path: '/notification-rules', expect: [200, 403, 403, 403, 403, 401] },
  'PUT /notification-rules': { path: '/notification-rules', body: {}, expect: [400, 403, 403, 403, 403, 401] },
  'GET /notification-reminders': { path: '/notification-reminders', expect: [200, 403, 403, 403, 403, 401] },
  'PUT /notification-reminders': { path: '/notification-reminders', body: {}, expect: [400, 403, 403, 403, 403, 401] },
  'GET /approvals/:id/notifications': { path: `/approvals/${RANDOM}/notifications`, expect: [404, 404, 403, 403, 403, 401] },
  'GET /webhooks': { path: '/webhooks', expect: [200, 403, 403, 403, 403, 401] },
  'POST /webhooks': { path: '/webhooks', body: {}, expect: [400, 403, 403, 403, 403, 401] },
  'DELETE /webhooks/:id': { path: `/webhooks/${RANDOM}`, expect: [404, 403, 403, 403, 403, 401] },
  'GET /webhooks/:id/deliveries': { path: `/webhooks/${RANDOM}/deliveries`, expect: [404, 403, 403, 403, 403, 401] },
  'GET /webhooks/:id/events': { path: `/webhooks/${RANDOM}/events`, expect: [404, 403, 403, 403, 403, 401] },
  'POST /webhooks/:id/test': { path: `/webhooks/${RANDOM}/test`, expect: [404, 403, 403, 403, 403, 401] },
  'POST /webhooks/:id/events/:eventId/redeliver': { path: `/webhooks/${RANDOM}/events/evt_x/redeliver`, expect: [404, 403, 403, 403, 403, 401] },
  'GET /audit': { path: '/audit', expect: [200, 200, 200, 200, 200, 401] },
  'GET /audit/export': { path: '/audit/export?format=jsonl', expect: [200, 200, 200, 200, 200, 401] },
  // The org's people (issue 29): everyone signed in lists them; admins change them.
  'GET /org/members': { path: '/org/members', expect: [200, 200, 403, 403, 403, 401] },
  'GET /org/members/:id': { path: `/org/members/${RANDOM}`, expect: [404, 404, 403, 403, 403, 401] },
  'PATCH /org/members/:id': { path: `/org/members/${RANDOM}`, body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'POST /org/members/:id/deactivate': { path: `/org/members/${RANDOM}/deactivate`, expect: [404, 403, 403, 403, 403, 401] },
  'GET /org/invitations': { path: '/org/invitations', expect: [200, 403, 403, 403, 403, 401] },
  'POST /org/invitations': { path: '/org/invitations', body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'POST /org/invitations/:id/revoke': { path: `/org/invitations/${RANDOM}/revoke`, expect: [404, 403, 403, 403, 403, 401] },
  'POST /invitations/lookup': { path: '/invitations/lookup', body: {}, expect: [400, 400, 400, 400, 400, 400] },
  'POST /invitations/accept': { path: '/invitations/accept', body: {}, expect: [400, 400, 400, 400, 400, 400] },
  // Single sign-on: the sign-in page's buttons and the flow are public; its configuration is the admins'.
  'GET /auth/sso': { path: '/auth/sso', expect: [200, 200, 200, 200, 200, 200] },
  'POST /auth/sso/start': { path: '/auth/sso/start', body: {}, expect: [400, 400, 400, 400, 400, 400] },
  'GET /auth/sso/callback': { path: '/auth/sso/callback', expect: [400, 400, 400, 400, 400, 400] },
  'GET /org/sso': { path: '/org/sso', expect: [404, 403, 403, 403, 403, 401] },
  'PUT /org/sso': { path: '/org/sso', body: {}, expect: [400, 400, 403, 403, 403, 401] },
  'POST /diagnostics/ping': { path: '/diagnostics/ping', body: {}, expect: [201, 403, 403, 403, 403, 401] },
  'GET /diagnostics/ping/:workflowId': { path: '/diagnostics/ping/no-such-workflow', expect: [404, 403, 403, 403, 403, 401] },
};

interface ListedRoute {
  path: string | RegExp;
  methods: string[] | undefined;
  router: { listRoutes(): ListedRoute[] } | undefined;
}

/** `METHOD /path` of every route under /v1, from the application's own router. */
function v1Routes(app: Express): string[] {
  const root = (app as unknown as { router: { listRoutes(): ListedRoute[] } }).router;
  const walk = (routes: ListedRoute[], prefix: string): string[] =>
    routes.flatMap((r) => {
      const path = prefix + (r.path === '/' ? '' : String(r.path));
      if (r.router) return walk(r.router.listRoutes(), path);
      const methods = (r.methods ?? []).filter((m) => m.toUpperCase() !== 'HEAD' || r.methods!.length === 1);
      return methods.map((m) => `${m.toUpperCase()} ${path}`);
    });
  const v1 = root.listRoutes().find((r) => r.path === '/v1' && r.router);
  if (!v1?.router) throw new Error('no /v1 router found on the application');
  return [...new Set(walk(v1.router.listRoutes(), ''))];
}

describe('authorization matrix over every /v1 route', () => {
  let gw: TestGateway;
  let member: SeededUser;
  let memberToken: string;
  let agentKey: string;
  let subKey: string;
  let oauthToken: string;
  let ctx: Ctx;

  beforeAll(async () => {
    gw = await startTestGateway({ realPublicUrl: true });
    const orgId = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body.org.id;
    member = await seedUser(gw.databaseUrl, { orgId, email: 'matrix-member@example.test' });
    memberToken = await gw.login(member.email, member.password);
    const asMember = gw.as(memberToken);
    const agent = await asMember('POST', '/v1/identities/agents', { name: 'matrix agent' });
    agentKey = agent.body.key.token;
    const sub = await gw.as(agentKey)('POST', '/v1/identities/agents', { name: 'matrix subagent', parent_id: agent.body.identity.id });
    expect(sub.status, sub.text).toBe(201);
    subKey = sub.body.key.token;
    oauthToken = (await oauthAgentToken(gw, member, 'matrix oauth agent')).access_token;
    let made = 0;
    ctx = {
      agentId: agent.body.identity.id,
      subId: sub.body.identity.id,
      // Siblings never share a name: each fresh subagent gets its own.
      fresh: async () => {
        const f = await asMember('POST', '/v1/identities/agents', { name: `fresh ${++made}`, parent_id: agent.body.identity.id });
        if (f.status !== 201) throw new Error(`fresh subagent: ${f.status} ${f.text}`);
        return { id: f.body.identity.id, keyId: f.body.key.id };
      },
    };
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('has exactly one row per registered /v1 route, and so does the agent authority table', () => {
    const routes = v1Routes(gw.app).sort();
    expect(routes.length).toBeGreaterThan(50);
    expect(routes.filter((r) => !(r in MATRIX)), 'routes without a row in MATRIX').toEqual([]);
    expect(Object.keys(MATRIX).filter((r) => !routes.includes(r)), 'rows for routes that do not exist').toEqual([]);
    const authority = AGENT_AUTHORITY.map((r) => r.route);
    expect(routes.filter((r) => !authority.includes(r)), 'routes without a row in AGENT_AUTHORITY').toEqual([]);
  });

  it('answers every cell with its expected status', async () => {
    const failures: string[] = [];
    for (const [route, row] of Object.entries(MATRIX)) {
      const method = route.split(' ')[0]!;
      for (const [i, column] of COLUMNS.entries()) {
        const token = await tokenFor(column, row.freshSession === true);
        const path = typeof row.path === 'string' ? row.path : await row.path(ctx);
        const res: TestResponse = await gw.request(method, `/v1${path}`, {
          ...(row.body !== undefined ? { body: row.body } : {}),
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        if (res.status !== row.expect[i]) failures.push(`${route} as ${column}: expected ${row.expect[i]}, got ${res.status} ${res.text.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  // Issue 29: the third role and a deactivated person, for every route. An approver is a member
  // who is not the matrix member (so the member's identities are someone else's: 404, never 200);
  // a deactivated person's session is refused everywhere a credential is needed.
  const APPROVER_DIFFERS: Record<string, number> = {
    'GET /identities/:id': 404,
    'PATCH /identities/:id': 404,
    'GET /identities/:id/rules': 404,
    'POST /identities/:id/revoke': 404,
    'POST /identities/:id/archive': 404,
    'GET /identities/:id/keys': 404,
    'POST /identities/:id/keys': 404,
    'POST /identities/:id/keys/:keyId/revoke': 404,
    'POST /identities/:id/rules': 404,
  };
  it('answers every cell for an approver and for a deactivated person', async () => {
    const approver = await seedUser(gw.databaseUrl, { orgId: member.orgId, email: 'matrix-approver@example.test', role: 'approver' });
    const gone = await seedUser(gw.databaseUrl, { orgId: member.orgId, email: 'matrix-gone@example.test' });
    const goneToken = await gw.login(gone.email, gone.password);
    expect((await gw.as(gw.adminToken)('POST', `/v1/org/members/${gone.userId}/deactivate`)).status).toBe(200);
    const publicRoutes = new Set(AGENT_AUTHORITY.filter((r) => r.agent === 'public').map((r) => r.route));
    const failures: string[] = [];
    for (const [route, row] of Object.entries(MATRIX)) {
      const method = route.split(' ')[0]!;
      const member = row.expect[1];
      const cells: [string, string, number][] = [
        ['approver', row.freshSession ? await gw.login(approver.email, approver.password) : await approverToken(), APPROVER_DIFFERS[route] ?? member],
        ['deactivated', goneToken, publicRoutes.has(route) ? row.expect[5] : 401],
      ];
      for (const [column, token, expected] of cells) {
        const path = typeof row.path === 'string' ? row.path : await row.path(ctx);
        const res = await gw.request(method, `/v1${path}`, { ...(row.body !== undefined ? { body: row.body } : {}), headers: { authorization: `Bearer ${token}` } });
        if (res.status !== expected) failures.push(`${route} as ${column}: expected ${expected}, got ${res.status} ${res.text.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);

    async function approverToken(): Promise<string> {
      return (approverSession ??= await gw.login(approver.email, approver.password));
    }
  });
  let approverSession: string | undefined;

  async function tokenFor(column: Column, freshSession: boolean): Promise<string | undefined> {
    switch (column) {
      case 'admin':
        return freshSession ? gw.login('admin@example.test', 'correct horse battery staple') : gw.adminToken;
      case 'member':
        return freshSession ? gw.login(member.email, member.password) : memberToken;
      case 'agent':
        return agentKey;
      case 'subagent':
        return subKey;
      case 'oauth':
        return oauthToken;
      case 'none':
        return undefined;
    }
  }

  describe('least privilege and total revocation in practice', () => {
    it('an agent cannot mint or revoke keys for itself or an ancestor, so a revoked key cannot have been replaced', async () => {
      const asAgent = gw.as(agentKey);
      const mint = await asAgent('POST', `/v1/identities/${ctx.agentId}/keys`, {});
      expect(mint.status).toBe(403);
      expect(mint.text).not.toContain('osk_');
      expect((await asAgent('GET', `/v1/identities/${ctx.agentId}/keys`)).status).toBe(403);
      expect((await gw.as(subKey)('POST', `/v1/identities/${ctx.agentId}/keys`, {})).status).toBe(403);
      expect((await gw.as(subKey)('POST', `/v1/identities/${ctx.subId}/keys`, {})).status).toBe(403);
      expect((await gw.as(oauthToken)('POST', `/v1/identities/${ctx.agentId}/keys`, {})).status).toBe(404);
      const keys = await gw.as(memberToken)('GET', `/v1/identities/${ctx.agentId}/keys`);
      expect(keys.body.keys).toHaveLength(1);
      // It may not read OAuth app credentials, org settings, other users' identities or the client list.
      for (const path of ['/v1/oauth-apps', '/v1/org/settings', '/v1/oauth/clients', '/v1/secrets']) {
        expect((await asAgent('GET', path)).status, path).toBe(403);
      }
      const adminId = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body.identity.id;
      expect((await asAgent('GET', `/v1/identities/${adminId}`)).status).toBe(404);
    });

    it('revoking an agent revokes every key and OAuth grant bound to it and its subagents, and every key it minted', async () => {
      const asMember = gw.as(memberToken);
      const top = await asMember('POST', '/v1/identities/agents', { name: 'to be revoked' });
      const topKey = top.body.key.token;
      const second = await asMember('POST', `/v1/identities/${top.body.identity.id}/keys`, { name: 'second' });
      const child = await gw.as(topKey)('POST', '/v1/identities/agents', { name: 'minted child', parent_id: top.body.identity.id });
      const childKey = child.body.key.token;
      const minted = await gw.as(topKey)('POST', `/v1/identities/${child.body.identity.id}/keys`, { name: 'minted by top' });
      expect(minted.status, minted.text).toBe(201);
      // An OAuth binding on the agent (only agents can be bound): the member consents picking it.
      const bound = await oauthAgentToken(gw, member, 'oauth of the revoked', top.body.identity.id);
      expect((await gw.as(bound.access_token)('GET', '/v1/identities/me')).body.identity.id).toBe(top.body.identity.id);

      expect((await asMember('POST', `/v1/identities/${top.body.identity.id}/revoke`)).status).toBe(200);
      for (const token of [topKey, second.body.token, childKey, minted.body.token, bound.access_token]) {
        expect((await gw.as(token)('GET', '/v1/identities/me')).status).toBe(401);
      }
      const keys = await gw.pool.anyFirst(
        sqlKeysOf([top.body.identity.id, child.body.identity.id]),
      );
      expect(keys.every((revoked) => revoked)).toBe(true);
      // The grant is gone: the refresh token no longer works.
      const refreshed = await fetch(`${gw.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: bound.refresh_token, client_id: bound.clientId }).toString(),
      });
      expect(refreshed.status).toBe(400);
      const bindings = (await asMember('GET', '/v1/oauth/bindings?include_revoked=true')).body.bindings;
      expect(bindings.find((b: any) => b.agent_id === top.body.identity.id).revoked_at).not.toBeNull();
    });
  });
});

function sqlKeysOf(ids: string[]) {
  return sql.type(z.object({ revoked: z.boolean() }))`
    SELECT revoked_at IS NOT NULL AS revoked FROM agent_keys WHERE identity_id = ANY(${sql.array(ids, 'uuid')})`;
}
