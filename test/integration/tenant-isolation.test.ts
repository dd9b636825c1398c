// Cross-org isolation matrix (issue 4, extended to every org-scoped REST endpoint): org B's
// credentials — an admin session, a member session and an agent key — are pointed at every id and
// name of org A's resources. Each probe must answer 403 or 404 (never 2xx, never 5xx) and must not
// echo anything of A; every list must be free of A's ids and names; and org A's rows in every
// table are byte-for-byte the same afterwards. Finally, B may reuse A's *names* in its own
// namespace (secrets, OAuth apps, connections, templates, instances): that must create B's own
// resources, never find, rotate or shadow A's.
import { sql, type DatabasePool, type FragmentSqlToken } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestGateway, type TestGateway, type TestResponse } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { WEBHOOK_EVENT_TYPES } from '../../workflows/webhook-definitions.ts';

// Org A's names all carry "zqa", so any of them surfacing in B's answers is unmistakable.
const A_NAMES = {
  template: 'zqa-widgets',
  instance: 'zqa-prod',
  userTemplate: 'zqa-personal',
  userInstance: 'zqa-mine',
  secret: 'ZQA_WIDGETS_KEY',
  provider: 'zqa-idp',
  connection: 'zqa-conn',
  agent: 'zqa-agent',
  sub: 'zqa-sub',
  keyName: 'zqa-key',
  memberEmail: 'zqa-member@orga.test',
  hookPath: '/zqa-hook',
  rulePattern: 'zqa-prod:get_item:*',
  pendingItem: 'zqa-item-pending',
} as const;
const A_SECRET_OLD = 'zqa-secret-OLD-value-5519';
const A_SECRET = 'zqa-secret-CURRENT-value-7731';
const A_CLIENT_SECRET = 'zqa-client-secret-value-2468';
const B_SECRET = 'orgb-own-secret-value-1357';

type Cred = 'B admin' | 'B member' | 'B agent';
const CREDS: readonly Cred[] = ['B admin', 'B member', 'B agent'];
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Caller = (method: string, path: string, body?: unknown) => Promise<TestResponse>;

/** What the matrix needs of org A; filled in by beforeAll. */
interface OrgA {
  orgId: string;
  adminId: string;
  memberId: string;
  memberToken: string;
  agentId: string;
  agentKeyId: string;
  agentToken: string;
  subId: string;
  subKeyId: string;
  subToken: string;
  ruleId: string;
  secretId: string;
  clientSecretId: string;
  oauthAppId: string;
  connectionId: string;
  templateId: string;
  instanceId: string;
  userTemplateId: string;
  userInstanceId: string;
  webhookId: string;
  webhookSecret: string;
  approvalId: string;
  approvalCreatedAt: string;
}

// --- the snapshot of everything org A owns -----------------------------------------------------

const inOrg = (o: string) => sql.fragment`org_id = ${o}`;
const ofOrgIdentities = (col: string, o: string) => sql.fragment`${sql.identifier([col])} IN (SELECT id FROM identities WHERE org_id = ${o})`;

/** Every public table: how to select org A's rows, or null when the table holds no tenant data. */
const TABLES: Record<string, ((orgId: string) => FragmentSqlToken) | null> = {
  orgs: (o) => sql.fragment`id = ${o}`,
  identities: inOrg,
  sessions: (o) => ofOrgIdentities('user_id', o),
  agent_keys: (o) => ofOrgIdentities('identity_id', o),
  permission_rules: inOrg,
  secrets: inOrg,
  secret_versions: (o) => sql.fragment`secret_id IN (SELECT id FROM secrets WHERE org_id = ${o})`,
  oauth_apps: inOrg,
  connections: inOrg,
  service_templates: inOrg,
  service_instances: inOrg,
  calls: inOrg,
  approvals: inOrg,
  executions: (o) => sql.fragment`approval_id IN (SELECT id FROM approvals WHERE org_id = ${o})`,
  audit_log: inOrg,
  webhooks: inOrg,
  webhook_deliveries: (o) => sql.fragment`webhook_id IN (SELECT id FROM webhooks WHERE org_id = ${o})`,
  downloads: inOrg,
  // The people's event stream (GET /v1/events), kept for Last-Event-ID resume.
  user_events: inOrg,
  // The gateway's own OAuth server (migration 0006): bindings and revocations are per user / org;
  // provider payloads (grants, sessions, …) name their user as accountId.
  oauth_bindings: (o) => ofOrgIdentities('user_id', o),
  oauth_client_revocations: inOrg,
  oidc_payloads: (o) => sql.fragment`payload->>'accountId' IN (SELECT id::text FROM identities WHERE org_id = ${o})`,
  // Teams (issue 29): invitations, the org's single sign-on, its sign-ins under way, the provider subjects of its people.
  invitations: inOrg,
  sso_configs: inOrg,
  sso_domain_claims: inOrg,
  sso_logins: inOrg,
  sso_subjects: (o) => ofOrgIdentities('user_id', o),
  // Approval notices (issue 30): the org's channels, rules and reminder settings, deliveries and email decision links.
  notification_channels: inOrg,
  notification_rules: inOrg,
  notification_settings: inOrg,
  notification_deliveries: inOrg,
  email_decision_links: (o) => sql.fragment`approval_id IN (SELECT id FROM approvals WHERE org_id = ${o})`,
  // Connected upstream MCP servers and their tools (their generated template is in service_templates).
  mcp_servers: inOrg,
  mcp_server_tools: (o) => sql.fragment`server_id IN (SELECT id FROM mcp_servers WHERE org_id = ${o})`,
  // What budgeted rules used, per window and per charged call.
  rule_budget_windows: (o) => sql.fragment`rule_id IN (SELECT id FROM permission_rules WHERE org_id = ${o})`,
  rule_budget_charges: (o) => sql.fragment`rule_id IN (SELECT id FROM permission_rules WHERE org_id = ${o})`,
  // Not tenant data: keyed by email (B's logins only add B's emails), wiring pings, migrations,
  // and the OAuth server's deployment-wide signing keys and revoked-token list.
  login_attempts: null,
  // The sign-in throttle's counters, keyed by address and lower-cased email: no tenant content.
  login_throttles: null,
  // Token buckets keyed `calls:<identity id>`: counters, no tenant content.
  rate_buckets: null,
  diagnostic_pings: null,
  schema_migrations: null,
  oauth_keys: null,
  oauth_revoked_access_tokens: null,
  // Deployment-wide: the key that signs messages to call workflows, and this database's instance id.
  message_signing_keys: null,
  gateway_instance: null,
};
/** Tables org A's setup does not populate (no approval was ever allowed, no OAuth server flow). */
const EMPTY_FOR_A = new Set(['downloads', 'executions', 'oauth_bindings', 'oauth_client_revocations', 'oidc_payloads', 'invitations', 'sso_configs', 'sso_domain_claims', 'sso_logins', 'sso_subjects', 'notification_channels', 'notification_rules', 'notification_settings', 'notification_deliveries', 'email_decision_links', 'mcp_servers', 'mcp_server_tools', 'rule_budget_windows', 'rule_budget_charges']);

