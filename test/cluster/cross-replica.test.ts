// The production shape, run for real (`npm run test:cluster`): a Temporal server v1.29.1 on
// PostgreSQL (4 history shards), two `gateway serve --role api` processes (A, B) and two
// `--role worker` processes, one database and task queue — started by server/cluster/cluster.ts,
// the module behind `npm run cluster`. Third parties are real HTTP servers on loopback.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Connection } from '@temporalio/client';
import { Client as TemporalClient } from '@temporalio/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseParser } from '../../cli/mcp/sse.ts';
import { startCluster, type Cluster, type GatewayReplica } from '../../server/cluster/cluster.ts';
import { createLogger } from '../../server/logger.ts';
import { ensureDatabase } from '../../server/embedded/embedded-postgres.ts';
import { freePort, portAcceptsConnections } from '../../server/embedded/processes.ts';
import { resolveTemporalCli } from '../../server/embedded/temporal-cli.ts';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { Browser, pageOf, redirectOf } from '../support/oauth-browser.ts';
import { runCli, waitForReady } from '../support/processes.ts';
import { authorizeAtProvider, startOAuthProvider, type TestProvider } from '../support/oauth-provider.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

const run = promisify(execFile);

type Json = { status: number; body: any };

async function request(base: string, method: string, p: string, token?: string, body?: unknown): Promise<Json> {
  const res = await fetch(base + p, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed };
}

