// A vault secret can only go where it is meant to (issue 12): per-call secret injection on raw HTTP
// is bound to the secret's allowed_hosts, is part of what is permitted (`secret:<NAME>:<host>`) and
// of what is approved (permission_keys, suggested_tiers, description, disclosed, audit, webhooks),
// and a member's calls cannot inject another member's own secret.
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { historyText } from '../support/history.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const PLANT = 'plant-KNOWN-exfil-value-4242';
const ORG_VALUE = 'org-KNOWN-value-1717';
const A_VALUE = 'member-a-KNOWN-value-2828';
const B_VALUE = 'member-b-KNOWN-value-3939';

describe('secret injection: hosts, permission and approval, ownership', () => {
  let gw: TestGateway;
  let up: Upstream;
  let hooks: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let agentId: string;
  let agentKey: string;

  beforeAll(async () => {
    up = await startUpstream();
    hooks = await startUpstream();
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1,localhost' } });
    admin = gw.as(gw.adminToken);
    const agent = await admin('POST', '/v1/identities/agents', { name: 'exfiltrator' });
    agentId = agent.body.identity.id;
    agentKey = agent.body.key.token;
    // The host-only rule of the report: every GET under /exfil/ on the agent's own server.
    expect((await admin('POST', `/v1/identities/${agentId}/rules`, { effect: 'allow', pattern: `http:GET:127.0.0.1:${up.port}/exfil/*` })).status).toBe(201);
    expect((await admin('POST', '/v1/webhooks', { url: `${hooks.url}/hook`, events: ['approval.raised'] })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
    await hooks?.close();
  });

  const exfil = (token: string, path = `/exfil/grab`) =>
    gw.as(token)('POST', '/v1/actions/call', {
      service: 'http',
      method: 'GET',
      path: `http://127.0.0.1:${up.port}${path}`,
      secret: { name: 'PLANT_KEY', in: 'header', param: 'X-Api-Key' },
    });

  it('validates allowed_hosts and shows them (never the value)', async () => {
    const bad = await admin('POST', '/v1/secrets', { name: 'BAD_HOSTS', value: 'x', allowed_hosts: ['https://evil.example.com/path'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('allowed_hosts');
    expect((await admin('POST', '/v1/secrets', { name: 'BAD_HOSTS', value: 'x', allowed_hosts: ['*.com'] })).status).toBe(400);
    expect((await admin('GET', '/v1/secrets')).body.secrets.some((s: any) => s.name === 'BAD_HOSTS')).toBe(false);
    const ok = await admin('POST', '/v1/secrets', { name: 'HOSTED', value: 'hosted-value', allowed_hosts: ['API.Example.com', '*.example.org'] });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ name: 'HOSTED', scope: 'org', owner_id: null, allowed_hosts: ['api.example.com', '*.example.org'] });
    // Rotation keeps the list unless given; null clears it (service templates only).
    expect((await admin('POST', '/v1/secrets', { name: 'HOSTED', value: 'hosted-2' })).body.allowed_hosts).toEqual(['api.example.com', '*.example.org']);
    expect((await admin('POST', '/v1/secrets', { name: 'HOSTED', value: 'hosted-3', allowed_hosts: null })).body.allowed_hosts).toBeNull();
    const read = await admin('GET', `/v1/secrets/${ok.body.id}`);
    expect(read.body.allowed_hosts).toBeNull();
    expect(read.text).not.toContain('hosted-');
  });

  it('refuses the exfiltration before anything is sent: no allowed_hosts, or a host outside them', async () => {
    expect((await admin('POST', '/v1/secrets', { name: 'PLANT_KEY', value: PLANT })).status).toBe(201);
    const before = up.requests.length;
    const noList = await exfil(agentKey);
    expect(noList.status, noList.text).toBe(403);
    expect(noList.body.error).toMatchObject({ code: 'secret_not_allowed_for_host', details: { secret_name: 'PLANT_KEY', host: '127.0.0.1' } });
    expect((await admin('POST', '/v1/secrets', { name: 'PLANT_KEY', value: PLANT, allowed_hosts: ['api.partner.example'] })).status).toBe(200);
    const elsewhere = await exfil(agentKey);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.code).toBe('secret_not_allowed_for_host');
    // A person is refused too: the binding is the secret's, not the caller's.
    expect((await exfil(gw.adminToken)).body.error.code).toBe('secret_not_allowed_for_host');
    expect(up.requests.length).toBe(before);
    expect(noList.text + elsewhere.text).not.toContain(PLANT);
  });

  it('with the host allowed but no rule for the secret key, raises an approval that names the secret everywhere', async () => {
    expect((await admin('POST', '/v1/secrets', { name: 'PLANT_KEY', value: PLANT, allowed_hosts: ['127.0.0.1'] })).status).toBe(200);
    const before = up.requests.length;
    const res = await exfil(agentKey);
    expect(res.status, res.text).toBe(202);
    const secretKey = `secret:PLANT_KEY:127.0.0.1:${up.port}`;
    expect(res.body).toMatchObject({
      status: 'pending_approval',
      permission_keys: [`http:GET:127.0.0.1:${up.port}/exfil/grab`, secretKey],
      action_description: `GET http://127.0.0.1:${up.port}/exfil/grab with secret PLANT_KEY in header X-Api-Key`,
    });
    expect(res.body.suggested_tiers.map((t: any) => t.keys)).toEqual([
      [`http:GET:127.0.0.1:${up.port}/exfil/grab`, secretKey],
      [`http:GET:127.0.0.1:${up.port}/*`, 'secret:PLANT_KEY:*'],
      [`http:ANY:127.0.0.1:${up.port}/*`, 'secret:PLANT_KEY:*'],
    ]);
    expect(res.body.suggested_tiers[1].description).toContain('Secret PLANT_KEY toward any of its allowed hosts');
    expect(up.requests.length).toBe(before);

    const record = await admin('GET', `/v1/approvals/${res.body.approval_id}`);
    expect(record.body.permission_keys).toContain(secretKey);
    expect(record.body.action.description).toContain('with secret PLANT_KEY in header X-Api-Key');
    expect(record.body.action.disclosed).toEqual([{ label: 'Injected secret', value: 'PLANT_KEY in header X-Api-Key' }]);
    expect(record.body.action.request.secret).toEqual({ name: 'PLANT_KEY', in: 'header', param: 'X-Api-Key' });

    const audit = await until(
      () => admin('GET', '/v1/audit?event=approval.raised&limit=200'),
      (r) => r.body.entries.some((e: any) => e.approval_id === res.body.approval_id),
    );
    const raised = audit.body.entries.find((e: any) => e.approval_id === res.body.approval_id);
    expect(raised.permission_keys).toContain(secretKey);
    expect(raised.details.secrets).toEqual([{ name: 'PLANT_KEY', host: `127.0.0.1:${up.port}` }]);

    const hook = await until(
      async () => hooks.requests.map((r) => JSON.parse(r.body)).find((b) => b.type === 'approval.raised' && b.data.approval_id === res.body.approval_id),
      (b) => b !== undefined,
      60_000,
    );
    expect(hook.data.secrets).toEqual([{ name: 'PLANT_KEY', host: `127.0.0.1:${up.port}` }]);
    expect(hook.data.permission_keys).toContain(secretKey);
    expect(hook.data.action_description).toContain('with secret PLANT_KEY in header X-Api-Key');

    const everything = JSON.stringify([res.body, record.body, audit.body]) + hooks.requests.map((r) => r.body).join('');
    expect(everything).not.toContain(PLANT);
    expect((await admin('POST', `/v1/approvals/${res.body.approval_id}/resolve`, { decision: 'deny', reason: 'no' })).status).toBe(200);
    expect(up.requests.length).toBe(before);
  });

  it('runs once the secret key is allowed too, and a redirect off the origin drops the credential', async () => {
    expect((await admin('POST', `/v1/identities/${agentId}/rules`, { effect: 'allow', pattern: 'secret:PLANT_KEY:*' })).status).toBe(201);
    const before = up.requests.length;
    const res = await gw.as(agentKey)('POST', '/v1/actions/call', {
      service: 'http',
      method: 'GET',
      path: `http://127.0.0.1:${up.port}/exfil/ok`,
      secret: { name: 'PLANT_KEY', in: 'header', param: 'X-Plant' },
    });
    expect(res.body.status, res.text).toBe('called');
    expect(up.requests[before]!.headers['x-plant']).toBe(PLANT);
    expect(res.text).not.toContain(PLANT);

    // 127.0.0.1 → localhost is another origin: the custom credential header must not follow.
    up.handle((r, reply) => {
      if (r.url.startsWith('/exfil/bounce')) {
        reply.writeHead(302, { location: `http://localhost:${up.port}/landing` });
        return reply.end();
      }
      reply.writeHead(200, { 'content-type': 'application/json' });
      reply.end('{"landed":true}');
    });
    const bounced = await gw.as(agentKey)('POST', '/v1/actions/call', {
      service: 'http',
      method: 'GET',
      path: `http://127.0.0.1:${up.port}/exfil/bounce`,
      secret: { name: 'PLANT_KEY', in: 'header', param: 'X-Plant' },
    });
    expect(bounced.body.status, bounced.text).toBe('called');
    const landing = up.requests.filter((r) => r.url === '/landing').at(-1)!;
    expect(landing.headers['x-plant']).toBeUndefined();
    expect(gw.logs.join('\n')).not.toContain(PLANT);
  });

  it('a secret without allowed_hosts (as every secret after the migration) still serves its service template', async () => {
    const widgets = await startUpstream();
    try {
      expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', widgets.url) })).status).toBe(201);
      expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'widgets-KNOWN-5151' })).status).toBe(201);
      const res = await admin('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'w1' } });
      expect(res.body.status, res.text).toBe('called');
      expect(widgets.requests.at(-1)!.headers['x-api-key']).toBe('widgets-KNOWN-5151');
      const raw = await admin('POST', '/v1/actions/call', {
        service: 'http',
        method: 'GET',
        path: `${widgets.url}/items/w1`,
        secret: { name: 'WIDGETS_KEY', in: 'header', param: 'X-Api-Key' },
      });
      expect(raw.body.error.code).toBe('secret_not_allowed_for_host');
    } finally {
      await widgets.close();
    }
  });

  describe('who may inject a secret', () => {
    // Rows: the caller. Columns: the secret. Cells: whether the raw call with that secret runs.
    const MATRIX: Record<string, Record<'ORG_KEY' | 'A_KEY' | 'B_KEY', boolean>> = {
      'member A': { ORG_KEY: true, A_KEY: true, B_KEY: false },
      "member A's agent": { ORG_KEY: true, A_KEY: true, B_KEY: false },
      "member A's subagent": { ORG_KEY: true, A_KEY: true, B_KEY: false },
      'member B': { ORG_KEY: true, A_KEY: false, B_KEY: true },
      "member B's agent": { ORG_KEY: true, A_KEY: false, B_KEY: true },
      admin: { ORG_KEY: true, A_KEY: false, B_KEY: false },
    };
    const tokens: Record<string, string> = {};

    beforeAll(async () => {
      const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
      const a = await seedUser(gw.databaseUrl, { orgId, email: 'member-a@example.test' });
      const b = await seedUser(gw.databaseUrl, { orgId, email: 'member-b@example.test' });
      tokens['member A'] = await gw.login(a.email, a.password);
      tokens['member B'] = await gw.login(b.email, b.password);
      tokens.admin = gw.adminToken;
      const hosts = ['localhost'];
      expect((await admin('POST', '/v1/secrets', { name: 'ORG_KEY', value: ORG_VALUE, allowed_hosts: hosts })).status).toBe(201);
      expect((await gw.as(tokens['member A']!)('POST', '/v1/secrets', { name: 'A_KEY', value: A_VALUE, allowed_hosts: hosts, scope: 'user' })).status).toBe(201);
      expect((await gw.as(tokens['member B']!)('POST', '/v1/secrets', { name: 'B_KEY', value: B_VALUE, allowed_hosts: hosts, scope: 'user' })).status).toBe(201);
      for (const who of ['A', 'B'] as const) {
        const human = gw.as(tokens[`member ${who}`]!);
        const agent = await human('POST', '/v1/identities/agents', { name: `agent of ${who}` });
        tokens[`member ${who}'s agent`] = agent.body.key.token;
        for (const pattern of ['http:*:*', 'secret:*:*']) {
          expect((await human('POST', `/v1/identities/${agent.body.identity.id}/rules`, { effect: 'allow', pattern })).status).toBe(201);
        }
        if (who === 'A') {
          const sub = await gw.as(agent.body.key.token)('POST', '/v1/identities/agents', { name: 'sub of A', parent_id: agent.body.identity.id, inherit_permissions: true });
          expect(sub.status, sub.text).toBe(201);
          tokens["member A's subagent"] = sub.body.key.token;
        }
      }
    });

    it('own and org secrets: yes; another member\'s own secret: no (and it is not even visible)', async () => {
      const seen: string[] = [];
      for (const [caller, row] of Object.entries(MATRIX)) {
        for (const [name, allowed] of Object.entries(row)) {
          const before = up.requests.length;
          const res = await gw.as(tokens[caller]!)('POST', '/v1/actions/call', {
            service: 'http',
            method: 'GET',
            path: `http://localhost:${up.port}/who`,
            secret: { name, in: 'header', param: 'X-Who' },
          });
          const ctx = `${caller} injecting ${name} → ${res.status} ${res.text.slice(0, 300)}`;
          if (allowed) {
            expect(res.body.status, ctx).toBe('called');
            expect(up.requests[before]!.headers['x-who'], ctx).toBe({ ORG_KEY: ORG_VALUE, A_KEY: A_VALUE, B_KEY: B_VALUE }[name]);
          } else {
            expect(res.status, ctx).toBe(424);
            expect(res.body.error.code, ctx).toBe('credential_missing');
            expect(up.requests.length, ctx).toBe(before);
          }
          seen.push(res.text);
        }
      }
      for (const v of [ORG_VALUE, A_VALUE, B_VALUE]) expect(seen.join('')).not.toContain(v);
      const listed = (t: string) => gw.as(t)('GET', '/v1/secrets').then((r) => r.body.secrets.map((s: any) => s.name));
      expect(await listed(tokens['member B']!)).not.toContain('A_KEY');
      expect(await listed(tokens['member B']!)).toContain('ORG_KEY');
      expect(await listed(tokens['member A']!)).toContain('A_KEY');
      expect(await listed(gw.adminToken)).toEqual(expect.arrayContaining(['A_KEY', 'B_KEY', 'ORG_KEY']));
      // Another member cannot rotate it either, nor take its name.
      const takeover = await gw.as(tokens['member B']!)('POST', '/v1/secrets', { name: 'A_KEY', value: 'mine now' });
      expect(takeover.status).toBe(409);
    });
  });

  it('leaves no plaintext of any injected secret in the database, the call histories or the logs', async () => {
    const tables = await gw.pool.anyFirst(sql.type(z.object({ table_name: z.string() }))`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
    const rows: string[] = [];
    for (const table of tables) {
      rows.push(...(await gw.pool.anyFirst(sql.type(z.object({ row: z.string() }))`SELECT t::text AS row FROM ${sql.identifier(['public', table])} t`)));
    }
    const callIds = await gw.pool.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM calls`);
    expect(callIds.length).toBeGreaterThanOrEqual(15);
    const histories: string[] = [];
    for (const id of callIds) histories.push(historyText(await gw.temporal.workflow.getHandle(callWorkflowId(id)).fetchHistory()));
    for (const value of [PLANT, ORG_VALUE, A_VALUE, B_VALUE]) {
      for (const needle of [value, Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')]) {
        expect(rows.filter((r) => r.includes(needle)), needle).toEqual([]);
        expect(histories.filter((h) => h.includes(needle)), needle).toEqual([]);
        expect(gw.logs.filter((l) => l.includes(needle)), needle).toEqual([]);
      }
    }
  });
});