type Snapshot = Record<string, string[]>;

async function snapshotOrg(pool: DatabasePool, orgId: string): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const [table, where] of Object.entries(TABLES)) {
    if (!where) continue;
    out[table] = [
      ...(await pool.anyFirst(
        sql.type(z.object({ row: z.string() }))`SELECT t::text AS row FROM ${sql.identifier(['public', table])} t WHERE ${where(orgId)} ORDER BY t::text`,
      )),
    ];
  }
  return out;
}

async function until<T>(what: string, fn: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits out the workflows' trailing writes (audit rows, call status, key touch) after setup. */
async function stableSnapshot(pool: DatabasePool, orgId: string): Promise<Snapshot> {
  let prev = await snapshotOrg(pool, orgId);
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const next = await snapshotOrg(pool, orgId);
    if (JSON.stringify(next) === JSON.stringify(prev)) return next;
    prev = next;
  }
  throw new Error("org A's rows never settled");
}

/** Every uuid id of A's rows (any table with an `id` uuid column) — each one a needle. */
async function idsOfOrg(pool: DatabasePool, orgId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [table, where] of Object.entries(TABLES)) {
    if (!where) continue;
    const hasUuidId = await pool.exists(sql.type(z.object({ x: z.number() }))`
      SELECT 1 AS x FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = ${table} AND column_name = 'id' AND data_type = 'uuid'`);
    if (!hasUuidId) continue;
    ids.push(...(await pool.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id::text AS id FROM ${sql.identifier(['public', table])} WHERE ${where(orgId)}`)));
  }
  return ids;
}

describe('cross-org isolation: org B cannot see or change anything of org A', () => {
  let gw: TestGateway;
  let up: Upstream;
  const A = {} as OrgA;
  const callers = {} as Record<Cred, Caller>;
  const B = { orgId: '', adminId: '', memberId: '', agentId: '' };
  /** A's ids, names, tokens and secret values: none may appear in an answer to B. */
  let needles: string[] = [];
  let before: Snapshot;
  let upstreamSeenAtSnapshot = 0;

  /** The needles found in an answer, ignoring what the request itself carried (echoed input). */
  const leaks = (answer: string, request = ''): string[] => needles.filter((n) => answer.includes(n) && !request.includes(n));

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    const aAdmin = gw.as(gw.adminToken);
    const ok = (res: TestResponse, status: number, what: string) => {
      if (res.status !== status) throw new Error(`setup: ${what} answered ${res.status} ${res.text}`);
      return res.body;
    };

    // --- org A: the bootstrap admin, a member, agents, rule, vault, OAuth, registry, webhook, approval
    const me = ok(await aAdmin('GET', '/v1/identities/me'), 200, 'A me');
    A.orgId = me.org.id;
    A.adminId = me.identity.id;
    const member = await seedUser(gw.databaseUrl, { orgId: A.orgId, email: A_NAMES.memberEmail });
    A.memberId = member.userId;
    A.memberToken = await gw.login(member.email, member.password);

    A.templateId = ok(await aAdmin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc(A_NAMES.template, up.url) }), 201, 'A template').id;
    A.secretId = ok(await aAdmin('POST', '/v1/secrets', { name: A_NAMES.secret, value: A_SECRET_OLD, description: 'zqa widgets key' }), 201, 'A secret').id;
    expect(ok(await aAdmin('POST', '/v1/secrets', { name: A_NAMES.secret, value: A_SECRET }), 200, 'A secret rotation').current_version).toBe(2);
    A.instanceId = ok(
      await aAdmin('POST', '/v1/services', { name: A_NAMES.instance, template: A_NAMES.template, scope: 'org', secret_name: A_NAMES.secret }),
      201,
      'A instance',
    ).id;
    const app = ok(
      await aAdmin('PUT', `/v1/oauth-apps/${A_NAMES.provider}`, {
        client_id: 'zqa-client-id',
        client_secret: A_CLIENT_SECRET,
        authorization_url: 'https://idp.zqa.invalid/authorize',
        token_url: 'https://idp.zqa.invalid/token',
        revocation_url: 'https://idp.zqa.invalid/revoke',
      }),
      201,
      'A OAuth app',
    ).oauth_app;
    A.oauthAppId = app.id;
    A.clientSecretId = app.client_secret_id;
    A.connectionId = ok(
      await gw.as(A.memberToken)('POST', '/v1/connections', { provider: A_NAMES.provider, name: A_NAMES.connection, scopes: ['openid'] }),
      201,
      'A connection',
    ).connection.id;

    // The member's own (user-scoped) template and instance: invisible even to A's admin, let alone B.
    const aMember = gw.as(A.memberToken);
    A.userTemplateId = ok(await aMember('POST', '/v1/templates', { scope: 'user', document: upstreamServiceDoc(A_NAMES.userTemplate, up.url) }), 201, 'A user template').id;
    A.userInstanceId = ok(await aMember('POST', '/v1/services', { name: A_NAMES.userInstance, template: A_NAMES.userTemplate, scope: 'user' }), 201, 'A user instance').id;

    // A's webhook takes every event; it must only ever hear of A's approvals.
    const hook = ok(
      await aAdmin('POST', '/v1/webhooks', { url: `${up.url}${A_NAMES.hookPath}`, events: [...WEBHOOK_EVENT_TYPES], description: 'zqa hook' }),
      201,
      'A webhook',
    );
    A.webhookId = hook.id;
    A.webhookSecret = hook.secret;

    const agent = ok(await aAdmin('POST', '/v1/identities/agents', { name: A_NAMES.agent, key_name: A_NAMES.keyName }), 201, 'A agent');
    A.agentId = agent.identity.id;
    A.agentKeyId = agent.key.id;
    A.agentToken = agent.key.token;
    const sub = ok(await aAdmin('POST', '/v1/identities/agents', { name: A_NAMES.sub, parent_id: A.agentId }), 201, 'A subagent');
    A.subId = sub.identity.id;
    A.subKeyId = sub.key.id;
    A.subToken = sub.key.token;
    A.ruleId = ok(await aAdmin('POST', `/v1/identities/${A.agentId}/rules`, { effect: 'allow', pattern: A_NAMES.rulePattern }), 201, 'A rule').id;

    // A covered call (audit + calls rows, the vault secret injected) and a gap (a pending approval).
    const called = ok(
      await gw.as(A.agentToken)('POST', '/v1/actions/call', { service: A_NAMES.instance, action: 'get_item', params: { id: 'zqa-item-0' } }),
      200,
      'A covered call',
    );
    expect(called.status).toBe('called');
    expect(up.requests.at(-1)?.headers['x-api-key']).toBe(A_SECRET);
    const pending = ok(
      await gw.as(A.agentToken)('POST', '/v1/actions/call', { service: A_NAMES.instance, action: 'delete_item', params: { id: A_NAMES.pendingItem } }),
      202,
      'A approval',
    );
    A.approvalId = pending.approval_id;
    A.approvalCreatedAt = ok(await aAdmin('GET', `/v1/approvals/${A.approvalId}`), 200, 'A approval view').created_at;
    // Its approval.raised delivery, received and recorded, before the "before" picture is taken.
    await until('A webhook delivery', () => up.requests.filter((r) => r.url === A_NAMES.hookPath).length, (n) => n === 1);
    await until(
      'A delivery row',
      () => gw.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ${A.webhookId}`),
      (n) => n === 1,
    );

    // --- org B: an admin (a new org), a member of it, and an agent with a key
    const bAdmin = await seedUser(gw.databaseUrl, { email: 'boss@orgb.test', role: 'admin' });
    const bMember = await seedUser(gw.databaseUrl, { orgId: bAdmin.orgId, email: 'worker@orgb.test' });
    expect(bAdmin.orgId).not.toBe(A.orgId);
    B.orgId = bAdmin.orgId;
    B.adminId = bAdmin.userId;
    B.memberId = bMember.userId;
    callers['B admin'] = gw.as(await gw.login(bAdmin.email, bAdmin.password));
    callers['B member'] = gw.as(await gw.login(bMember.email, bMember.password));
    const bAgent = ok(await callers['B admin']('POST', '/v1/identities/agents', { name: 'b-agent' }), 201, 'B agent');
    B.agentId = bAgent.identity.id;
    callers['B agent'] = gw.as(bAgent.key.token);
    // B's agent may make raw GETs anywhere, so the vault-by-name probe below reaches the executor.
    ok(await callers['B admin']('POST', `/v1/identities/${B.agentId}/rules`, { effect: 'allow', pattern: 'http:GET:*' }), 201, 'B rule');

    // --- the needles and the "before" picture
    before = await stableSnapshot(gw.pool, A.orgId);
    upstreamSeenAtSnapshot = up.requests.length;
    const prefixes = await gw.pool.anyFirst(sql.type(z.object({ prefix: z.string() }))`
      SELECT k.prefix FROM agent_keys k JOIN identities i ON i.id = k.identity_id WHERE i.org_id = ${A.orgId}`);
    needles = [
      ...new Set([
        ...(await idsOfOrg(gw.pool, A.orgId)),
        ...Object.values(A_NAMES),
        'zqa',
        'admin@example.test',
        'Default organisation',
        A_SECRET,
        A_SECRET_OLD,
        A_CLIENT_SECRET,
        A.agentToken,
        A.subToken,
        A.memberToken,
        gw.adminToken,
        A.webhookSecret,
        ...prefixes,
      ]),
    ];
    expect(needles).toEqual(expect.arrayContaining([A.orgId, A.agentId, A.approvalId, A.connectionId, A.webhookId, A.templateId, A.instanceId]));
  });

  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('covers every table of schema public in the snapshot (a new table must be classified here)', async () => {
    const tables = await gw.pool.anyFirst(sql.type(z.object({ table_name: z.string() }))`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`);
    expect([...tables].sort()).toEqual(Object.keys(TABLES).sort());
    // Org A really has something in each tenant table (else "unchanged" would prove little).
    for (const table of Object.keys(before).filter((t) => !EMPTY_FOR_A.has(t))) {
      expect(before[table]?.length ?? 0, table).toBeGreaterThan(0);
    }
  });

  // --- 1. lists: 200 (or 403 where the role has no access) and nothing of A in the answer ------

  interface ListProbe {
    label: string;
    path: () => string;
    /** Credentials that must get 403 (the route is closed to them anyway). */
    forbiddenFor?: readonly Cred[];
    /** The part of the answer that must be free of A (default: all of it). */
    inspect?: (body: any) => unknown;
  }
  const noEcho = (body: any) => ({ ...body, query: undefined });
  const LISTS: ListProbe[] = [
    { label: 'GET /v1/identities/me', path: () => '/v1/identities/me' },
    { label: 'GET /v1/identities', path: () => '/v1/identities' },
    { label: 'GET /v1/identities?kind=user', path: () => '/v1/identities?kind=user' },
    { label: 'GET /v1/identities?kind=agent', path: () => '/v1/identities?kind=agent' },
    { label: 'GET /v1/identities?kind=subagent&status=active', path: () => '/v1/identities?kind=subagent&status=active' },
    { label: 'GET /v1/secrets', path: () => '/v1/secrets', forbiddenFor: ['B agent'] },
    { label: 'GET /v1/connections', path: () => '/v1/connections' },
    { label: 'GET /v1/oauth-apps', path: () => '/v1/oauth-apps', forbiddenFor: ['B agent'] },
    { label: 'GET /v1/templates', path: () => '/v1/templates' },
    { label: 'GET /v1/services', path: () => '/v1/services' },
    { label: 'GET /v1/webhooks', path: () => '/v1/webhooks', forbiddenFor: ['B member', 'B agent'] },
    { label: 'GET /v1/audit', path: () => '/v1/audit?limit=200' },
    { label: "GET /v1/audit?identity=<A's agent>", path: () => `/v1/audit?identity=${A.agentId}` },
    { label: "GET /v1/audit?service=<A's instance>", path: () => `/v1/audit?service=${A_NAMES.instance}` },
    { label: 'GET /v1/audit?event=approval.raised', path: () => '/v1/audit?event=approval.raised' },
    { label: 'GET /v1/approvals', path: () => '/v1/approvals?limit=100' },
    { label: 'GET /v1/approvals?status=pending', path: () => '/v1/approvals?status=pending&limit=100' },
    { label: 'GET /v1/approvals?scope=actionable', path: () => '/v1/approvals?scope=actionable&limit=100' },
    { label: 'GET /v1/approvals?scope=assigned', path: () => '/v1/approvals?scope=assigned&limit=100' },
    { label: 'GET /v1/approvals?scope=mine', path: () => '/v1/approvals?scope=mine&limit=100' },
    {
      label: "GET /v1/approvals?cursor=<just after A's approval>",
      path: () => `/v1/approvals?limit=100&cursor=${Buffer.from(`${new Date(Date.parse(A.approvalCreatedAt) + 1000).toISOString()}|${A.approvalId}`).toString('base64url')}`,
    },
    { label: 'GET /v1/search?q=zqa', path: () => '/v1/search?q=zqa&limit=100', inspect: noEcho },
    { label: "GET /v1/search?q=<A's template key>", path: () => `/v1/search?q=${A_NAMES.template}&limit=100`, inspect: noEcho },
    { label: "GET /v1/search?q=<A's instance>", path: () => `/v1/search?q=${A_NAMES.instance}&limit=100`, inspect: noEcho },
    { label: 'GET /v1/search?q=delete item', path: () => '/v1/search?q=delete%20item&limit=100', inspect: noEcho },
    { label: 'GET /v1/org/settings', path: () => '/v1/org/settings', forbiddenFor: ['B agent'] },
    { label: 'GET /v1/org/members', path: () => '/v1/org/members', forbiddenFor: ['B agent'] },
    { label: 'GET /v1/org/invitations', path: () => '/v1/org/invitations', forbiddenFor: ['B member', 'B agent'] },
  ];

  describe.for(CREDS)('lists as %s', (cred) => {
    it.for(LISTS)('$label', async (probe) => {
      const path = probe.path();
      const res = await callers[cred]('GET', path);
      const ctx = `${cred} GET ${path} → ${res.status} ${res.text.slice(0, 400)}`;
      expect(res.status, ctx).toBe(probe.forbiddenFor?.includes(cred) ? 403 : 200);
      const inspected = res.status === 200 && probe.inspect ? JSON.stringify(probe.inspect(res.body)) : res.text;
      expect(leaks(inspected), `ISOLATION LEAK: ${ctx}`).toEqual([]);
    });
  });

  it("B's own lists work (the empty-of-A checks above are not vacuous)", async () => {
    const ids = (await callers['B admin']('GET', '/v1/identities')).body.identities.map((i: any) => i.id);
    expect(ids).toEqual(expect.arrayContaining([B.adminId, B.memberId, B.agentId]));
    expect((await callers['B agent']('GET', '/v1/identities/me')).body.identity.id).toBe(B.agentId);
    expect((await callers['B member']('GET', '/v1/org/settings')).body.id).toBe(B.orgId);
    const templates = (await callers['B admin']('GET', '/v1/templates')).body.templates;
    expect(templates.length).toBeGreaterThan(0); // the global catalog
  });

  // --- 2. every endpoint that takes an id or name of A's: 403/404, nothing echoed, nothing changed

  interface Probe {
    label: string;
    method: Method;
    path: () => string;
    body?: () => unknown;
    /** Default: 403 or 404. */
    expect?: readonly number[];
  }
  const DENIED = [403, 404] as const;
  /** A reference to an unknown template/connection in a create body is a validation error. */
  const UNKNOWN_REF = [400, 403, 404] as const;
  const widgetsDoc = () => ({ document: upstreamServiceDoc(A_NAMES.template, up.url) });
  const resolveBody = (decision: string) => () => ({ decision, reason: 'org B says so' });

  const PROBES: Probe[] = [
    // identities
    ...(['adminId', 'memberId', 'agentId', 'subId'] as const).flatMap((k): Probe[] => [
      { label: `GET /v1/identities/{A ${k}}`, method: 'GET', path: () => `/v1/identities/${A[k]}` },
      { label: `POST /v1/identities/{A ${k}}/revoke`, method: 'POST', path: () => `/v1/identities/${A[k]}/revoke` },
      { label: `POST /v1/identities/{A ${k}}/archive`, method: 'POST', path: () => `/v1/identities/${A[k]}/archive` },
      { label: `GET /v1/identities/{A ${k}}/keys`, method: 'GET', path: () => `/v1/identities/${A[k]}/keys` },
      { label: `POST /v1/identities/{A ${k}}/keys`, method: 'POST', path: () => `/v1/identities/${A[k]}/keys`, body: () => ({ name: 'b-minted' }) },
      { label: `GET /v1/identities/{A ${k}}/rules`, method: 'GET', path: () => `/v1/identities/${A[k]}/rules?include_revoked=true` },
      {
        label: `POST /v1/identities/{A ${k}}/rules`,
        method: 'POST',
        path: () => `/v1/identities/${A[k]}/rules`,
        body: () => ({ effect: 'allow', pattern: '*:*:*' }),
      },
      {
        label: `POST /v1/identities/agents {parent_id: A ${k}}`,
        method: 'POST',
        path: () => '/v1/identities/agents',
        body: () => ({ name: 'b-planted', parent_id: A[k] }),
      },
    ]),
    { label: 'POST /v1/identities/{A agent}/keys/{A key}/revoke', method: 'POST', path: () => `/v1/identities/${A.agentId}/keys/${A.agentKeyId}/revoke` },
    { label: 'POST /v1/identities/{A sub}/keys/{A sub key}/revoke', method: 'POST', path: () => `/v1/identities/${A.subId}/keys/${A.subKeyId}/revoke` },
    { label: 'POST /v1/identities/{B agent}/keys/{A key}/revoke', method: 'POST', path: () => `/v1/identities/${B.agentId}/keys/${A.agentKeyId}/revoke` },
    { label: 'POST /v1/identities/{A agent}/rules/{A rule}/revoke', method: 'POST', path: () => `/v1/identities/${A.agentId}/rules/${A.ruleId}/revoke` },
    { label: 'POST /v1/identities/{B agent}/rules/{A rule}/revoke', method: 'POST', path: () => `/v1/identities/${B.agentId}/rules/${A.ruleId}/revoke` },

    // vault (A's own secret and the OAuth app's client secret)
    ...(['secretId', 'clientSecretId'] as const).flatMap((k): Probe[] => [
      { label: `GET /v1/secrets/{A ${k}}`, method: 'GET', path: () => `/v1/secrets/${A[k]}` },
      { label: `GET /v1/secrets/{A ${k}}/versions`, method: 'GET', path: () => `/v1/secrets/${A[k]}/versions` },
      { label: `POST /v1/secrets/{A ${k}}/versions/1/restore`, method: 'POST', path: () => `/v1/secrets/${A[k]}/versions/1/restore` },
      { label: `DELETE /v1/secrets/{A ${k}}`, method: 'DELETE', path: () => `/v1/secrets/${A[k]}` },
    ]),

    // OAuth connections
    { label: 'GET /v1/connections/{A conn}', method: 'GET', path: () => `/v1/connections/${A.connectionId}` },
    { label: 'POST /v1/connections/{A conn}/authorize', method: 'POST', path: () => `/v1/connections/${A.connectionId}/authorize` },
    { label: 'POST /v1/connections/{A conn}/refresh', method: 'POST', path: () => `/v1/connections/${A.connectionId}/refresh` },
    { label: 'DELETE /v1/connections/{A conn}', method: 'DELETE', path: () => `/v1/connections/${A.connectionId}` },
    ...(['id', 'name'] as const).map(
      (by): Probe => ({
        label: `POST /v1/actions/http {connection: A conn ${by}}`,
        method: 'POST',
        path: () => '/v1/actions/http',
        body: () => ({ connection: by === 'id' ? A.connectionId : A_NAMES.connection, method: 'GET', url: `${up.url}/zqa-conn-probe` }),
      }),
    ),

    // registry: templates and instances
    { label: 'PUT /v1/templates/{A template}', method: 'PUT', path: () => `/v1/templates/${A.templateId}`, body: widgetsDoc },
    { label: 'DELETE /v1/templates/{A template}', method: 'DELETE', path: () => `/v1/templates/${A.templateId}` },
    { label: "PUT /v1/templates/{A member's user template}", method: 'PUT', path: () => `/v1/templates/${A.userTemplateId}`, body: () => ({ document: upstreamServiceDoc(A_NAMES.userTemplate, up.url) }) },
    { label: "DELETE /v1/templates/{A member's user template}", method: 'DELETE', path: () => `/v1/templates/${A.userTemplateId}` },
    { label: "GET /v1/services/{A member's user instance}", method: 'GET', path: () => `/v1/services/${A_NAMES.userInstance}` },
    { label: "DELETE /v1/services/{A member's user instance}", method: 'DELETE', path: () => `/v1/services/${A_NAMES.userInstance}` },
    { label: 'GET /v1/services/{A instance}', method: 'GET', path: () => `/v1/services/${A_NAMES.instance}` },
    { label: 'DELETE /v1/services/{A instance}', method: 'DELETE', path: () => `/v1/services/${A_NAMES.instance}` },
    { label: 'GET /v1/services/{A template key (implicit instance)}', method: 'GET', path: () => `/v1/services/${A_NAMES.template}` },
    { label: 'DELETE /v1/services/{A template key (implicit instance)}', method: 'DELETE', path: () => `/v1/services/${A_NAMES.template}` },
    {
      label: 'POST /v1/services {template: A template key}',
      method: 'POST',
      path: () => '/v1/services',
      body: () => ({ name: 'b-borrowed', template: A_NAMES.template, scope: 'user' }),
      expect: UNKNOWN_REF,
    },
    {
      label: 'POST /v1/services {template: github, connection_id: A conn}',
      method: 'POST',
      path: () => '/v1/services',
      body: () => ({ name: 'b-borrowed-conn', template: 'github', scope: 'user', connection_id: A.connectionId }),
      expect: UNKNOWN_REF,
    },

    // webhooks
    { label: 'GET /v1/webhooks/{A hook}/deliveries', method: 'GET', path: () => `/v1/webhooks/${A.webhookId}/deliveries` },
    { label: 'DELETE /v1/webhooks/{A hook}', method: 'DELETE', path: () => `/v1/webhooks/${A.webhookId}` },

    // approvals and calls
    { label: 'GET /v1/approvals/{A approval}', method: 'GET', path: () => `/v1/approvals/${A.approvalId}` },
    ...['allow_once', 'deny', 'bubble'].map(
      (d): Probe => ({ label: `POST /v1/approvals/{A approval}/resolve ${d}`, method: 'POST', path: () => `/v1/approvals/${A.approvalId}/resolve`, body: resolveBody(d) }),
    ),
    {
      label: 'POST /v1/approvals/{A approval}/resolve allow_always',
      method: 'POST',
      path: () => `/v1/approvals/${A.approvalId}/resolve`,
      body: () => ({ decision: 'allow_always', remember_keys: [`${A_NAMES.instance}:delete_item:*`], ttl: '1h' }),
    },
    { label: 'POST /v1/actions/call {approval_id: A approval} (resume)', method: 'POST', path: () => '/v1/actions/call', body: () => ({ approval_id: A.approvalId }) },
    {
      label: 'POST /v1/actions/call {service: A instance}',
      method: 'POST',
      path: () => '/v1/actions/call',
      body: () => ({ service: A_NAMES.instance, action: 'get_item', params: { id: 'b-probe' } }),
      expect: [404],
    },
    {
      label: 'POST /v1/actions/call {service: A template key}',
      method: 'POST',
      path: () => '/v1/actions/call',
      body: () => ({ service: A_NAMES.template, action: 'get_item', params: { id: 'b-probe' } }),
      expect: [404],
    },
    {
      label: "POST /v1/actions/call {service: A member's user instance}",
      method: 'POST',
      path: () => '/v1/actions/call',
      body: () => ({ service: A_NAMES.userInstance, action: 'get_item', params: { id: 'b-probe' } }),
      expect: [404],
    },
    {
      label: 'POST /v1/actions/call raw HTTP {service: A instance}',
      method: 'POST',
      path: () => '/v1/actions/call',
      body: () => ({ service: A_NAMES.instance, method: 'GET', path: '/items/b-probe' }),
      expect: [404],
    },
  ];

  describe.for(CREDS)('by-id probes as %s', (cred) => {
    it.for(PROBES)('$label', async (probe) => {
      const path = probe.path();
      const body = probe.body?.();
      const res = await callers[cred](probe.method, path, body);
      const ctx = `${cred} ${probe.method} ${path}${body === undefined ? '' : ` ${JSON.stringify(body)}`} → ${res.status} ${res.text.slice(0, 400)}`;
      const allowed = probe.expect ?? DENIED;
      expect(allowed, `ISOLATION BREACH (expected ${allowed.join(' or ')}): ${ctx}`).toContain(res.status);
      expect(leaks(res.text, path + JSON.stringify(body ?? null)), `ISOLATION LEAK in the answer: ${ctx}`).toEqual([]);
    });
  });

  it("a raw HTTP call naming A's vault secret resolves it in B's vault (none there), never A's", async () => {
    for (const cred of CREDS) {
      const res = await callers[cred]('POST', '/v1/actions/call', {
        service: 'http',
        method: 'GET',
        path: `${up.url}/zqa-secret-probe`,
        secret: { name: A_NAMES.secret, in: 'header', param: 'X-Probe' },
      });
      const ctx = `${cred} → ${res.status} ${res.text.slice(0, 400)}`;
      expect(res.status, ctx).toBe(424);
      expect(res.body.error.code, ctx).toBe('credential_missing');
      expect(res.text, ctx).not.toContain(A_SECRET);
    }
    const probes = up.requests.filter((r) => r.url.startsWith('/zqa-secret-probe'));
    expect(probes).toEqual([]);
  });

  // --- 3. B reusing A's names inside its own namespace: B's own resources, A's untouched ---------

  describe("B reuses A's names in its own namespace", () => {
    it('an OAuth connection for A\'s provider is refused while B has no app of its own', async () => {
      const res = await callers['B admin']('POST', '/v1/connections', { provider: A_NAMES.provider });
      expect(res.status, res.text).toBe(400);
      expect(leaks(res.text, A_NAMES.provider)).toEqual([]);
    });

    it("PUT /v1/oauth-apps/{A's provider}: member and agent 403; B's admin creates B's own app (201, not an update of A's)", async () => {
      const body = {
        client_id: 'orgb-client-id',
        client_secret: 'orgb-client-secret',
        authorization_url: 'https://idp.orgb.invalid/authorize',
        token_url: 'https://idp.orgb.invalid/token',
      };
      expect((await callers['B member']('PUT', `/v1/oauth-apps/${A_NAMES.provider}`, body)).status).toBe(403);
      expect((await callers['B agent']('PUT', `/v1/oauth-apps/${A_NAMES.provider}`, body)).status).toBe(403);
      const res = await callers['B admin']('PUT', `/v1/oauth-apps/${A_NAMES.provider}`, body);
      expect(res.status, `ISOLATION BREACH: B's PUT found A's OAuth app: ${res.text}`).toBe(201);
      expect(res.body.oauth_app.id).not.toBe(A.oauthAppId);
      expect(res.body.oauth_app.client_secret_id).not.toBe(A.clientSecretId);
      expect(leaks(res.text, A_NAMES.provider)).toEqual([]);
    });

    it("a connection named like A's is B's own (201, not a 409 that would reveal A's name)", async () => {
      const res = await callers['B admin']('POST', '/v1/connections', { provider: A_NAMES.provider, name: A_NAMES.connection });
      expect(res.status, `ISOLATION BREACH: ${res.text}`).toBe(201);
      expect(res.body.connection.id).not.toBe(A.connectionId);
      expect(res.body.auth_url).toContain('orgb-client-id');
      expect(res.body.auth_url).not.toContain('zqa-client-id');
    });

    it("a secret named like A's is created in B's vault (201 at version 1, not a rotation of A's)", async () => {
      const res = await callers['B admin']('POST', '/v1/secrets', { name: A_NAMES.secret, value: B_SECRET });
      expect(res.status, `ISOLATION BREACH: B's write rotated A's secret: ${res.text}`).toBe(201);
      expect(res.body).toMatchObject({ name: A_NAMES.secret, current_version: 1 });
      expect(res.body.id).not.toBe(A.secretId);
      expect((await callers['B agent']('POST', '/v1/secrets', { name: A_NAMES.secret, value: 'x' })).status).toBe(403);
    });

    it("a template and an instance with A's key and name are B's own (201, not 409)", async () => {
      const t = await callers['B admin']('POST', '/v1/templates', { scope: 'org', ...widgetsDoc() });
      expect(t.status, `ISOLATION BREACH: ${t.text}`).toBe(201);
      expect(t.body.id).not.toBe(A.templateId);
      const i = await callers['B admin']('POST', '/v1/services', { name: A_NAMES.instance, template: A_NAMES.template, scope: 'org', secret_name: A_NAMES.secret });
      expect(i.status, `ISOLATION BREACH: ${i.text}`).toBe(201);
      expect(i.body.id).not.toBe(A.instanceId);
    });

    it("calling B's same-named instance injects B's secret, never A's", async () => {
      const seen = up.requests.length;
      const res = await callers['B admin']('POST', '/v1/actions/call', { service: A_NAMES.instance, action: 'get_item', params: { id: 'orgb-item' } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.status).toBe('called');
      const sent = up.requests.slice(seen);
      expect(sent.map((r) => r.url)).toEqual(['/items/orgb-item']);
      expect(sent[0]!.headers['x-api-key']).toBe(B_SECRET);
      // B's agent has no rule for it: an approval is raised in B, for B's resolvers and B's
      // webhooks only (A's webhook takes every event type: it must not hear of this one).
      const hook = await callers['B admin']('POST', '/v1/webhooks', { url: `${up.url}/orgb-hook`, events: ['approval.raised'] });
      expect(hook.status, hook.text).toBe(201);
      const gap = await callers['B agent']('POST', '/v1/actions/call', { service: A_NAMES.instance, action: 'delete_item', params: { id: 'orgb-item' } });
      expect(gap.status, gap.text).toBe(202);
      expect((await gw.as(gw.adminToken)('GET', `/v1/approvals/${gap.body.approval_id}`)).status).toBe(404);
      const delivered = await until('B webhook delivery', () => up.requests.filter((r) => r.url === '/orgb-hook'), (r) => r.length === 1);
      expect(delivered[0]!.body).toContain(gap.body.approval_id);
      await new Promise((r) => setTimeout(r, 500)); // a stray fan-out to A would be just as fast
    });

    it("PATCH /v1/org/settings changes B's org only", async () => {
      const res = await callers['B admin']('PATCH', '/v1/org/settings', { approval_ttl_seconds: 120, max_pending_per_agent: 3 });
      expect(res.status, res.text).toBe(200);
      expect(res.body.id).toBe(B.orgId);
      expect((await callers['B member']('PATCH', '/v1/org/settings', { approval_ttl_seconds: 60 })).status).toBe(403);
      expect((await callers['B agent']('PATCH', '/v1/org/settings', { approval_ttl_seconds: 60 })).status).toBe(403);
    });
  });

  // --- 4. org A afterwards: not a byte changed, and everything still works --------------------

  describe('org A afterwards', () => {
    it("has exactly the rows it had before, in every table", async () => {
      const after = await snapshotOrg(gw.pool, A.orgId);
      for (const table of Object.keys(before)) {
        expect(after[table], `ISOLATION BREACH: org B's requests changed org A's ${table} rows`).toEqual(before[table]);
      }
    });

    it("A's agent and subagent keys still authenticate, and A's approval is still pending", async () => {
      expect((await gw.as(A.agentToken)('GET', '/v1/identities/me')).body.identity.id).toBe(A.agentId);
      expect((await gw.as(A.subToken)('GET', '/v1/identities/me')).body.identity.id).toBe(A.subId);
      const approval = await gw.as(gw.adminToken)('GET', `/v1/approvals/${A.approvalId}`);
      expect(approval.body).toMatchObject({ id: A.approvalId, status: 'pending', resolver_id: A.adminId, decision: null });
      const pending = await gw.as(gw.adminToken)('GET', '/v1/approvals?status=pending');
      expect(pending.body.approvals.map((a: any) => a.id)).toEqual([A.approvalId]);
      // A's covered call still runs with A's secret, through A's instance.
      const seen = up.requests.length;
      const res = await gw.as(A.agentToken)('POST', '/v1/actions/call', { service: A_NAMES.instance, action: 'get_item', params: { id: 'zqa-after' } });
      expect(res.body.status, res.text).toBe('called');
      expect(up.requests.slice(seen).map((r) => r.headers['x-api-key'])).toEqual([A_SECRET]);
    });

    it("no upstream request made on B's behalf carried anything of A's vault, and A's webhook heard nothing of B", () => {
      const sinceSnapshot = up.requests.slice(upstreamSeenAtSnapshot);
      const onBsBehalf = sinceSnapshot.filter((r) => r.url !== '/items/zqa-after');
      for (const r of onBsBehalf) {
        const text = JSON.stringify(r);
        for (const secret of [A_SECRET, A_SECRET_OLD, A_CLIENT_SECRET]) expect(text, `ISOLATION LEAK upstream: ${text}`).not.toContain(secret);
      }
      expect(sinceSnapshot.filter((r) => r.url.startsWith(A_NAMES.hookPath))).toEqual([]);
    });
  });
});