describe('the production shape: Temporal on PostgreSQL, two API and two worker replicas', () => {
  let dir: string;
  let cluster: Cluster;
  let A: GatewayReplica;
  let B: GatewayReplica;
  let up: Upstream;
  let db: pg.Pool;
  let temporal: TemporalClient;
  let temporalConn: Connection;
  let adminToken: string;
  let owner: { token: string };

  /** Every line the cluster printed (its progress and supervision lines). */
  const printed: string[] = [];

  const at = (r: GatewayReplica, token?: string) => (method: string, p: string, body?: unknown) => request(r.url, method, p, token, body);
  const readyz = (r: GatewayReplica) => fetch(`${r.url}/readyz`).then((res) => res.status, () => 0);

  async function agent(name: string, autoCall = true): Promise<{ id: string; key: string }> {
    const res = await at(A, owner.token)('POST', '/v1/identities/agents', { name, auto_call_on_approve: autoCall });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.identity.id, key: res.body.key.token };
  }

  beforeAll(async () => {
    up = await startUpstream();
    dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-cluster-'));
    // The operator's own settings, in the environment `npm run cluster` runs in (issue 26 item 15).
    process.env.OUTBOUND_ALLOWLIST = '127.0.0.1';
    process.env.UPSTREAM_TIMEOUT_MS = '17000';
    process.env.PUBLIC_URL = 'http://operator-set.example'; // set by the cluster itself: not passed
    cluster = await startCluster({
      dir,
      logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'warn'),
      ui: false,
      gatewayEnv: { OUTBOUND_ALLOW_PRIVATE: 'true', GATEWAY_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'info' },
      progress: (line) => {
        printed.push(line);
        process.stderr.write(line + '\n');
      },
    });
    [A, B] = cluster.api as [GatewayReplica, GatewayReplica];
    db = new pg.Pool({ connectionString: cluster.databaseUrl, max: 3 });
    temporalConn = await connectTemporal({ address: cluster.temporalAddress });
    temporal = new TemporalClient({ connection: temporalConn, namespace: cluster.namespace });
    adminToken = (await at(B)('POST', '/v1/auth/login', cluster.admin)).body.token;
    expect((await at(A, adminToken)('GET', '/v1/identities/me')).status).toBe(200);
    expect((await at(A, adminToken)('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    // The owner of the agents below is the admin (a person): they resolve approvals.
    owner = { token: adminToken };
    expect((await at(B, adminToken)('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'cluster-widgets-key' })).status).toBe(201);
  }, 1_200_000);

  afterAll(async () => {
    delete process.env.OUTBOUND_ALLOWLIST;
    delete process.env.UPSTREAM_TIMEOUT_MS;
    delete process.env.PUBLIC_URL;
    await temporalConn?.close();
    await db?.end();
    await cluster?.stop();
    await up?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 300_000);

  it('runs Temporal with PostgreSQL persistence and visibility, more than one shard, and the search attributes', async () => {
    const dbs = await db.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname IN ('temporal', 'temporal_visibility') ORDER BY 1`);
    expect(dbs.rows.map((r) => r.datname)).toEqual(['temporal', 'temporal_visibility']);
    const shards = new pg.Client({ connectionString: cluster.databaseUrl.replace(/\/[^/]*$/, '/temporal') });
    await shards.connect();
    try {
      expect(Number((await shards.query('SELECT count(*) AS n FROM shards')).rows[0].n)).toBe(4);
    } finally {
      await shards.end();
    }
    const attrs = await temporalConn.operatorService.listSearchAttributes({ namespace: cluster.namespace });
    for (const name of ['GatewayOrg', 'GatewayAgent', 'GatewayService', 'GatewayAction', 'GatewayStatus']) expect(attrs.customAttributes).toHaveProperty(name);
    for (const r of [...cluster.api, ...cluster.workers]) expect((await request(r.url, 'GET', '/readyz')).body.status).toBe('ready');
  });

  it('passes the operator’s gateway variables to every replica (except what the cluster sets) and binds them to loopback', async () => {
    for (const r of [...cluster.api, ...cluster.workers]) {
      const env = Object.fromEntries(
        (await readFile(`/proc/${r.process.pid}/environ`, 'utf8'))
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      expect(env, r.name).toMatchObject({ OUTBOUND_ALLOWLIST: '127.0.0.1', UPSTREAM_TIMEOUT_MS: '17000', PUBLIC_URL: cluster.publicUrl, HOST: '127.0.0.1' });
      // The listening socket, read from /proc/net/tcp (no traffic): 127.0.0.1, not every interface.
      const hexPort = r.port.toString(16).toUpperCase().padStart(4, '0');
      const listening = (await readFile('/proc/net/tcp', 'utf8'))
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A')
        .map((f) => f[1]!.split(':')[0]);
      expect(listening, r.name).toEqual(['0100007F']);
      expect((await readFile('/proc/net/tcp6', 'utf8').catch(() => '')).includes(`:${hexPort} 00000000000000000000000000000000:0000 0A`), r.name).toBe(false);
    }
  });

  it('a gateway brought to a namespace without its search attributes registers them; its calls work at once', async () => {
    const namespace = `byo-${randomBytes(3).toString('hex')}`;
    await run(await resolveTemporalCli(), ['operator', 'namespace', 'create', '--namespace', namespace, '--address', cluster.temporalAddress]);
    await until(
      () => temporalConn.workflowService.describeNamespace({ namespace }).then(() => true, () => false),
      Boolean,
      60_000,
    );
    expect(Object.keys((await temporalConn.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {})).not.toContain('GatewayOrg');
    await ensureDatabase(cluster.postgresAdminUrl, 'byo');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const byo = { email: 'byo@example.test', password: 'bring your own temporal' };
    const proc = runCli(['serve', '--role', 'all'], {
      PORT: String(port),
      DATABASE_URL: cluster.postgresAdminUrl.replace(/\/postgres$/, '/byo'),
      TEMPORAL_ADDRESS: cluster.temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      GATEWAY_MASTER_KEY: randomBytes(32).toString('base64'),
      GATEWAY_ADMIN_EMAIL: byo.email,
      GATEWAY_ADMIN_PASSWORD: byo.password,
      LOG_LEVEL: 'info',
    });
    try {
      await waitForReady(base, proc, 180_000);
      expect(proc.output()).toContain('registered the gateway search attributes');
      const token = (await request(base, 'POST', '/v1/auth/login', undefined, byo)).body.token;
      expect((await request(base, 'POST', '/v1/templates', token, { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
      expect((await request(base, 'POST', '/v1/secrets', token, { name: 'WIDGETS_KEY', value: 'byo-key' })).status).toBe(201);
      const called = await request(base, 'POST', '/v1/actions/call', token, { service: 'widgets', action: 'get_item', params: { id: 'byo-1' } });
      expect(called.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  });

  it('an approval raised through A is listed, resolved and followed (SSE) through B, and executes once', async () => {
    const bot = await agent('cluster-approver-test');
    // Follow the agent's events on B before anything happens.
    const controller = new AbortController();
    const stream = await fetch(`${B.url}/mcp`, { headers: { authorization: `Bearer ${bot.key}`, accept: 'text/event-stream' }, signal: controller.signal });
    expect(stream.status).toBe(200);
    const events: any[] = [];
    const reading = (async () => {
      const parser = new SseParser();
      try {
        for await (const chunk of stream.body!.pipeThrough(new TextDecoderStream())) for (const d of parser.push(chunk)) events.push(JSON.parse(d).params.data);
      } catch {
        /* aborted */
      }
    })();
    try {
      const before = up.requests.length;
      const raised = await at(A, bot.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'cross-replica-approval' } });
      expect(raised.body).toMatchObject({ status: 'pending_approval' });
      const id = raised.body.approval_id;

      const listed = await at(B, owner.token)('GET', '/v1/approvals?scope=actionable&status=pending');
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).toContain(id);
      const resolved = await at(B, owner.token)('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' });
      expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);

      const executed = await until(async () => events.filter((e) => e.approval_id === id).map((e) => e.type), (t) => t.includes('approval.executed'), 60_000);
      expect(executed).toEqual(['approval.resolved', 'approval.executed']);
      const final = await at(B, owner.token)('GET', `/v1/approvals/${id}`);
      expect(final.body.execution).toMatchObject({ status: 'executed', triggered_by: 'auto', http_status_code: 200 });
      // Exactly once at the upstream, even after waiting for stragglers.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(up.requests.slice(before).filter((r) => r.body.includes('cross-replica-approval'))).toHaveLength(1);
    } finally {
      controller.abort();
      await reading;
    }
  });

  it('splits the OAuth dance: authorize on A, token exchange and refresh on B, reuse detection on A', async () => {
    const redirectUri = 'http://127.0.0.1:9/callback';
    const reg = await at(A)('POST', '/oauth/register', { redirect_uris: [redirectUri], client_name: 'Cluster client', token_endpoint_auth_method: 'none' });
    expect(reg.status).toBe(201);
    const clientId = reg.body.client_id;
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      state: 'st-cluster',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const browser = new Browser(A.url, [B.url, cluster.publicUrl]);
    const signIn = pageOf(await browser.follow(`/oauth/authorize?${params}`));
    const consent = pageOf(await browser.submit(signIn, cluster.admin));
    const back = redirectOf(await browser.submit(consent, { decision: 'allow', agent: 'new', name: 'Cluster OAuth agent' }));
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const token = async (r: GatewayReplica, fields: Record<string, string>) => {
      const res = await fetch(`${r.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, ...fields }) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const exchanged = await token(B, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    const me = (r: GatewayReplica, t: string) => at(r, t)('GET', '/v1/identities/me');
    expect((await me(A, exchanged.body.access_token)).status).toBe(200);
    expect((await me(B, exchanged.body.access_token)).status).toBe(200);

    const refreshed = await token(B, { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(exchanged.body.refresh_token);
    expect((await me(A, refreshed.body.access_token)).status).toBe(200);

    // The rotated-away refresh token, replayed on the other replica: detected, the chain revoked.
    const reuse = await token(A, { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await token(B, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token })).body.error).toBe('invalid_grant');
    expect((await me(A, refreshed.body.access_token)).status).toBe(401);
    expect((await me(B, refreshed.body.access_token)).status).toBe(401);
  });

  it('serves one MCP session across both replicas (requests alternate between A and B)', async () => {
    const bot = await agent('cluster-mcp-agent');
    expect((await at(A, owner.token)('POST', `/v1/identities/${bot.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    const served: string[] = [];
    let turn = 0;
    // A round-robin "load balancer" in the client: every HTTP request goes to the next replica.
    const roundRobin: typeof fetch = (input, init) => {
      const target = [A, B][turn++ % 2]!;
      served.push(target.name);
      const url = new URL(input instanceof Request ? input.url : String(input));
      return fetch(`${target.url}${url.pathname}${url.search}`, init);
    };
    const notes: any[] = [];
    const client = new Client({ name: 'cluster-mcp', version: '1.0.0' });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notes.push(n.params.data));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cluster.publicUrl}/mcp`), { fetch: roundRobin, requestInit: { headers: { authorization: `Bearer ${bot.key}` } } }));
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('gateway_call');
      const results: CallToolResult[] = [];
      for (let i = 0; i < 4; i++) results.push((await client.callTool({ name: 'gateway_call', arguments: { service: 'widgets', action: 'get_item', params: { id: `mcp-${i}` } } })) as CallToolResult);
      for (const r of results) expect(r.structuredContent).toMatchObject({ status: 'called', result: { status_code: 200 } });
      const who = (await client.callTool({ name: 'gateway_auth', arguments: { operation: 'whoami' } })) as CallToolResult;
      expect(who.structuredContent).toMatchObject({ identity: { id: bot.id } });
      expect(new Set(served)).toEqual(new Set([A.name, B.name]));
      // An approval raised in this session, resolved by a person: the session's event stream (on
      // whichever replica it opened) hears of it.
      const pending = (await client.callTool({ name: 'gateway_call', arguments: { service: 'widgets', action: 'create_item', params: { name: 'mcp-cluster' } } })) as CallToolResult;
      const id = (pending.structuredContent as any).approval_id;
      expect((await at(B, owner.token)('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
      await until(async () => notes.filter((n) => n.approval_id === id).map((n) => n.type), (t) => t.includes('approval.executed'), 60_000);
    } finally {
      await client.close();
    }
  });

  describe('an OAuth connection to a third party', () => {
    let provider: TestProvider;

    beforeAll(async () => {
      provider = await startOAuthProvider(`${cluster.publicUrl}/v1/connections/callback`);
    });
    afterAll(async () => {
      await provider?.stop();
    });

    it('refreshes once for concurrent calls on both replicas (single flight across processes)', async () => {
      const admin = at(A, adminToken);
      const app = await admin('PUT', '/v1/oauth-apps/acme', {
        client_id: provider.clientId,
        client_secret: provider.clientSecret,
        authorization_url: `${provider.issuer}/auth`,
        token_url: `${provider.issuer}/token`,
        revocation_url: `${provider.issuer}/token/revocation`,
        userinfo_url: `${provider.issuer}/me`,
      });
      expect([200, 201], JSON.stringify(app.body)).toContain(app.status);
      const started = await admin('POST', '/v1/connections', { provider: 'acme', name: 'acme-cluster', scopes: ['openid', 'email'] });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      const id = started.body.connection.id;
      const callback = await authorizeAtProvider(started.body.auth_url, 'alice', `${cluster.publicUrl}/v1/connections/callback`);
      // The provider sends the browser to the public URL; land the callback on B.
      const done = await fetch(B.url + new URL(callback).pathname + new URL(callback).search);
      expect(done.status).toBe(200);
      expect((await at(B, adminToken)('GET', `/v1/connections/${id}`)).body.connection.status).toBe('active');

      await db.query(`UPDATE connections SET token_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      const before = { hits: provider.tokenHits(), refreshes: provider.success.get('refresh_token') ?? 0 };
      const calls = Array.from({ length: 16 }, (_, i) => at(i % 2 ? B : A, adminToken)('POST', '/v1/actions/http', { connection: id, method: 'GET', url: `${provider.issuer}/me` }));
      const results = await Promise.all(calls);
      for (const r of results) expect(r.body, JSON.stringify(r.body)).toMatchObject({ status: 'called', result: { status_code: 200 } });
      expect(provider.tokenHits()).toBe(before.hits + 1);
      expect(provider.success.get('refresh_token') ?? 0).toBe(before.refreshes + 1);
      expect(provider.errors.get('refresh_token') ?? 0).toBe(0);
      expect((await at(B, adminToken)('GET', `/v1/connections/${id}`)).body.connection.refresh_count).toBe(1);
    });
  });

  it('finishes replays in flight on the other worker when one worker is SIGKILLed: none lost, none doubled', async () => {
    // Two agents, so neither goes over the org's cap of pending approvals per agent.
    const bots = [await agent('cluster-worker-kill-1', false), await agent('cluster-worker-kill-2', false)];
    const N = 12;
    const botOf = (i: number) => bots[i % 2]!;
    const raised = await Promise.all(
      Array.from({ length: N }, (_, i) => at(i % 2 ? B : A, botOf(i).key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: `wk-${i}` } })),
    );
    const ids = raised.map((r) => {
      expect(r.body.status).toBe('pending_approval');
      return r.body.approval_id as string;
    });
    for (const id of ids) expect((await at(B, owner.token)('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once' })).status).toBe(200);

    // The upstream holds each request for a second: replays are in flight on both workers.
    up.handle((r, res) => {
      setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true }));
      }, 1_000);
    });
    const hits = () => up.requests.filter((r) => r.body.includes('"wk-')).map((r) => JSON.parse(r.body).name as string);
    const replays = ids.map((id, i) => at(i % 3 ? A : B, botOf(i).key)('POST', '/v1/actions/call', { approval_id: id }));
    await until(async () => hits().length, (n) => n >= 3, 60_000);
    const victim = cluster.workers[0]!;
    const killed = victim.process.pid;
    const died = victim.process.exited;
    process.kill(killed, 'SIGKILL');
    expect(await died).toBeNull();

    // Every execution reaches a final state; the survivor did the work.
    const finals: Array<{ status: string; error: any }> = [];
    for (const id of ids) {
      await until(() => at(B, owner.token)('GET', `/v1/approvals/${id}`), (x) => ['executed', 'failed'].includes(x.body.execution?.status), 180_000);
      finals.push((await db.query<{ status: string; error: any }>('SELECT status, error FROM executions WHERE approval_id = $1', [id])).rows[0]!);
    }
    const answers = await Promise.all(replays);
    for (const [i, a] of answers.entries()) {
      // Each replay got its answer: the result, or the error the execution recorded.
      if (finals[i]!.status === 'executed') expect(a.body).toMatchObject({ status: 'called', result: { status_code: 201 } });
      else expect(a.body.error).toMatchObject({ code: 'outcome_unknown' });
    }
    await new Promise((r) => setTimeout(r, 2_000));
    const sent = hits();
    // Never doubled: each approved call reached the upstream at most once.
    expect(new Set(sent).size).toBe(sent.length);
    const executed = finals.filter((e) => e.status === 'executed');
    const unknown = finals.filter((e) => e.status === 'failed');
    // Never lost: executed ones were sent once; a call whose request was on the dead worker is
    // reported as such (not resent, not left executing).
    expect(executed.length + unknown.length).toBe(N);
    for (const e of unknown) expect(e.error).toMatchObject({ code: 'outcome_unknown', message: expect.stringContaining('may already have reached the upstream') });
    expect(sent.length).toBeGreaterThanOrEqual(executed.length);
    expect(sent.length).toBeLessThanOrEqual(N);
    process.stderr.write(`[worker kill] ${N} replays: ${executed.length} executed, ${unknown.length} reported in flight on the dead worker; upstream received ${sent.length}\n`);

    up.handle((r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, method: r.method, url: r.url }));
    });
    // The cluster starts the killed worker again by itself.
    await until(async () => victim.process.pid !== killed && (await readyz(victim)) === 200, Boolean, 180_000);
  });

  it('keeps working through B when API replica A is SIGKILLed, and loses nothing A accepted', async () => {
    const bot = await agent('cluster-api-kill');
    expect((await at(A, owner.token)('POST', `/v1/identities/${bot.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    // Approvals A accepted before it dies.
    const pending = await Promise.all([1, 2, 3].map((i) => at(A, bot.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: `api-kill-approval-${i}` } })));
    for (const p of pending) expect(p.body.status).toBe('pending_approval');

    // Covered calls in flight at A when it dies: the upstream answers slowly.
    up.handle((r, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, url: r.url }));
      }, 500);
    });
    const inFlight = Array.from({ length: 8 }, (_, i) => at(A, bot.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: `api-kill-${i}` } }).catch((err: Error) => ({ status: 0, body: err.message })));
    await until(async () => up.requests.filter((r) => r.url.includes('api-kill-')).length, (n) => n >= 1, 60_000);
    const killed = A.process.pid;
    const died = A.process.exited;
    process.kill(killed, 'SIGKILL');
    const answered = await Promise.all(inFlight);
    expect(await died).toBeNull();

    // Through B everything keeps working: new calls, and the approvals A raised.
    const viaB = await at(B, bot.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'after-api-kill' } });
    expect(viaB.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    for (const p of pending) expect((await at(B, owner.token)('POST', `/v1/approvals/${p.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    for (const p of pending) {
      await until(() => at(B, owner.token)('GET', `/v1/approvals/${p.body.approval_id}`), (r) => r.body.execution?.status === 'executed', 60_000);
    }

    // Every call A had started (its workflow exists) finished, and reached the upstream once;
    // calls A never started left no trace upstream.
    const rows = (
      await db.query<{ id: string; status: string }>(
        `SELECT id, status FROM calls WHERE requester_id = $1 AND action = 'get_item' AND request_redacted::text NOT LIKE '%after-api-kill%'`,
        [bot.id],
      )
    ).rows;
    let started = 0;
    for (const row of rows) {
      const exists = await temporal.workflow
        .getHandle(callWorkflowId(row.id))
        .describe()
        .then(
          () => true,
          () => false,
        );
      if (!exists) continue;
      started++;
      const done = await until(async () => (await db.query<{ status: string }>('SELECT status FROM calls WHERE id = $1', [row.id])).rows[0]!.status, (s) => s === 'called', 60_000);
      expect(done).toBe('called');
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const upstreamIds = up.requests.filter((r) => /api-kill-\d/.test(r.url)).map((r) => r.url);
    expect(new Set(upstreamIds).size).toBe(upstreamIds.length);
    expect(upstreamIds.length).toBe(started);
    for (const a of answered) if (a.status === 200) expect(a.body.status).toBe('called');
    // At least one call was cut off by the kill (its upstream request was held open), and still ran.
    expect(answered.filter((a) => a.status === 0).length).toBeGreaterThanOrEqual(1);
    expect(started).toBeGreaterThanOrEqual(1);
    process.stderr.write(
      `[api kill] 8 calls in flight at A: ${answered.filter((a) => a.status === 200).length} answered, ${answered.filter((a) => a.status === 0).length} cut off; ` +
        `${started} had started and all completed, upstream received each once (${upstreamIds.length})\n`,
    );
    up.handle((r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, method: r.method, url: r.url }));
    });
    // The cluster starts the killed replica again by itself.
    await until(async () => A.process.pid !== killed && (await readyz(A)) === 200, Boolean, 180_000);
  });

  /** The live process behind a pid, from /proc (empty once it is gone). */
  const commandOf = (pid: number) => readFile(`/proc/${pid}/cmdline`, 'utf8').then((c) => c.replaceAll('\0', ' '), () => '');

  async function freshTemporalAnswers(address: string): Promise<boolean> {
    try {
      const conn = await connectTemporal({ address, connectTimeout: '1 second' });
      try {
        await conn.withDeadline(Date.now() + 1_000, () => conn.workflowService.getSystemInfo({}));
        return true;
      } finally {
        await conn.close();
      }
    } catch {
      return false;
    }
  }

  /** A call through `r` by an agent allowed to make it: the whole path, API replica → Temporal → worker → upstream. */
  async function callThrough(r: GatewayReplica, bot: { key: string }, id: string): Promise<Json> {
    return at(r, bot.key)('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id } });
  }

  /** How long Temporal is stopped, and how soon after it answers again every replica must be ready. */
  const OUTAGE_MS = 50_000;
  const READY_BOUND_S = 10;

  it('starts a SIGKILLed API replica and Temporal server again, saying so on its output', async () => {
    const bot = await agent('cluster-supervised');
    expect((await at(A, owner.token)('POST', `/v1/identities/${bot.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    const replicaPid = B.process.pid;
    const temporalPid = cluster.pids.temporal;
    expect(await commandOf(replicaPid)).toContain('serve --role api');
    expect(await commandOf(temporalPid)).toContain('temporal-server');
    const from = printed.length;
    const printedSince = () => printed.slice(from).join('\n');

    process.kill(replicaPid, 'SIGKILL');
    process.kill(temporalPid, 'SIGKILL');
    await until(async () => (await commandOf(replicaPid)) + (await commandOf(temporalPid)), (left) => left === '', 10_000);

    // Each death is told when it happens, each return once the process is back (a replica: ready).
    await until(async () => printedSince(), (out) => out.includes(`${B.name} is back`) && out.includes('temporal-server is back'), 180_000);
    expect(printedSince()).toContain(`[cluster] ${B.name} (pid ${replicaPid}) exited unexpectedly: restarting it in 0.5 s`);
    expect(printedSince()).toContain(`[cluster] temporal-server (pid ${temporalPid}) exited unexpectedly: restarting it in 0.5 s`);
    expect(printedSince()).toContain(`[cluster] ${B.name} is back (pid ${B.process.pid})`);
    expect(printedSince()).toContain(`[cluster] temporal-server is back (pid ${cluster.pids.temporal})`);
    expect(B.process.pid).not.toBe(replicaPid);
    expect(cluster.pids.temporal).not.toBe(temporalPid);
    expect(await commandOf(B.process.pid)).toContain('serve --role api');
    expect(await commandOf(cluster.pids.temporal)).toContain('temporal-server');

    // The new replica answers, and a call through it goes all the way through the new Temporal server.
    await until(() => readyz(B), (status) => status === 200, 60_000);
    const called = await callThrough(B, bot, 'after-supervised-restart');
    expect(called.body, JSON.stringify(called.body)).toMatchObject({ status: 'called', result: { status_code: 200 } });
  });

  it('every replica is ready again within seconds when Temporal comes back after a long outage', async () => {
    const bot = await agent('cluster-temporal-outage');
    expect((await at(A, owner.token)('POST', `/v1/identities/${bot.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    const replicas = [...cluster.api, ...cluster.workers];
    const from = printed.length;
    const stoppedAt = Date.now();
    await cluster.temporalServer.stop();
    for (const r of replicas) await until(() => readyz(r), (status) => status === 503, 30_000);

    // The outage itself, a fixed time on purpose: it is what is tested. gRPC's default reconnect
    // pause starts at 1 s and grows ×1.6 per failed attempt (±20 %, compounding), up to 120 s; a
    // replica's attempts after a stop were traced at 0, 1, 2.6, 5.6, 9.8, 16.8, 28.6, 46.2 and
    // 73.8 s. By 50 s the pauses are ~20 s long, so a replica usually waits 10–25 s more.
    await new Promise((r) => setTimeout(r, OUTAGE_MS - (Date.now() - stoppedAt)));
    // A deliberate stop restarts nothing.
    expect(await portAcceptsConnections('127.0.0.1', cluster.ports.temporal.frontend)).toBe(false);
    expect(printed.slice(from).join('\n')).not.toContain('temporal-server');

    await cluster.temporalServer.start();
    // Temporal is back when a new client gets an answer from it (a new one: an old connection
    // would wait out its own reconnect pause).
    await until(() => freshTemporalAnswers(cluster.temporalAddress), Boolean, 120_000);
    const back = Date.now();
    const readyAfter = await Promise.all(
      replicas.map(async (r) => {
        await until(() => readyz(r), (status) => status === 200, 120_000);
        return [r.name, (Date.now() - back) / 1000] as const;
      }),
    );
    process.stderr.write(`[temporal outage] ${OUTAGE_MS / 1000} s: ready again ${readyAfter.map(([name, s]) => `${name} ${s.toFixed(1)} s`).join(', ')} after Temporal answered\n`);
    // Before the reconnect pause was capped (at 2 s), on this 2-core machine after a 50 s outage:
    // api 27.5 and 25.4 s, workers 6.4 and 13.2 s (another run: api 12.6 and 12.3 s). The wait
    // depends on where the random pauses fall: simulating gRPC's backoff, one replica waits over
    // 10 s with probability 0.62 after 50 s, so all four replicas are checked (the workers'
    // /readyz uses the same client) and the old code would pass ~2 % of runs. With the cap:
    // 0.2–1.9 s. 10 s leaves room for a busy machine.
    for (const [name, seconds] of readyAfter) expect(seconds, name).toBeLessThan(READY_BOUND_S);
    const called = await callThrough(A, bot, 'after-temporal-outage');
    expect(called.body, JSON.stringify(called.body)).toMatchObject({ status: 'called', result: { status_code: 200 } });
  });
});
