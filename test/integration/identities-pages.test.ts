// GET /v1/identities in keyset pages (issue 46): `limit` (100 unless asked, at most 500) and an
// opaque `cursor`, oldest first, with the filters and each caller's visibility kept across pages.
// The org is loaded straight into the database (the API would take minutes for 230 agents), with
// identities created within one millisecond and some at the very same instant: a cursor that kept
// only milliseconds would skip or repeat them.
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, withPool, type SeededUser } from '../support/seed.ts';

const AGENTS = 230;

type Listed = { id: string; kind: string; status: string; parent_id: string | null; created_at: string };

describe('the identities listing in pages', () => {
  let gw: TestGateway;
  let admin: SeededUser;
  let member: SeededUser;
  let asAdmin: ReturnType<TestGateway['as']>;
  let asMember: ReturnType<TestGateway['as']>;
  /** The org's identities in the listing's order, as the database has them. */
  let expected: string[];

  /** Every page of `path` (which carries its own query) with `limit`, following next_cursor. */
  async function walk(as: ReturnType<TestGateway['as']>, path: string): Promise<{ ids: string[]; pages: number; rows: Listed[] }> {
    const rows: Listed[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const res = await as('GET', `${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, res.text).toBe(200);
      rows.push(...(res.body.identities as Listed[]));
      cursor = res.body.next_cursor as string | null;
      pages++;
    } while (cursor && pages < 100);
    return { ids: rows.map((r) => r.id), pages, rows };
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = await seedUser(gw.databaseUrl, { email: 'pages-admin@example.test', role: 'admin' });
    member = await seedUser(gw.databaseUrl, { orgId: admin.orgId, email: 'pages-member@example.test' });
    expected = await withPool(gw.databaseUrl, async (pool) => {
      // Agents of the admin at microsecond steps within one millisecond; every tenth also shares its
      // instant with the next one; every third is a subagent of the agent before it; one in seven archived.
      await pool.query(sql.unsafe`
        INSERT INTO identities (org_id, kind, parent_id, user_id, name, status, created_at)
        SELECT ${admin.orgId}, 'agent', ${admin.userId}::uuid, ${admin.userId}, 'agent ' || n,
               CASE WHEN n % 7 = 0 THEN 'archived' ELSE 'active' END,
               timestamptz '2026-01-01T00:00:00.000Z' + ((n - n % 10 / 9) * interval '1 microsecond')
        FROM generate_series(1, ${AGENTS}::int) AS n`);
      await pool.query(sql.unsafe`
        UPDATE identities c SET kind = 'subagent', parent_id = p.id
        FROM identities p
        WHERE c.org_id = ${admin.orgId} AND p.org_id = ${admin.orgId}
          AND c.name LIKE 'agent %' AND p.name = 'agent ' || (substr(c.name, 7)::int - 1)
          AND substr(c.name, 7)::int % 3 = 0`);
      // Three agents of the member, the first with a subagent.
      await pool.query(sql.unsafe`
        INSERT INTO identities (org_id, kind, user_id, parent_id, name)
        SELECT ${admin.orgId}, 'agent', ${member.userId}, ${member.userId}, 'member agent ' || n FROM generate_series(1, 3) AS n`);
      await pool.query(sql.unsafe`
        INSERT INTO identities (org_id, kind, user_id, parent_id, name)
        SELECT ${admin.orgId}, 'subagent', ${member.userId}, id, 'member subagent' FROM identities WHERE name = 'member agent 1' AND org_id = ${admin.orgId}`);
      const ids = await pool.anyFirst(sql.unsafe`SELECT id FROM identities WHERE org_id = ${admin.orgId} ORDER BY created_at, id`);
      return ids.map(String);
    });
    asAdmin = gw.as(await gw.login(admin.email, admin.password));
    asMember = gw.as(await gw.login(member.email, member.password));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('walks an admin’s whole org in pages, oldest first: each identity once, ties and microseconds apart included', async () => {
    expect(expected.length).toBe(2 + AGENTS + 4);
    const { ids, pages } = await walk(asAdmin, '/v1/identities?limit=50');
    expect(pages).toBe(Math.ceil(expected.length / 50));
    expect(ids).toEqual(expected);
  });

  it('answers 100 unless asked and at most 500, with next_cursor null on the last page', async () => {
    const first = await asAdmin('GET', '/v1/identities');
    expect(first.body.identities).toHaveLength(100);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const all = await asAdmin('GET', '/v1/identities?limit=500');
    expect(all.body.identities.map((i: Listed) => i.id)).toEqual(expected);
    expect(all.body.next_cursor).toBeNull();
  });

  it('keeps the filters across pages: one kind, one status, both', async () => {
    const subagents = await walk(asAdmin, '/v1/identities?kind=subagent&limit=20');
    expect(subagents.rows.length).toBe(Math.floor(AGENTS / 3) + 1);
    expect(subagents.rows.every((r) => r.kind === 'subagent')).toBe(true);
    expect(subagents.ids).toEqual(expected.filter((id) => subagents.ids.includes(id)));
    const archived = await walk(asAdmin, '/v1/identities?status=archived&limit=7');
    expect(archived.rows.length).toBe(Math.floor(AGENTS / 7));
    expect(archived.rows.every((r) => r.status === 'archived')).toBe(true);
    const archivedAgents = await walk(asAdmin, '/v1/identities?kind=agent&status=archived&limit=5');
    expect(archivedAgents.rows.every((r) => r.kind === 'agent' && r.status === 'archived')).toBe(true);
    expect(archivedAgents.rows.length).toBe(archived.rows.filter((r) => r.kind === 'agent').length);
  });

  it('pages a member through their own tree only, and an agent through its subtree, whatever cursor they send', async () => {
    const mine = await walk(asMember, '/v1/identities?limit=2');
    expect(mine.pages).toBe(3);
    expect(mine.rows).toHaveLength(5);
    const memberAgent1 = mine.rows.find((r) => r.kind === 'agent' && mine.rows.some((s) => s.parent_id === r.id))!;
    // A cursor from the admin's walk moves the member's position only: nothing of the admin's shows.
    const adminCursor = (await asAdmin('GET', '/v1/identities?limit=1')).body.next_cursor as string;
    const afterIt = await asMember('GET', `/v1/identities?cursor=${adminCursor}`);
    expect(afterIt.status).toBe(200);
    expect(afterIt.body.identities.map((i: Listed) => i.id).sort()).toEqual(mine.ids.slice().sort());
    const key = await asMember('POST', `/v1/identities/${memberAgent1.id}/keys`, {});
    const agentView = await walk(gw.as(key.body.token as string), '/v1/identities?limit=1');
    expect(agentView.ids).toEqual([memberAgent1.id, mine.rows.find((r) => r.parent_id === memberAgent1.id)!.id]);
  });

  it('refuses a bad limit or cursor with 400 invalid_request naming the field, and lists nothing', async () => {
    for (const limit of ['0', '501', '2.5', 'ten']) {
      const res = await asAdmin('GET', `/v1/identities?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['limit']);
      expect(res.body.identities).toBeUndefined();
    }
    const forged = [
      'not-a-cursor',
      Buffer.from(`${new Date().toISOString()}|${admin.userId}`).toString('base64url'),
      Buffer.from(`12|not-a-uuid`).toString('base64url'),
      Buffer.from(`12|${admin.userId}|more`).toString('base64url'),
      Buffer.from(`-${'9'.repeat(17)}|${admin.userId}`).toString('base64url'),
    ];
    for (const cursor of forged) {
      const res = await asAdmin('GET', `/v1/identities?cursor=${cursor}`);
      expect(res.status, cursor).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'cursor' } });
    }
  });
});
