// Reads that hold up as an org grows (issue 46; `npm run bench:scale` times them): one org seeded to
// scale by test/support/scale-seed.ts (2,000 agents in chains, 52,500 approvals of which 2,500 open
// and spread among the decided ones, 150,000 audit rows), and the plans of the very statements the
// readers send: each reads its page through an index, and its work is bounded by the page, not by
// the org. Not a timing test: EXPLAIN ANALYZE counts the rows each scan took from its table.
// The audit page's filters, one by one and combined, are asserted the same way in
// test/integration/audit-indexes.test.ts.
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { approvalViews, approvalViewsQuery, openApprovalsBelow, openApprovalsBelowQuery } from '../../server/approvals/store.ts';
import { EXPORT_BATCH } from '../../server/audit/service.ts';
import { auditRowsQuery, recentCallKeys, recentCallKeysQuery } from '../../server/audit/store.ts';
import { migrate } from '../../server/db/migrate.ts';
import { identityPageQuery, type IdentityPageQuery } from '../../server/identities/page-store.ts';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { volumeIds } from '../support/audit-volume.ts';
import { explainAnalyze, scansOf, type TableScan } from '../support/explain.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { seedOrg, SMALL_ORG, uuidOf, type OrgShape, type SeededOrg } from '../support/scale-seed.ts';

const SHAPE: OrgShape = {
  people: 50,
  agents: 2_000,
  rules: 2_000,
  services: 2,
  actionsPerService: 5,
  calls: 60_000,
  decidedApprovals: 50_000,
  pendingApprovals: 2_500,
  auditRows: 150_000,
};
/** A page of the approvals list as the dashboard asks it (100) and the one more row that says "there is a next page". */
const PAGE = 101;
/** Rows a page's scan may take from its table: the page and some slack, far below the org's. */
const MAX_ROWS_READ = 500;

const describeScans = (scans: TableScan[]) => JSON.stringify(scans);

/** Every scan of `table` is an index scan, and together they read at most `maxRows` rows. */
function expectIndexed(scans: TableScan[], maxRows: number): void {
  expect(scans.length).toBeGreaterThan(0);
  for (const scan of scans) {
    expect(scan.nodeType, describeScans(scans)).not.toBe('Seq Scan');
    expect(scan.indexes.length, describeScans(scans)).toBeGreaterThan(0);
  }
  expect(scans.reduce((n, s) => n + s.rowsRead, 0), describeScans(scans)).toBeLessThanOrEqual(maxRows);
}

