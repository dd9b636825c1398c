// The permission check reads only the rules its keys can need (issue 46): on a chain with 10,000
// rules that cannot match, the read (chainWithRulesQuery, the statement every check sends) goes
// through permission_rules_identity_scope and returns the few that can — and still every rule that
// matches: wildcards, service- and action-level rules, raw HTTP with ANY, denies anywhere on the
// chain, conditions. The verdict on what it reads is the verdict on all the chain's rules.
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Rule } from '../../core/permissions/chain.ts';
import { conditionRequest, type ConditionRequest } from '../../core/permissions/conditions.ts';
import { matchesPattern } from '../../core/permissions/patterns.ts';
import { migrate } from '../../server/db/migrate.ts';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { judgeChain } from '../../server/identities/chain-check.ts';
import * as store from '../../server/identities/store.ts';
import { createOrg } from '../../server/orgs/store.ts';
import { explainAnalyze, scansOf } from '../support/explain.ts';
import { createTestDatabase } from '../support/gateway.ts';

const FILLERS = 10_000;
/** Rules the read may return or scan: the few named below, far from the chain's 10,000. */
const MAX_READ = 100;

const KEY_SETS = [
  ['slack:post:C1'],
  ['slack:post:C2'],
  ['slack:read:C1'],
  ['http:GET:h.example/a'],
  ['http:DELETE:h.example/a'],
  ['github:merge:7', 'slack:post:C1'],
  ['pay:refund:1'],
  ['other:thing:x'],
];

