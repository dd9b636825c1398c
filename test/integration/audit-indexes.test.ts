// Audit search at scale (issue 19): with 200,000 rows in the log (150,000 in the org searched), each
// filter the audit page offers, alone and in its combinations, with values that match nothing or a
// few rows, is read through an index: the plan of the very statement the reader sends
// (auditRowsQuery) has no sequential scan of audit_log and reads few rows of it, not the org's.
// Not a timing test: EXPLAIN ANALYZE counts the rows each scan took from the table.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRowsQuery } from '../../server/audit/store.ts';
import { migrate } from '../../server/db/migrate.ts';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { RARE_EVERY, seedAuditVolume, volumeCases } from '../support/audit-volume.ts';
import { explainAnalyze, scansOf } from '../support/explain.ts';
import { createTestDatabase } from '../support/gateway.ts';

const ORG_ROWS = 150_000;
const OTHER_ORG_ROWS = 50_000;
/** Rows a scan may take from the table: the few matches and some slack, far below a scan of the org. */
const MAX_ROWS_READ = 500;

const org = randomUUID();
const cases = volumeCases(org, new Date());

describe('audit filters read through indexes at scale', () => {
  let pool: DatabasePool;
  /** A cursor halfway down the org's rows: a later page reads through the same indexes. */
  let halfway: number;

  beforeAll(async () => {
    const url = await createTestDatabase();
    await migrate(url);
    pool = await createDatabasePool(url);
    await seedAuditVolume(pool, org, ORG_ROWS);
    await seedAuditVolume(pool, randomUUID(), OTHER_ORG_ROWS);
    // What autovacuum would do soon after such a load: the planner needs the statistics.
    await pool.query(sql.unsafe`ANALYZE audit_log`);
    halfway = Number(await pool.oneFirst(sql.unsafe`SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY id) FROM audit_log WHERE org_id = ${org}`));
  }, 300_000);
  afterAll(async () => {
    await pool?.end();
  });

  for (const c of cases) {
    it(`${c.name} (${c.query}): an index scan that reads few rows`, async () => {
      for (const below of [null, halfway]) {
        const plan = await explainAnalyze(pool, auditRowsQuery({ ...c.filter, orgId: org, visibleTo: c.visibleTo }, { below, limit: 51 }));
        const scans = scansOf(plan, 'audit_log');
        expect(scans.length).toBeGreaterThan(0);
        for (const scan of scans) {
          expect(scan.nodeType, JSON.stringify(scans)).not.toBe('Seq Scan');
          expect(scan.indexes.length, JSON.stringify(scans)).toBeGreaterThan(0);
          expect(scan.rowsRead, JSON.stringify(scans)).toBeLessThanOrEqual(MAX_ROWS_READ);
        }
      }
    });
  }

  it('the seeded log has what the cases rely on: rows of the org that each filter alone matches', async () => {
    // Guards the cases' meaning: "slack + delete" and "call.called + denied" match nothing although
    // each half matches many rows (a one-column index would not do), and the rare values exist.
    const count = async (where: ReturnType<typeof sql.fragment>) =>
      Number(await pool.oneFirst(sql.unsafe`SELECT count(*) FROM audit_log WHERE org_id = ${org} AND ${where}`));
    expect(await count(sql.fragment`service = 'slack'`)).toBeGreaterThan(10_000);
    expect(await count(sql.fragment`action = 'delete'`)).toBeGreaterThan(10_000);
    expect(await count(sql.fragment`service = 'slack' AND action = 'delete'`)).toBe(0);
    expect(await count(sql.fragment`event = 'call.called'`)).toBeGreaterThan(10_000);
    expect(await count(sql.fragment`decision = 'denied'`)).toBeGreaterThan(1_000);
    expect(await count(sql.fragment`event = 'call.called' AND decision = 'denied'`)).toBe(0);
    expect(await count(sql.fragment`action = 'rotate_keys'`)).toBe(ORG_ROWS / RARE_EVERY);
  });
});