describe('reads of an org seeded to scale', () => {
  let pool: DatabasePool;
  let org: SeededOrg;
  let small: SeededOrg;
  let identitiesInDatabase: number;
  /** Keyset positions halfway down the org's open approvals and its whole history. */
  let halfwayOpen: { at: Date; id: string };
  let halfwayAll: { at: Date; id: string };
  /** Keyset position halfway down the org's identities (the agents page). */
  let halfwayIdentities: NonNullable<IdentityPageQuery['after']>;

  const keysetRow = z.object({ created_at: z.date(), id: z.string() });

  beforeAll(async () => {
    const url = await createTestDatabase();
    await migrate(url);
    pool = await createDatabasePool(url, { statementTimeoutMs: 300_000 });
    // Another org in the same tables (seeded first: the big org's rows are the newest, as in the bench).
    small = await seedOrg(pool, 'plans-small', SMALL_ORG);
    org = await seedOrg(pool, 'plans-big', SHAPE);
    // What autovacuum would do soon after such a load: the planner needs the statistics.
    await pool.query(sql.unsafe`ANALYZE`);
    identitiesInDatabase = Number(await pool.oneFirst(sql.unsafe`SELECT count(*) FROM identities`));
    const at = async (open: boolean, offset: number) => {
      const r = await pool.one(sql.type(keysetRow)`
        SELECT created_at, id FROM approvals
        WHERE org_id = ${org.orgId} ${open ? sql.fragment`AND status IN ('pending', 'bubbled')` : sql.fragment``}
        ORDER BY created_at DESC, id DESC OFFSET ${offset} LIMIT 1`);
      return { at: r.created_at, id: r.id };
    };
    halfwayOpen = await at(true, SHAPE.pendingApprovals / 2);
    halfwayAll = await at(false, (SHAPE.decidedApprovals + SHAPE.pendingApprovals) / 2);
    const position = z.object({ at_micros: z.string(), id: z.string() });
    const middle = await pool.one(sql.type(position)`
      SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS at_micros, id FROM identities
      WHERE org_id = ${org.orgId} ORDER BY created_at, id OFFSET ${SHAPE.agents / 2} LIMIT 1`);
    halfwayIdentities = { atMicros: BigInt(middle.at_micros), id: middle.id };
  }, 600_000);
  afterAll(async () => {
    await pool?.end();
  });

  const adminQuery = () => ({ orgId: org.orgId, viewerId: org.admin.id, admin: true, limit: PAGE });

  it('the seed has what the cases rely on: open approvals spread among many more decided ones', async () => {
    const counts = await pool.one(sql.type(z.object({ open: z.coerce.number(), decided_since: z.coerce.number() }))`
      SELECT count(*) FILTER (WHERE status = 'pending') AS open,
             count(*) FILTER (WHERE status <> 'pending' AND created_at > (SELECT min(created_at) FROM approvals WHERE org_id = ${org.orgId} AND status = 'pending')) AS decided_since
      FROM approvals WHERE org_id = ${org.orgId}`);
    expect(counts.open).toBe(SHAPE.pendingApprovals);
    expect(counts.decided_since).toBeGreaterThan(SHAPE.decidedApprovals * 0.9);
  });

  it('the inbox (open approvals to decide, newest first) reads a page of open ones through approvals_open_time, first page and deep', async () => {
    for (const before of [undefined, halfwayOpen]) {
      const plan = await explainAnalyze(pool, approvalViewsQuery({ ...adminQuery(), scope: 'actionable', before }));
      const scans = scansOf(plan, 'approvals');
      expectIndexed(scans, MAX_ROWS_READ);
      expect(scans.flatMap((s) => s.indexes), describeScans(scans)).toContain('approvals_open_time');
    }
  });

  it('the approvals history reads a page through approvals_org_time, first page and deep', async () => {
    for (const before of [undefined, halfwayAll]) {
      const plan = await explainAnalyze(pool, approvalViewsQuery({ ...adminQuery(), scope: 'visible', before }));
      const scans = scansOf(plan, 'approvals');
      expectIndexed(scans, MAX_ROWS_READ);
      expect(scans.flatMap((s) => s.indexes), describeScans(scans)).toContain('approvals_org_time');
    }
  });

  it('an approvals page names the org’s admins once (identities_org_admins), not once per row from all its identities', async () => {
    const plan = await explainAnalyze(pool, approvalViewsQuery({ ...adminQuery(), scope: 'visible' }));
    const scans = scansOf(plan, 'identities');
    expect(scans.flatMap((s) => s.indexes), describeScans(scans)).toContain('identities_org_admins');
    // Per row: the requester, the user, their approver (primary key); once: the viewer's subtree and the admins.
    const read = scans.reduce((n, s) => n + s.rowsRead, 0);
    expect(read, describeScans(scans)).toBeLessThanOrEqual(identitiesInDatabase + 5 * PAGE);
  });

  it('an audit page and an export batch look each name up by primary key: no scan of every identity per row', async () => {
    for (const limit of [51, EXPORT_BATCH]) {
      const plan = await explainAnalyze(pool, auditRowsQuery({ orgId: org.orgId, visibleTo: 'org' }, { below: null, limit }));
      expectIndexed(scansOf(plan, 'audit_log'), limit);
      // The user, the actor and each link of a two-link chain: four lookups a row.
      expectIndexed(scansOf(plan, 'identities'), 4 * limit);
    }
  });

  it('the blast radius reads at most its limit of recent calls from the log, for an admin and for a member', async () => {
    const limit = 1_000;
    for (const userId of [null, volumeIds(org.orgId).user(3)]) {
      const plan = await explainAnalyze(pool, recentCallKeysQuery({ orgId: org.orgId, userId, days: 30, exceptApprovalId: org.pendingApprovalId, limit, onChainsOf: [org.agentId] }));
      // Three in four rows of the seeded log are a call's first row: the newest `limit` of them are near.
      expectIndexed(scansOf(plan, 'audit_log'), 2 * limit);
    }
  });

  it('of those recent calls only the ones on a rule target’s chain leave the database; all are counted', async () => {
    // The agent of the org's newest call (the seeded chains are [person, agent]).
    const agent = String(await pool.oneFirst(sql.unsafe`
      SELECT identity_chain[2] FROM audit_log WHERE org_id = ${org.orgId} AND event = 'call.called' ORDER BY id DESC LIMIT 1`));
    const recent = await recentCallKeys(pool, { orgId: org.orgId, userId: null, days: 30, exceptApprovalId: org.pendingApprovalId, limit: 1_000, onChainsOf: [agent] });
    expect(recent.scanned).toBe(1_000);
    expect(recent.on_chains.length).toBeGreaterThan(0);
    expect(recent.on_chains.length).toBeLessThan(recent.scanned / 100);
    for (const call of recent.on_chains) expect(call.identity_chain).toContain(agent);
  });
  it('the blast radius reads the open approvals of the rule targets’ subtrees through approvals_requester_open, not the org’s', async () => {
    // A person of the org (its subtree: several chains of agents, each with an open approval or
    // two) and three of its chains' heads.
    const person = String(await pool.oneFirst(sql.unsafe`SELECT parent_id FROM identities WHERE org_id = ${org.orgId} AND kind = 'agent' ORDER BY id LIMIT 1`));
    const agents = (await pool.anyFirst(sql.unsafe`SELECT id FROM identities WHERE parent_id = ${person} ORDER BY id LIMIT 3`)).map(String);
    expect(agents.length).toBeGreaterThan(0);
    for (const [below, userId] of [[agents, null], [agents, person], [[person], null]] as const) {
      const q = { orgId: org.orgId, userId, exceptId: org.pendingApprovalId, below, limit: 500 };
      const plan = await explainAnalyze(pool, openApprovalsBelowQuery(q));
      const scans = scansOf(plan, 'approvals');
      expect(scans.flatMap((s) => s.indexes), describeScans(scans)).toContain('approvals_requester_open');
      // The subtrees' open approvals only: far fewer than the org's 2,500.
      const inSubtrees = Number(await pool.oneFirst(sql.unsafe`
        WITH RECURSIVE t AS (SELECT id FROM identities WHERE id = ANY(${sql.array([...below], 'uuid')}) UNION ALL SELECT i.id FROM identities i JOIN t ON i.parent_id = t.id)
        SELECT count(*) FROM approvals WHERE requester_id IN (SELECT id FROM t) AND status IN ('pending', 'bubbled') AND id <> ${org.pendingApprovalId}
          ${userId === null ? sql.fragment`` : sql.fragment`AND user_id = ${userId}`}`));
      expectIndexed(scans, inSubtrees);
      expect(inSubtrees).toBeLessThan(SHAPE.pendingApprovals / 10);
      // And the answer is those approvals, newest first.
      const answer = await openApprovalsBelow(pool, q);
      expect(answer.length).toBe(Math.min(inSubtrees, 500));
      expect(answer.map((a) => a.created_at.getTime())).toEqual(answer.map((a) => a.created_at.getTime()).sort((x, y) => y - x));
    }
  });

  it('the recent calls answer as the plain statement (every row sorted by call) did, for an agent, a person and nobody', async () => {
    // The statement before the count became a hash and only calls on a target's chain were sorted.
    const plain = (onChainsOf: string[], userId: string | null, limit: number) => pool.one(sql.type(z.object({ scanned: z.coerce.number(), on_chains: z.array(z.object({ call_id: z.string(), identity_chain: z.array(z.string()), permission_keys: z.array(z.string()) })) }))`
      WITH recent AS (
        SELECT call_id, identity_chain, permission_keys, at FROM audit_log
        WHERE org_id = ${org.orgId} AND at > now() - make_interval(days => 30)
          AND event IN ('call.called', 'call.denied', 'approval.raised') AND call_id IS NOT NULL
          AND call_id <> (SELECT call_id FROM approvals WHERE id = ${org.pendingApprovalId}) ${userId === null ? sql.fragment`` : sql.fragment`AND user_id = ${userId}`}
        ORDER BY id DESC LIMIT ${limit}
      ), calls AS (SELECT DISTINCT ON (call_id) call_id, identity_chain, permission_keys FROM recent ORDER BY call_id, at)
      SELECT (SELECT count(*) FROM calls) AS scanned,
             (SELECT coalesce(jsonb_agg(jsonb_build_object('call_id', call_id, 'identity_chain', identity_chain, 'permission_keys', permission_keys)), '[]')
                FROM calls WHERE identity_chain && ${sql.array(onChainsOf, 'uuid')}) AS on_chains`);
    const newest = await pool.one(sql.type(z.object({ person: z.string(), agent: z.string() }))`
      SELECT identity_chain[1]::text AS person, identity_chain[2]::text AS agent FROM audit_log WHERE org_id = ${org.orgId} AND event = 'call.called' ORDER BY id DESC LIMIT 1`);
    const byCall = (calls: Array<{ call_id: string }>) => [...calls].sort((a, b) => a.call_id.localeCompare(b.call_id));
    for (const [targets, userId] of [[[newest.agent], null], [[newest.person], null], [[newest.person], newest.person], [[uuidOf(org.orgId, 'nobody')], null]] as const) {
      for (const limit of [1_000, 5_000]) {
        const [now, before] = await Promise.all([
          recentCallKeys(pool, { orgId: org.orgId, userId, days: 30, exceptApprovalId: org.pendingApprovalId, limit, onChainsOf: targets }),
          plain([...targets], userId, limit),
        ]);
        expect(now.scanned).toBe(before.scanned);
        expect(byCall(now.on_chains)).toEqual(byCall(before.on_chains));
        expect(now.rows_read).toBeGreaterThanOrEqual(now.scanned);
        expect(now.rows_read).toBeLessThanOrEqual(limit);
      }
    }
  });

  it('a call with two rows in the window is judged by its first: the older row’s keys, however the rows are read', async () => {
    // In the small org (the big one's reads stay as seeded): a call raised with one key, then
    // checked with another a minute later, by an agent of its own.
    const agent = uuidOf(small.orgId, 'agent:0');
    const callId = uuidOf(small.orgId, 'two-rows');
    const row = (event: string, key: string, secondsAgo: number) => sql.unsafe`
      INSERT INTO audit_log (org_id, at, event, user_id, actor_id, identity_chain, permission_keys, call_id)
      VALUES (${small.orgId}, now() - make_interval(secs => ${secondsAgo}), ${event}, ${small.admin.id}, ${agent},
              ${sql.array([agent, small.admin.id], 'uuid')}, ${sql.array([key], 'text')}, ${callId})`;
    // The newer row is written first, so its id is the lower: neither the ids nor the order read decide.
    await pool.query(row('call.called', 'svc:after:*', 60));
    await pool.query(row('approval.raised', 'svc:first:*', 120));
    const recent = await recentCallKeys(pool, { orgId: small.orgId, userId: null, days: 30, exceptApprovalId: small.pendingApprovalId, limit: 1_000, onChainsOf: [agent] });
    expect(recent.on_chains.filter((c) => c.call_id === callId)).toEqual([{ call_id: callId, identity_chain: [agent, small.admin.id], permission_keys: ['svc:first:*'] }]);
  });

  it('the agents page reads a page of the org’s identities through identities_org_page, first page and deep, for an admin', async () => {
    for (const after of [undefined, halfwayIdentities]) {
      const plan = await explainAnalyze(pool, identityPageQuery({ orgId: org.orgId, within: { org: true }, after, limit: PAGE }));
      const scans = scansOf(plan, 'identities');
      expectIndexed(scans, PAGE);
      expect(scans.flatMap((s) => s.indexes), describeScans(scans)).toContain('identities_org_page');
    }
  });

  it('one kind of the org (the people among 2,000 agents) is a range of identities_org_kind_page, not a filtered walk of the org', async () => {
    const plan = await explainAnalyze(pool, identityPageQuery({ orgId: org.orgId, within: { org: true }, kind: 'user', limit: PAGE }));
    const scans = scansOf(plan, 'identities');
    expectIndexed(scans, SHAPE.people);
    expect(scans.flatMap((s) => s.indexes), describeScans(scans)).toContain('identities_org_kind_page');
  });

  it('a member’s page is a range of their own tree (identities_user_page); an agent’s walks only its subtree', async () => {
    const member = uuidOf(org.orgId, 'user:1');
    const mine = await explainAnalyze(pool, identityPageQuery({ orgId: org.orgId, within: { userId: member }, limit: PAGE }));
    const scans = scansOf(mine, 'identities');
    expectIndexed(scans, PAGE);
    expect(scans.flatMap((s) => s.indexes), describeScans(scans)).toContain('identities_user_page');
    // The head of a chain of five: itself and its four descendants, each found by its parent.
    const subtree = await explainAnalyze(pool, identityPageQuery({ orgId: org.orgId, within: { rootId: org.agentId }, limit: PAGE }));
    expectIndexed(scansOf(subtree, 'identities'), 2 * 5);
  });
  it('approvals created within one millisecond are each on exactly one page (the cursor keeps only milliseconds)', async () => {
    // The org's three newest approvals, moved 1, 2 and 3 µs into one millisecond after every other.
    await pool.query(sql.unsafe`
      UPDATE approvals a SET created_at = timestamptz '2100-01-01T00:00:00.000Z' + n.k * interval '1 microsecond'
      FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS k FROM
              (SELECT id, created_at FROM approvals WHERE org_id = ${org.orgId} ORDER BY created_at DESC, id DESC LIMIT 3) newest) n
      WHERE a.id = n.id`);
    const seen: string[] = [];
    let before: { at: Date; id: string } | undefined;
    for (let page = 0; page < 3; page++) {
      const [row] = await approvalViews(pool, { ...adminQuery(), scope: 'visible', before, limit: 1 });
      seen.push(row!.id);
      // What the service's cursor carries (server/approvals/service.ts): the row's Date and id.
      before = { at: row!.created_at, id: row!.id };
    }
    const newest = await pool.anyFirst(sql.unsafe`
      SELECT id FROM approvals WHERE org_id = ${org.orgId} AND created_at >= '2100-01-01' ORDER BY created_at DESC, id DESC`);
    expect(seen).toEqual(newest.map(String));
  });
});
