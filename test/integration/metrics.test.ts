// /metrics of a real `gateway serve` (issue 45): each counter moves by exactly what the calls did
// — covered, approved, denied, expired, a notice that fails for good — and the Temporal worker's
// own series (`temporal_*`) come through the same listener. Only loopback servers are involved.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { apiClient, gatewayEnv, setUpTenant, startServe, stopGently, type Api, type Tenant } from '../support/gateway-process.ts';
import type { CliProcess } from '../support/processes.ts';
import { parseExposition, valueOf, type Sample } from '../support/prometheus.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const RATE = 20;

describe('GET /metrics', () => {
  let up: Upstream;
  let proc: CliProcess | undefined;
  let api: Api;
  let t: Tenant;
  let metricsUrl: string;

  const scrape = async (): Promise<Sample[]> => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return parseExposition(await res.text());
  };
  const call = async (token: string, name: string) => (await api(token, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } })).body;
  const calls = (s: Sample[], outcome: string, path: string) => valueOf(s, 'gateway_calls_total', { action: 'create_item', outcome, path });

  beforeAll(async () => {
    up = await startUpstream();
    const [port, metricsPort] = [await freePort(), await freePort()];
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const databaseUrl = await createTestDatabase();
    const env = gatewayEnv(port, {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      METRICS_PORT: String(metricsPort),
      // One attempt per notice: a delivery to a closed port fails for good at once.
      GATEWAY_NOTICE_MAX_ATTEMPTS: '1',
      GATEWAY_RATE_LIMIT_PER_MINUTE: String(RATE),
    });
    proc = await startServe(env);
    const base = `http://127.0.0.1:${port}`;
    api = apiClient(base);
    t = await setUpTenant(base, env, databaseUrl, up.url);
    expect((await api(t.adminToken, 'PATCH', '/v1/org/settings', { max_pending_per_agent: 100 })).status).toBe(200);
  }, 240_000);
  afterAll(async () => {
    await stopGently(proc);
    await up?.close();
  });

  it('counts covered, approved, denied and expired calls, each once, with the approvals and histograms they moved', async () => {
    const before = await scrape();

    // Approved: the auto agent's call is allowed and sent on the allow (path `approved`).
    const approved = await call(t.auto, 'approved-one');
    expect(approved.status).toBe('pending_approval');
    const allowed = await api(t.ownerToken, 'POST', `/v1/approvals/${approved.approval_id}/resolve`, { decision: 'allow_once' });
    expect(allowed.status).toBe(200);
    await until(scrape, (s) => calls(s, 'called', 'approved') - calls(before, 'called', 'approved') === 1, 30_000);

    // Denied (the manual agent: path `resumed`).
    const denied = await call(t.manual, 'denied-one');
    expect((await api(t.ownerToken, 'POST', `/v1/approvals/${denied.approval_id}/resolve`, { decision: 'deny' })).status).toBe(200);

    // Covered: an allow remembered as a rule, then another call the rule covers.
    const remembered = await call(t.auto, 'remembered');
    const rule = await api(t.ownerToken, 'POST', `/v1/approvals/${remembered.approval_id}/resolve`, { decision: 'allow_always', remember_keys: ['widgets:create_item:*'], ttl: '1h' });
    expect(rule.status).toBe(200);
    const autoId = (await api(t.auto, 'GET', '/v1/identities/me')).body.identity.id;
    await until(() => api(t.ownerToken, 'GET', `/v1/identities/${autoId}/rules`), (r) => r.body.rules?.some((x: { source: string }) => x.source === 'approval'), 30_000);
    const covered = await call(t.auto, 'covered');
    expect(covered.status).toBe('called');

    // Expired: an approval TTL of a few seconds.
    expect((await api(t.adminToken, 'PATCH', '/v1/org/settings', { approval_ttl_seconds: 3 })).status).toBe(200);
    const expiring = await call(t.manual, 'expires');
    expect((await api(t.adminToken, 'PATCH', '/v1/org/settings', { approval_ttl_seconds: 900 })).status).toBe(200);
    await until(() => api(t.ownerToken, 'GET', `/v1/approvals/${expiring.approval_id}`), (r) => r.body.status === 'expired', 30_000);

    const after = await until(scrape, (s) => calls(s, 'called', 'approved') - calls(before, 'called', 'approved') === 2 && calls(s, 'expired', 'resumed') > calls(before, 'expired', 'resumed'), 30_000);
    const moved = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);

    expect(calls(after, 'called', 'covered') - calls(before, 'called', 'covered')).toBe(1);
    // The approved-one and the call whose allow was remembered.
    expect(calls(after, 'called', 'approved') - calls(before, 'called', 'approved')).toBe(2);
    expect(calls(after, 'denied', 'resumed') - calls(before, 'denied', 'resumed')).toBe(1);
    expect(calls(after, 'expired', 'resumed') - calls(before, 'expired', 'resumed')).toBe(1);
    expect(moved('gateway_calls_total')).toBe(5);
    expect(moved('gateway_approvals_raised_total')).toBe(4);
    expect(moved('gateway_approvals_decided_total', { decision: 'allow', channel: 'api' })).toBe(1);
    expect(moved('gateway_approvals_decided_total', { decision: 'allow_remember', channel: 'api' })).toBe(1);
    expect(moved('gateway_approvals_decided_total', { decision: 'deny', channel: 'api' })).toBe(1);
    expect(moved('gateway_approvals_expired_total')).toBe(1);
    expect(moved('gateway_approval_decision_seconds_count')).toBe(3);
    // Three requests left (two approved, one covered): each one's upstream time was observed.
    expect(moved('gateway_upstream_seconds_count')).toBe(3);
    expect(moved('gateway_upstream_seconds_count', { path: 'covered' })).toBe(1);
    // The covered call answered synchronously: its overhead was observed once.
    expect(moved('gateway_overhead_seconds_count', { path: 'covered' })).toBe(1);
    expect(moved('gateway_outbound_errors_total')).toBe(0);
    expect(valueOf(after, 'gateway_approvals_pending')).toBe(0);
    expect(valueOf(after, 'gateway_db_pool_connections', { state: 'idle' }) + valueOf(after, 'gateway_db_pool_connections', { state: 'acquired' })).toBeGreaterThan(0);
    // Label sets are bounded: no ids or free text in any label value.
    for (const s of after.filter((x) => x.name.startsWith('gateway_'))) {
      for (const v of Object.values(s.labels)) expect(v).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-|approved-one|denied-one/);
    }
  }, 180_000);

  it('counts a notice that failed for good, and a rate-limit refusal', async () => {
    const closedPort = await freePort();
    const channel = await api(t.adminToken, 'POST', '/v1/notification-channels', {
      kind: 'email',
      name: 'Email nobody answers',
      email: { host: '127.0.0.1', port: closedPort, starttls: false, from: 'gateway@example.test' },
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(201);
    const before = await scrape();
    const raised = await call(t.manual, 'noticed');
    expect(raised.status).toBe('pending_approval');
    const failed = (s: Sample[]) => valueOf(s, 'gateway_notice_deliveries_total', { outcome: 'failed' }) - valueOf(before, 'gateway_notice_deliveries_total', { outcome: 'failed' });
    const after = await until(scrape, (s) => failed(s) >= 1, 60_000);
    expect(failed(after)).toBe(1);
    expect(valueOf(after, 'gateway_notice_deliveries_total', { outcome: 'delivered' }) - valueOf(before, 'gateway_notice_deliveries_total', { outcome: 'delivered' })).toBe(0);
    expect(valueOf(after, 'gateway_approvals_pending')).toBe(1);

    // A fresh agent's bucket holds RATE tokens: resumes of an unknown approval each take one
    // (and answer 404), the next is refused.
    const agent = (await api(t.ownerToken, 'POST', '/v1/identities/agents', { name: 'limited' })).body.key.token as string;
    const resume = () => api(agent, 'POST', '/v1/actions/call', { approval_id: '00000000-0000-4000-8000-000000000000' });
    for (let i = 0; i < RATE; i += 1) expect((await resume()).status).toBe(404);
    expect((await resume()).status).toBe(429);
    const limited = await scrape();
    expect(valueOf(limited, 'gateway_rate_limit_refusals_total') - valueOf(after, 'gateway_rate_limit_refusals_total')).toBe(1);
  }, 120_000);

  it('serves the Temporal worker’s own series on the same listener, and nothing else there', async () => {
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toMatch(/^temporal_\w+/m);
    expect(text).toMatch(/^gateway_process_\w+/m);
    expect((await fetch(metricsUrl.replace('/metrics', '/v1/identities/me'))).status).toBe(404);
    // Every metric the Grafana dashboard queries is one this gateway declares (a labelled counter
    // nothing moved yet has its # TYPE line and no sample).
    const dashboard = await readFile(path.resolve(import.meta.dirname, '..', '..', 'deploy', 'grafana-dashboard.json'), 'utf8');
    const queried = new Set((dashboard.match(/\b(?:gateway|temporal)_[a-z0-9_]+/g) ?? []).map((n) => n.replace(/_(?:bucket|sum|count)$/, '')));
    const served = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    expect([...queried].filter((name) => !served.has(name))).toEqual([]);
  });
});
