// GET /v1/audit/export against a real gateway and PostgreSQL: more than 10,000 entries (seeded in
// one INSERT … SELECT generate_series), streamed as CSV and JSON Lines; the rows and their content
// match what paging GET /v1/audit with the same filters returns. Bad input is refused with the
// error envelope; visibility is the same as the list's. Names stand beside the ids, read when the
// log is read.
import { randomUUID } from 'node:crypto';
import { auditEntries } from '../support/audit.ts';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_COLUMNS } from '../../core/audit/export-format.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, withPool } from '../support/seed.ts';

const SEEDED = 10_500;

/** The fields of one CSV record (RFC 4180 quoting). */
function csvFields(record: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < record.length; i++) {
    const c = record[i]!;
    if (quoted && c === '"' && record[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c === ',') {
      out.push(field);
      field = '';
    } else {
      field += c;
    }
  }
  out.push(field);
  return out;
}

/** CSV records as raw text: split on CRLF outside quoted fields (one linear pass). */
function csvRecords(text: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '\r' && text[i + 1] === '\n') {
      out.push(text.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

describe('audit export', () => {
  let gw: TestGateway;
  let admin: ReturnType<TestGateway['as']>;
  let member: ReturnType<TestGateway['as']>;
  let agent: ReturnType<TestGateway['as']>;
  let agentId: string;
  let me: { org: { id: string }; identity: { id: string; user_id: string; name: string } };
  /** When the newest seeded entry happened. */
  let firstAt: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    me = (await admin('GET', '/v1/identities/me')).body;
    const m = await seedUser(gw.databaseUrl, { orgId: me.org.id, email: 'mira@example.test' });
    member = gw.as(await gw.login(m.email, m.password));
    const a = await admin('POST', '/v1/identities/agents', { name: 'exporter' });
    expect(a.status).toBe(201);
    agent = gw.as(a.body.key.token);
    agentId = a.body.identity.id;
    // 10,500 entries of the admin's chain, one second apart, alternating outcome and action; every
    // 1,000th has details with separators, quotes and a line break, and a formula-looking action.
    await withPool(gw.databaseUrl, (pool) =>
      pool.query(sql.unsafe`
        INSERT INTO audit_log (org_id, at, event, user_id, identity_chain, service, action, permission_keys, decision, http_status_code, details)
        SELECT ${me.org.id}, now() - (${SEEDED} - g) * interval '1 second', 'call.called', ${me.identity.user_id},
               ARRAY[${me.identity.id}]::uuid[], 'bulk',
               CASE WHEN g % 1000 = 0 THEN '=cmd' WHEN g % 2 = 0 THEN 'get_item' ELSE 'list_items' END,
               ARRAY['bulk:get_item'], CASE WHEN g % 3 = 0 THEN 'denied' ELSE 'covered' END, 200,
               CASE WHEN g % 1000 = 0 THEN jsonb_build_object('note', 'a, "quoted"' || chr(10) || 'line', 'n', g)
                    ELSE jsonb_build_object('n', g) END
        FROM generate_series(1, ${SEEDED}) AS g`),
    );
    firstAt = (await admin('GET', '/v1/audit?service=bulk&limit=1')).body.entries[0].at;
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
  });

  it(`streams all ${SEEDED} entries of a filter as CSV; the rows are the ones GET /v1/audit pages through`, async () => {
    const res = await admin('GET', '/v1/audit/export?service=bulk&format=csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="audit_service-bulk_[0-9TZ-]+\.csv"$/);
    expect(res.headers.get('content-length')).toBeNull(); // written as it is read, not buffered
    const api = await auditEntries(admin, 'service=bulk');
    expect(api.length).toBe(SEEDED);

    const records = csvRecords(res.text);
    expect(records[0]).toBe(CSV_COLUMNS.join(','));
    const ids = records.slice(1).map((r) => Number(r.split(',')[0]));
    expect(ids).toEqual(api.map((e) => e.id));
    // The tricky rows: details quoted with doubled quotes, the formula-looking action neutralised.
    const tricky = records.find((r) => r.includes(',\'=cmd,'));
    expect(tricky).toBeDefined();
    expect(tricky).toContain('""note"":""a, \\""quoted\\""\\nline""');
  });

  it('JSON Lines carries exactly the entries GET /v1/audit returns, in the same order', async () => {
    const query = 'service=bulk&decision=denied';
    const res = await admin('GET', `/v1/audit/export?${query}&format=jsonl`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/filename="audit_service-bulk_decision-denied_.*\.jsonl"/);
    const lines = res.text.split('\n');
    expect(lines.pop()).toBe('');
    const exported = lines.map((l) => JSON.parse(l));
    const api = await auditEntries(admin, query);
    expect(api.length).toBe(Math.floor(SEEDED / 3));
    expect(exported).toEqual(api);
  });

  it('applies the action and time-range filters like the list does', async () => {
    // Entry g (id order) sits at firstAt - (SEEDED - g) s: take SEEDED - g in [100, 599].
    const until = new Date(Date.parse(firstAt) - 99_000).toISOString();
    const since = new Date(Date.parse(firstAt) - 599_000).toISOString();
    const query = `service=bulk&action=get_item&since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;
    const res = await admin('GET', `/v1/audit/export?${query}&format=jsonl`);
    expect(res.status).toBe(200);
    const exported = res.text.trim().split('\n').map((l) => JSON.parse(l) as { id: number; action: string });
    const api = await auditEntries(admin, query);
    let expected = 0;
    for (let g = SEEDED - 599; g <= SEEDED - 100; g++) if (g % 2 === 0 && g % 1000 !== 0) expected++;
    expect(api.length).toBe(expected);
    expect(exported.map((e) => e.id)).toEqual(api.map((e) => e.id));
    expect(new Set(exported.map((e) => e.action))).toEqual(new Set(['get_item']));
  });

  it('shows a member and an agent only their own chains (none of the admin\'s rows), a CSV with only its header', async () => {
    const m = await member('GET', '/v1/audit/export?service=bulk');
    expect(m.status).toBe(200);
    expect(m.text).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    const a = await agent('GET', '/v1/audit/export?service=bulk&format=jsonl');
    expect(a.status).toBe(200);
    expect(a.text).toBe('');
  });

  it('refuses bad input with the error envelope', async () => {
    const cases: [string, string][] = [
      ['format=xml', 'format'],
      ['format=csv&limit=5', 'limit'],
      ['cursor=abc', 'cursor'],
      ['identity=not-a-uuid', 'identity'],
      ['since=yesterday', 'since'],
      ['since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
      ['service=', 'service'],
    ];
    for (const [query, field] of cases) {
      const r = await admin('GET', `/v1/audit/export?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.error.code, query).toBe('invalid_request');
      expect(JSON.stringify(r.body.error), query).toContain(field);
      expect(r.headers.get('content-disposition'), query).toBeNull();
    }
    expect((await gw.request('GET', '/v1/audit/export')).status).toBe(401);
  });

  it('names the user, the actor and each identity of the chain beside their ids, as they are when read (null when unknown)', async () => {
    // A subagent whose name needs CSV quoting, and an id no identity has.
    const sub = await agent('POST', '/v1/identities/agents', { name: 'scout, "the second"' });
    expect(sub.status).toBe(201);
    const subId: string = sub.body.identity.id;
    const ghost = randomUUID();
    await withPool(gw.databaseUrl, (pool) =>
      pool.query(sql.unsafe`
        INSERT INTO audit_log (org_id, event, user_id, actor_id, identity_chain, service, action, decision)
        VALUES (${me.org.id}, 'approval.raised', ${me.identity.user_id}, ${subId}, ARRAY[${subId}, ${agentId}, ${me.identity.id}]::uuid[], 'names', 'by_sub', 'pending'),
               (${me.org.id}, 'call.denied', ${me.identity.user_id}, ${ghost}, ARRAY[${ghost}, ${me.identity.id}]::uuid[], 'names', 'by_ghost', 'denied')`),
    );
    const list = (await admin('GET', '/v1/audit?service=names')).body.entries;
    expect(list.map((e: { action: string }) => e.action)).toEqual(['by_ghost', 'by_sub']);
    expect(list[1]).toMatchObject({
      user_id: me.identity.user_id, user_name: me.identity.name,
      actor_id: subId, actor_name: 'scout, "the second"',
      identity_chain: [subId, agentId, me.identity.id], identity_chain_names: ['scout, "the second"', 'exporter', me.identity.name],
    });
    expect(list[0]).toMatchObject({ actor_id: ghost, actor_name: null, identity_chain: [ghost, me.identity.id], identity_chain_names: [null, me.identity.name] });

    // Renamed: the log, which stores ids, reads with the new name.
    expect((await admin('PATCH', `/v1/identities/${agentId}`, { name: 'exporter-renamed' })).status).toBe(200);
    const renamed = (await admin('GET', '/v1/audit?service=names&action=by_sub')).body.entries[0];
    expect(renamed.identity_chain_names).toEqual(['scout, "the second"', 'exporter-renamed', me.identity.name]);

    // JSON Lines carries the same entries; CSV has the names beside the ids, the chain's as JSON.
    const jsonl = await admin('GET', '/v1/audit/export?service=names&format=jsonl');
    expect(jsonl.text.trim().split('\n').map((l) => JSON.parse(l))).toEqual(await auditEntries(admin, 'service=names'));
    const [header, ...rows] = csvRecords((await admin('GET', '/v1/audit/export?service=names&format=csv')).text).map(csvFields);
    const column = (row: string[], name: string) => row[header!.indexOf(name)];
    expect(header!.slice(3, 9)).toEqual(['user_id', 'user_name', 'actor_id', 'actor_name', 'identity_chain', 'identity_chain_names']);
    const [ghostRow, subRow] = rows;
    expect(column(subRow!, 'user_name')).toBe(me.identity.name);
    expect(column(subRow!, 'actor_name')).toBe('scout, "the second"');
    expect(column(subRow!, 'identity_chain')).toBe(`${subId} ${agentId} ${me.identity.id}`);
    expect(JSON.parse(column(subRow!, 'identity_chain_names')!)).toEqual(['scout, "the second"', 'exporter-renamed', me.identity.name]);
    expect(column(ghostRow!, 'actor_name')).toBe('');
    expect(JSON.parse(column(ghostRow!, 'identity_chain_names')!)).toEqual([null, me.identity.name]);
  });

  it('the list takes the same outcome filter', async () => {
    const r = await admin('GET', '/v1/audit?service=bulk&decision=covered&limit=5');
    expect(r.status).toBe(200);
    expect(r.body.entries).toHaveLength(5);
    expect(r.body.entries.every((e: { decision: string }) => e.decision === 'covered')).toBe(true);
  });
});
