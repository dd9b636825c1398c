// The export's fast path (issue 46: stored columns only, rows checked once per batch, names looked
// up once per export) writes byte for byte what the list's path gives: GET /v1/audit's entries
// (names read per row by the list's statement) written with the same line formats are the oracle.
// Also: the export's statement reads no identities; the names come from one lookup of their ids.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvHeader, csvLine, jsonLine, type ExportEntry } from '../../core/audit/export-format.ts';
import { EXPORT_BATCH } from '../../server/audit/service.ts';
import { auditExportRowsQuery, auditRowsQuery, type AuditFilter } from '../../server/audit/store.ts';
import { auditEntries } from '../support/audit.ts';
import { explainAnalyze, scansOf } from '../support/explain.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, withPool } from '../support/seed.ts';

/** More than two batches, so names met in one batch are reused in the next. */
const SEEDED = EXPORT_BATCH * 2 + 137;

describe('audit export bytes', () => {
  let gw: TestGateway;
  let admin: ReturnType<TestGateway['as']>;
  let agent: ReturnType<TestGateway['as']>;
  let orgId: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const me = (await admin('GET', '/v1/identities/me')).body;
    orgId = me.org.id;
    const a = await admin('POST', '/v1/identities/agents', { name: 'exporter ✓' });
    expect(a.status).toBe(201);
    agent = gw.as(a.body.key.token);
    const agentId: string = a.body.identity.id;
    const sub = await agent('POST', '/v1/identities/agents', { name: '=scout, "the second"\nline' });
    expect(sub.status).toBe(201);
    const subId: string = sub.body.identity.id;
    // Someone of another org: their id in this org's log reads with no name, as does an unknown id.
    const stranger = await seedUser(gw.databaseUrl, { email: 'stranger@example.test' });
    const ghost = randomUUID();
    // Four shapes of row in turn: a subagent's chain, an unknown actor, another org's identity in
    // the chain, and a row with no user, actor or chain; texts that need escaping in JSON and CSV.
    await withPool(gw.databaseUrl, (pool) =>
      pool.query(sql.unsafe`
        INSERT INTO audit_log (org_id, at, event, user_id, actor_id, identity_chain, service, action, permission_keys, decision,
                               call_id, approval_id, execution_id, http_status_code, details, request_id)
        SELECT ${orgId}, now() - (${SEEDED} - g) * interval '1 second' + (g % 7) * interval '1 microsecond',
               CASE g % 4 WHEN 3 THEN 'member.invited' ELSE 'call.called' END,
               CASE g % 4 WHEN 3 THEN NULL ELSE ${me.identity.user_id}::uuid END,
               CASE g % 4 WHEN 0 THEN ${subId}::uuid WHEN 1 THEN ${ghost}::uuid WHEN 2 THEN ${agentId}::uuid END,
               CASE g % 4 WHEN 0 THEN ARRAY[${subId}, ${agentId}, ${me.identity.id}]::uuid[]
                          WHEN 1 THEN ARRAY[${ghost}, ${me.identity.id}]::uuid[]
                          WHEN 2 THEN ARRAY[${stranger.userId}, ${agentId}, ${me.identity.id}]::uuid[]
                          ELSE '{}'::uuid[] END,
               CASE WHEN g % 5 = 0 THEN NULL ELSE 'bytes' END,
               CASE WHEN g % 11 = 0 THEN '@sum(A1)' WHEN g % 2 = 0 THEN 'get "item"' ELSE 'list, all' END,
               CASE WHEN g % 4 = 3 THEN '{}'::text[] ELSE ARRAY['bytes:get_item', 'bytes:list'] END,
               CASE WHEN g % 3 = 0 THEN NULL ELSE 'covered' END,
               CASE WHEN g % 2 = 0 THEN md5('call' || g)::uuid END, CASE WHEN g % 3 = 0 THEN md5('approval' || g)::uuid END,
               CASE WHEN g % 6 = 0 THEN md5('execution' || g)::uuid END, CASE WHEN g % 2 = 0 THEN 200 + g % 300 END,
               jsonb_build_object('n', g, 'note', 'é, "quoted"' || chr(10) || E'tab\\there', 'nested', jsonb_build_object('ok', g % 2 = 0, 'x', 1.5)),
               CASE WHEN g % 9 = 0 THEN 'req-' || g END
        FROM generate_series(1, ${SEEDED}) AS g`),
    );
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
  });

  /** The list's entries, newest first, as the export writes them in `format`. */
  async function oracle(as: ReturnType<TestGateway['as']>, format: 'csv' | 'jsonl'): Promise<string> {
    const entries = (await auditEntries(as, '')) as unknown as ExportEntry[];
    return format === 'csv' ? csvHeader() + entries.map(csvLine).join('') : entries.map(jsonLine).join('');
  }

  it(`writes the ${SEEDED} rows as JSON Lines and CSV byte for byte like the list's entries`, async () => {
    for (const format of ['jsonl', 'csv'] as const) {
      const res = await admin('GET', `/v1/audit/export?format=${format}`);
      expect(res.status).toBe(200);
      const expected = await oracle(admin, format);
      expect(expected.length).toBeGreaterThan(SEEDED * 100);
      expect(res.text === expected, format).toBe(true);
    }
  });

  it('an agent sees the same bytes as its list (its own chains only)', async () => {
    for (const format of ['jsonl', 'csv'] as const) {
      const res = await agent('GET', `/v1/audit/export?format=${format}`);
      expect(res.status).toBe(200);
      const expected = await oracle(agent, format);
      expect(expected.split('\n').length).toBeGreaterThan(EXPORT_BATCH);
      expect(res.text === expected, format).toBe(true);
    }
  });

  it('an export batch reads no identity per row: its statement reads only audit_log', async () => {
    const filter: AuditFilter = { orgId, visibleTo: 'org' };
    const page = { below: null, limit: EXPORT_BATCH };
    await withPool(gw.databaseUrl, async (pool) => {
      const exportPlan = await explainAnalyze(pool, auditExportRowsQuery(filter, page));
      expect(scansOf(exportPlan, 'identities')).toEqual([]);
      expect(scansOf(exportPlan, 'audit_log').length).toBeGreaterThan(0);
      // The list's page statement, by contrast, looks names up for each row it returns.
      const listPlan = await explainAnalyze(pool, auditRowsQuery(filter, page));
      expect(scansOf(listPlan, 'identities').reduce((n, s) => n + s.rowsRead, 0)).toBeGreaterThan(EXPORT_BATCH);
    });
  });
});
