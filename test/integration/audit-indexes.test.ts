// Audit search at scale (issue 19): with 200,000 rows in the log (150,000 in the org searched), each
// filter the audit page offers, alone and in its combinations, with values that match nothing or a
// few rows, is read through an index: the plan of the very statement the reader sends
// (auditRowsQuery) has no sequential scan of audit_log and reads few rows of it, not the org's.
// The approvals page's reads (approvalViewsQuery) the same, over 100,000 approvals of one org.
// Not a timing test: EXPLAIN ANALYZE counts the rows each scan took from the table.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { approvalViews, approvalViewsQuery } from '../../server/approvals/store.ts';
import { auditRowsQuery } from '../../server/audit/store.ts';
import { migrate } from '../../server/db/migrate.ts';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { approvalVolumeCases, approvalVolumePeople, QUIET_EVERY, seedApprovalVolume } from '../support/approvals-volume.ts';
import { RARE_EVERY, seedAuditVolume, volumeCases } from '../support/audit-volume.ts';
import { explainAnalyze, scansOf } from '../support/explain.ts';
import { createTestDatabase } from '../support/gateway.ts';

const ORG_ROWS = 150_000;
const OTHER_ORG_ROWS = 50_000;
/** Rows a scan may take from the table: the few matches and some slack, far below a scan of the org. */
const MAX_ROWS_READ = 500;

const org = randomUUID();
const cases = volumeCases(org, new Date());

/** Asserts that every scan of `table` in `plan` goes through an index and reads few rows. */
function expectIndexedAndNarrow(plan: Parameters<typeof scansOf>[0], table: string): void {
  const scans = scansOf(plan, table);
  expect(scans.length).toBeGreaterThan(0);
  for (const scan of scans) {
    expect(scan.nodeType, JSON.stringify(scans)).not.toBe('Seq Scan');
    expect(scan.indexes.length, JSON.stringify(scans)).toBeGreaterThan(0);
    expect(scan.rowsRead, JSON.stringify(scans)).toBeLessThanOrEqual(MAX_ROWS_READ);
  }
}

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
        expectIndexedAndNarrow(plan, 'audit_log');
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

describe('the approvals page reads through indexes at scale', () => {
  const APPROVALS = 100_000;
  const approvalsOrg = randomUUID();
  const people = approvalVolumePeople(approvalsOrg);
  let pool: DatabasePool;
  /** A keyset position halfway down the org's approvals (the next page of a long history). */
  let halfway: { at: Date; id: string };

  beforeAll(async () => {
    const url = await createTestDatabase();
    await migrate(url);
    pool = await createDatabasePool(url);
    await seedApprovalVolume(pool, approvalsOrg, APPROVALS);
    await seedApprovalVolume(pool, randomUUID(), APPROVALS / 5);
    await pool.query(sql.unsafe`ANALYZE`);
    const mid = await pool.one(sql.type(z.object({ created_at: z.date(), id: z.string() }))`
      SELECT created_at, id FROM approvals WHERE org_id = ${approvalsOrg} ORDER BY created_at DESC, id DESC OFFSET ${APPROVALS / 2} LIMIT 1`);
    halfway = { at: mid.created_at, id: mid.id };
  }, 300_000);
  afterAll(async () => {
    await pool?.end();
  });

  for (const c of approvalVolumeCases(people)) {
    it(`${c.name}: an index scan that reads few rows`, async () => {
      for (const before of [undefined, halfway]) {
        const plan = await explainAnalyze(pool, approvalViewsQuery({ ...c.query, orgId: approvalsOrg, before }));
        expectIndexedAndNarrow(plan, 'approvals');
      }
    });
  }

  it('the narrowed reads return what the scope holds: the quiet member\'s approvals, newest first, paged', async () => {
    const expected = (await pool.anyFirst(sql.unsafe`
      SELECT a.id FROM approvals a JOIN identities i ON i.id = a.requester_id
      WHERE a.org_id = ${approvalsOrg} AND i.user_id = ${people.quietMemberId} ORDER BY a.created_at DESC, a.id DESC`)).map(String);
    expect(expected).toHaveLength(APPROVALS / QUIET_EVERY);
    for (const scope of ['visible', 'mine'] as const) {
      const all = await approvalViews(pool, { orgId: approvalsOrg, viewerId: people.quietMemberId, admin: false, scope, limit: 101 });
      expect(all.map((r) => r.id)).toEqual(expected);
      const first = await approvalViews(pool, { orgId: approvalsOrg, viewerId: people.quietMemberId, admin: false, scope, limit: 2 });
      const last = first.at(-1)!;
      const next = await approvalViews(pool, { orgId: approvalsOrg, viewerId: people.quietMemberId, admin: false, scope, limit: 2, before: { at: last.created_at, id: last.id } });
      expect([...first, ...next].map((r) => r.id)).toEqual(expected.slice(0, 4));
    }
  });
});