describe('the permission check reads the rules its keys can need', () => {
  let pool: DatabasePool;
  let chain: store.IdentityRow[];
  const requests = [null, conditionRequest({ method: 'POST', url: 'https://h.example/a', body: { amount: 10 } }), conditionRequest({ method: 'POST', url: 'https://h.example/a', body: { amount: 90 } })];

  /**
   * Every live rule of the chain, unnarrowed, oldest first as PostgreSQL orders them (created_at
   * to the microsecond, then id): a Date keeps only milliseconds, and rules made within one
   * millisecond would sort apart from the engine's.
   */
  const allRules = async (): Promise<Rule[]> => {
    const order = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM permission_rules WHERE identity_id = ANY(${sql.array(chain.map((c) => c.id), 'uuid')}) ORDER BY created_at, id`);
    const position = new Map(order.map((id, i) => [id, i]));
    return (await Promise.all(chain.map((c) => store.listRules(pool, c.id))))
      .flat()
      .sort((a, b) => position.get(a.id)! - position.get(b.id)!)
      .map((r) => ({ id: r.id, identityId: r.identity_id, effect: r.effect, pattern: r.pattern, expiresAt: r.expires_at, condition: r.condition, budget: r.budget }));
  };

  beforeAll(async () => {
    const url = await createTestDatabase();
    await migrate(url);
    pool = await createDatabasePool(url);
    const org = await createOrg(pool, 'rules at scale');
    const user = await store.createUser(pool, { orgId: org.id, name: 'u', email: 'u@example.test', role: 'admin', passwordHash: 'x', createdBy: null });
    const agent = await store.createAgent(pool, { orgId: org.id, parent: user, name: 'a', inheritPermissions: false, autoCallOnApprove: true, createdBy: user.id });
    const sub = await store.createAgent(pool, { orgId: org.id, parent: agent, name: 's', inheritPermissions: false, autoCallOnApprove: true, createdBy: user.id });
    const outsider = await store.createAgent(pool, { orgId: org.id, parent: user, name: 'o', inheritPermissions: false, autoCallOnApprove: true, createdBy: user.id });
    chain = [sub, agent, user];
    const rule = (on: store.IdentityRow, effect: 'allow' | 'deny', pattern: string, more: { condition?: string; expiresAt?: Date } = {}) =>
      store.createRule(pool, { orgId: org.id, identityId: on.id, effect, pattern, expiresAt: more.expiresAt ?? null, source: 'manual', approvalId: null, createdBy: user.id, condition: more.condition ?? null });
    await rule(sub, 'allow', 'slack:*:*');
    await rule(sub, 'allow', 'http:ANY:h.example/*');
    await rule(sub, 'allow', 'pay:refund:*', { condition: 'body.amount <= 50' });
    await rule(sub, 'allow', 'github:merge:*');
    await rule(agent, 'allow', 'slack:post:*');
    await rule(agent, 'allow', '*:read:*');
    await rule(agent, 'allow', 'http:GET:*');
    await rule(agent, 'allow', 'pay:*:*');
    await rule(agent, 'allow', '*:*:*', { condition: 'method == "POST"' });
    await rule(agent, 'deny', 'slack:post:C2');
    await rule(agent, 'deny', 'slack:post:C1', { expiresAt: new Date(Date.now() - 60_000) });
    await rule(user, 'deny', 'github:*:*');
    await rule(user, 'deny', 'pay:refund:*', { condition: 'body.amount > 80' });
    const revoked = await rule(sub, 'deny', 'slack:read:*');
    await store.revokeRule(pool, sub.id, revoked.id);
    await rule(outsider, 'deny', '*:*:*');
    // Rules that match none of the keys: other services, other actions, other HTTP verbs.
    await pool.query(sql.unsafe`
      INSERT INTO permission_rules (org_id, identity_id, effect, pattern, condition)
      SELECT ${org.id}, (ARRAY[${sub.id}, ${agent.id}, ${user.id}]::uuid[])[g % 3 + 1], CASE WHEN g % 5 = 0 THEN 'deny' ELSE 'allow' END,
        CASE g % 4 WHEN 0 THEN 'svc' || g || ':act:*' WHEN 1 THEN '*:act' || g || ':*' WHEN 2 THEN 'slack:act' || g || ':*' ELSE 'http:PUT:h' || g || '.example/*' END,
        CASE WHEN g % 3 = 0 THEN 'body.amount <= ' || g END
      FROM generate_series(1, ${FILLERS}) g`);
    await pool.query(sql.unsafe`ANALYZE permission_rules`);
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
  });

  it('returns every rule that matches a key, and the same verdict as all of the chain\'s rules', async () => {
    const all = await allRules();
    expect(all.length).toBeGreaterThan(FILLERS);
    for (const keys of KEY_SETS) {
      const read = await store.getChainWithRules(pool, chain[0]!.id, keys);
      expect(read.chain.map((c) => c.id)).toEqual(chain.map((c) => c.id));
      const ids = new Set(read.rules.map((r) => r.id));
      const matching = all.filter((r) => keys.some((k) => matchesPattern(r.pattern, k)));
      expect(matching.length, keys.join()).toBeGreaterThan(0);
      for (const r of matching) expect(ids.has(r.id), `${r.pattern} for ${keys.join()}`).toBe(true);
      expect(read.rules.length).toBeLessThanOrEqual(MAX_READ);
      for (const request of requests) {
        expect(judgeChain(read, keys, { request }), `${keys.join()} ${JSON.stringify(request?.body)}`).toEqual(judgeChain({ chain: read.chain, rules: all }, keys, { request }));
      }
      // What allow_remember weighs (rulesForChain) is narrowed the same way.
      const planted = new Set((await store.rulesForChain(pool, chain.map((c) => c.id), keys)).map((r) => r.id));
      expect(planted).toEqual(ids);
    }
  });

  it('decides denies, conditions and gaps as the rules say', async () => {
    const [noRequest, small, large] = requests as [null, ConditionRequest, ConditionRequest];
    const verdict = async (keys: string[], request: ConditionRequest | null) => judgeChain(await store.getChainWithRules(pool, chain[0]!.id, keys), keys, { request }).decision;
    expect((await verdict(['slack:post:C1'], noRequest))?.outcome).toBe('covered');
    expect(await verdict(['slack:post:C2'], noRequest)).toMatchObject({ outcome: 'denied', rule: { pattern: 'slack:post:C2' } });
    expect(await verdict(['github:merge:7', 'slack:post:C1'], noRequest)).toMatchObject({ outcome: 'denied', rule: { pattern: 'github:*:*' } });
    expect((await verdict(['pay:refund:1'], small))?.outcome).toBe('covered');
    expect(await verdict(['pay:refund:1'], large)).toMatchObject({ outcome: 'denied', rule: { pattern: 'pay:refund:*', condition: 'body.amount > 80' } });
    expect(await verdict(['http:DELETE:h.example/a'], noRequest)).toMatchObject({ outcome: 'gap', gapIdentityId: chain[1]!.id });
    expect((await verdict(['http:DELETE:h.example/a'], small))?.outcome).toBe('covered');
    expect((await verdict(['http:GET:h.example/a'], noRequest))?.outcome).toBe('covered');
  });

  it('reads them through the index by identity, service and action, taking few rows', async () => {
    const plan = await explainAnalyze(pool, store.chainWithRulesQuery(chain[0]!.id, ['slack:post:C1']));
    const scans = scansOf(plan, 'permission_rules');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      expect(scan.indexes, JSON.stringify(scans)).toContain('permission_rules_identity_scope');
      expect(scan.rowsRead, JSON.stringify(scans)).toBeLessThanOrEqual(MAX_READ);
    }
  });
});
