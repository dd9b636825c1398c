// The blast radius reads only what a tier can touch (issue 46) and weighs a tier's condition on
// the pending approvals' requests (issue 44). A mixed org — chains with inheriting and
// non-inheriting subagents, allows and denies with wildcards, conditions, expired and revoked
// rules, pending approvals with requests, past calls in the audit log — is seeded by SQL; every
// pending approval's every tier is asked through the service and compared with the answer computed
// from what the endpoint used to load: every identity and every live rule of the org, every other
// pending approval and every recent call on a target's chain (the oracle below).
import { randomUUID } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { blastRadius } from '../../core/permissions/blast-radius.ts';
import type { Identity, Rule } from '../../core/permissions/chain.ts';
import { storedConditionRequest } from '../../core/permissions/conditions.ts';
import { createBlastRadiusService } from '../../server/approvals/blast-radius.ts';
import { readVisibleApproval } from '../../server/approvals/read.ts';
import { approvalViewReader } from '../../server/approvals/store.ts';
import { createAuditReader } from '../../server/audit/readers.ts';
import { recentCallKeys } from '../../server/audit/store.ts';
import type { UserPrincipal } from '../../server/auth/principal.ts';
import { migrate } from '../../server/db/migrate.ts';
import { createDatabasePool } from '../../server/db/pool.ts';
import { createIdentityReader } from '../../server/identities/readers.ts';
import { createTestDatabase } from '../support/gateway.ts';

const SERVICES = ['pay', 'mail', 'crm'];
const ACTIONS = ['create', 'delete', 'get'];
const CONDITION = 'body.amount <= 60';

/** A small deterministic generator (the org is the same on every run). */
function generator(seed: number) {
  let s = seed;
  const next = () => ((s = (s * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

interface Seeded {
  orgId: string;
  admin: UserPrincipal;
  member: UserPrincipal;
  pendingIds: string[];
}

async function seedMixedOrg(pool: DatabasePool): Promise<Seeded> {
  const g = generator(46);
  const orgId = randomUUID();
  const adminId = randomUUID();
  const memberId = randomUUID();
  await pool.query(sql.unsafe`INSERT INTO orgs (id, name, max_pending_per_agent) VALUES (${orgId}, 'blast', 1000)`);
  for (const [id, role] of [[adminId, 'admin'], [memberId, 'member']] as const) {
    await pool.query(sql.unsafe`INSERT INTO identities (id, org_id, kind, user_id, name, email, role, password_hash) VALUES (${id}, ${orgId}, 'user', ${id}, ${role}, ${`${role}-${orgId}@example.test`}, ${role}, 'not a hash: no sign-in here')`);
  }
  // 12 chains: an agent, a subagent below it, another below that; some inherit.
  const agents: { id: string; userId: string; chain: string[] }[] = [];
  for (let c = 0; c < 12; c++) {
    const userId = c % 2 === 0 ? adminId : memberId;
    let parent = userId;
    let chain = [userId];
    for (let depth = 0; depth < 3; depth++) {
      const id = randomUUID();
      const kind = depth === 0 ? 'agent' : 'subagent';
      const inherit = depth > 0 && (c + depth) % 3 === 0;
      await pool.query(sql.unsafe`
        INSERT INTO identities (id, org_id, kind, parent_id, user_id, name, inherit_permissions)
        VALUES (${id}, ${orgId}, ${kind}, ${parent}, ${userId}, ${`agent ${c}.${depth}`}, ${inherit})`);
      chain = [id, ...chain];
      agents.push({ id, userId, chain });
      parent = id;
    }
  }
  const key = () => `${g.pick(SERVICES)}:${g.pick(ACTIONS)}:${g.pick(['a', 'b', 'c'])}`;
  for (let r = 0; r < 240; r++) {
    const [service, action, scope] = key().split(':');
    const pattern = g.pick([`${service}:${action}:${scope}`, `${service}:${action}:*`, `${service}:*:*`, '*:*:*', `${service}:ANY:*`, `*:${action}:*`]);
    const effect = g.next() < 0.12 ? 'deny' : 'allow';
    const condition = g.next() < 0.2 ? 'body.amount < 50' : null;
    const expired = g.next() < 0.1;
    const revoked = g.next() < 0.1;
    await pool.query(sql.unsafe`
      INSERT INTO permission_rules (org_id, identity_id, effect, pattern, source, created_by, condition, expires_at, revoked_at, created_at)
      VALUES (${orgId}, ${g.pick(agents).id}, ${effect}, ${pattern}, 'manual', ${adminId}, ${condition},
              ${expired ? sql.fragment`now() - interval '1 hour'` : sql.fragment`NULL`}, ${revoked ? sql.fragment`now()` : sql.fragment`NULL`},
              now() - make_interval(secs => ${1000 - r}))`);
  }
  // What no tier here can touch: 3,000 rules of another service and 5,000 agents without calls. The
  // answer must not depend on them, nor the work grow with them.
  await pool.query(sql.unsafe`
    INSERT INTO identities (id, org_id, kind, parent_id, user_id, name)
    SELECT gen_random_uuid(), ${orgId}, 'agent', ${adminId}, ${adminId}, 'idle ' || n FROM generate_series(1, 5000) AS n`);
  await pool.query(sql.unsafe`
    INSERT INTO permission_rules (org_id, identity_id, effect, pattern, source, created_by)
    SELECT ${orgId}, (${sql.array(agents.map((a) => a.id), 'uuid')})[1 + n % ${agents.length}], 'allow', 'noise:op' || (n % 50) || ':*', 'manual', ${adminId}
    FROM generate_series(1, 3000) AS n`);
  const insertCall = async (a: (typeof agents)[number], keys: string[], amount: number, status: string, secondsAgo: number) => {
    const callId = randomUUID();
    const [service, action] = keys[0]!.split(':');
    await pool.query(sql.unsafe`
      INSERT INTO calls (id, org_id, requester_id, user_id, service, template, action, risk, permission_keys, description, request_redacted, request_envelope, status, created_at)
      VALUES (${callId}, ${orgId}, ${a.id}, ${a.userId}, ${service!}, ${service!}, ${action!}, 'write', ${sql.array(keys, 'text')}, 'seeded',
              ${sql.jsonb({ method: 'POST', url: `https://${service}.example.test/v1/${action}`, body: { amount } })}, '{}'::jsonb, ${status},
              now() - make_interval(secs => ${secondsAgo}))`);
    return callId;
  };
  const pendingIds: string[] = [];
  for (let n = 0; n < 60; n++) {
    const a = g.pick(agents);
    const keys = [...new Set(g.next() < 0.3 ? [key(), key()] : [key()])];
    const callId = await insertCall(a, keys, Math.floor(g.next() * 100), 'pending', 600 - n);
    const id = randomUUID();
    const [service, action] = keys[0]!.split(':');
    const tiers = [
      { keys, description: 'exactly this' },
      { keys: keys.map((k) => k.split(':').slice(0, 2).join(':') + ':*'), description: 'this action' },
      { keys: [`${service}:*:*`], description: 'the service' },
      { keys: [`${service}:${action}:*`], description: 'up to this amount', condition: CONDITION },
    ];
    await pool.query(sql.unsafe`
      INSERT INTO approvals (id, call_id, org_id, requester_id, user_id, gap_identity_id, resolver_id, status, risk, permission_keys, derived_keys,
                             suggested_tiers, action_description, auto_call_on_approve, dedupe_key, expires_at, created_at)
      VALUES (${id}, ${callId}, ${orgId}, ${a.id}, ${a.userId}, ${a.id}, ${a.userId}, ${n % 9 === 0 ? 'bubbled' : 'pending'}, 'med',
              ${sql.array(keys, 'text')}, ${sql.array(keys, 'text')}, ${sql.jsonb(tiers)}, ${`pending ${n}`}, true, ${`d${n}`},
              now() + interval '1 day', now() - make_interval(secs => ${600 - n}))`);
    await pool.query(sql.unsafe`
      INSERT INTO audit_log (org_id, at, event, user_id, actor_id, identity_chain, permission_keys, call_id, approval_id)
      VALUES (${orgId}, now() - make_interval(secs => ${600 - n}), 'approval.raised', ${a.userId}, ${a.id}, ${sql.array(a.chain, 'uuid')}, ${sql.array(keys, 'text')}, ${callId}, ${id})`);
    pendingIds.push(id);
  }
  for (let n = 0; n < 200; n++) {
    const a = g.pick(agents);
    const keys = [key()];
    const callId = await insertCall(a, keys, Math.floor(g.next() * 100), 'finished', 5000 - n);
    await pool.query(sql.unsafe`
      INSERT INTO audit_log (org_id, at, event, user_id, actor_id, identity_chain, permission_keys, call_id)
      VALUES (${orgId}, now() - make_interval(secs => ${5000 - n}), ${g.pick(['call.called', 'call.denied'])}, ${a.userId}, ${a.id}, ${sql.array(a.chain, 'uuid')}, ${sql.array(keys, 'text')}, ${callId})`);
  }
  const principal = (userId: string, role: 'admin' | 'member'): UserPrincipal => ({ type: 'user', orgId, userId, identityId: userId, role, sessionId: randomUUID() });
  return { orgId, admin: principal(adminId, 'admin'), member: principal(memberId, 'member'), pendingIds };
}

const identityRow = z.object({ id: z.string(), kind: z.enum(['user', 'agent', 'subagent']), parent_id: z.string().nullable(), inherit_permissions: z.boolean() });
const ruleRow = z.object({ id: z.string(), identity_id: z.string(), effect: z.enum(['allow', 'deny']), pattern: z.string(), expires_at: z.date().nullable(), condition: z.string().nullable() });
const approvalRow = z.object({ requester_id: z.string(), permission_keys: z.array(z.string()), suggested_tiers: z.array(z.object({ keys: z.array(z.string()), condition: z.string().optional() })) });

/** What the endpoint used to load (the whole org's identities and live rules), judged by the same engine. */
async function oracle(pool: DatabasePool, p: UserPrincipal, approvalId: string, tierIndex: number) {
  const userId = p.role === 'admin' ? null : p.userId;
  const view = await pool.one(sql.type(approvalRow)`SELECT requester_id, permission_keys, suggested_tiers FROM approvals WHERE id = ${approvalId}`);
  const tier = view.suggested_tiers[tierIndex]!;
  const identities = new Map<string, Identity>(
    (await pool.any(sql.type(identityRow)`SELECT id, kind, parent_id, inherit_permissions FROM identities WHERE org_id = ${p.orgId}`)).map((r) => [r.id, { id: r.id, kind: r.kind, parentId: r.parent_id, inheritPermissions: r.inherit_permissions }]),
  );
  const rules: Rule[] = (await pool.any(sql.type(ruleRow)`SELECT id, identity_id, effect, pattern, expires_at, condition FROM permission_rules WHERE org_id = ${p.orgId} AND revoked_at IS NULL`)).map((r) => ({
    id: r.id, identityId: r.identity_id, effect: r.effect, pattern: r.pattern, expiresAt: r.expires_at, condition: r.condition,
  }));
  // Every other open approval of the org (of the member's, for a member), whoever requested it.
  const pending = await pool.any(sql.type(z.object({ id: z.string(), requester_id: z.string(), permission_keys: z.array(z.string()) }))`
    SELECT id, requester_id, permission_keys FROM approvals
    WHERE org_id = ${p.orgId} AND status IN ('pending', 'bubbled') AND id <> ${approvalId} ${userId === null ? sql.fragment`` : sql.fragment`AND user_id = ${userId}`}`);
  const requests = new Map(
    (await pool.any(sql.type(z.object({ id: z.string(), request: z.unknown() }))`
      SELECT a.id, c.request_redacted AS request FROM approvals a JOIN calls c ON c.id = a.call_id WHERE a.org_id = ${p.orgId}`)).map((r) => [r.id, storedConditionRequest(r.request)]),
  );
  const input = {
    identities, rules, resolverId: p.identityId, tierKeys: tier.keys, tierCondition: tier.condition ?? null, now: new Date(),
    approval: { id: approvalId, requesterId: view.requester_id, keys: view.permission_keys },
    pending: pending.map((a) => ({ id: a.id, requesterId: a.requester_id, keys: a.permission_keys, request: requests.get(a.id) ?? null })),
  };
  const { targetIds } = blastRadius({ ...input, pending: [], pastCalls: [] });
  const recent = await recentCallKeys(pool, { orgId: p.orgId, userId, days: 30, exceptApprovalId: approvalId, limit: 20_000, onChainsOf: targetIds });
  const result = blastRadius({ ...input, pastCalls: recent.on_chains.map((c) => ({ id: c.call_id, requesterId: c.identity_chain[0]!, keys: c.permission_keys })) });
  return { targets: result.targetIds, pending: [...result.coveredPendingIds].sort(), callsCovered: result.coveredCallIds.length, callsScanned: recent.scanned };
}

describe('the blast radius, bounded by what a tier can touch', () => {
  let pool: DatabasePool;
  let url: string;
  let org: Seeded;
  let service: ReturnType<typeof createBlastRadiusService>;

  beforeAll(async () => {
    url = await createTestDatabase();
    await migrate(url);
    pool = await createDatabasePool(url);
    org = await seedMixedOrg(pool);
    // What autovacuum would do soon after such a load: the planner needs the statistics.
    await pool.query(sql.unsafe`ANALYZE`);
    service = createBlastRadiusService({ pool, identities: createIdentityReader(pool), audit: createAuditReader(pool) });
  }, 300_000);
  afterAll(async () => {
    await pool?.end();
  });

  it('answers every tier of every pending approval as the whole org would, for an admin and a member', async () => {
    let pendingCovered = 0;
    let callsCovered = 0;
    let memberAnswers = 0;
    for (const approvalId of org.pendingIds) {
      for (let tier = 0; tier < 4; tier++) {
        for (const p of [org.admin, org.member]) {
          const answer = await service.forTier(p, approvalId, tier).catch((err: { code?: string }) => {
            // A member may weigh only the approvals they may resolve.
            if (p === org.member && (err.code === 'not_found' || err.code === 'not_in_your_chain')) return null;
            throw err;
          });
          if (!answer) continue;
          if (p === org.member) memberAnswers++;
          const expected = await oracle(pool, p, approvalId, tier);
          const context = `approval ${approvalId} tier ${tier} as ${p.role}`;
          expect({
            targets: answer.rule_targets.map((t) => t.id),
            pending: answer.pending_covered.map((a) => a.id).sort(),
            callsCovered: answer.audit.calls_covered,
            callsScanned: answer.audit.calls_scanned,
          }, context).toEqual(expected);
          expect(answer.condition_not_weighed_for_past_calls, context).toBe(tier === 3);
          pendingCovered += answer.pending_covered.length;
          callsCovered += answer.audit.calls_covered;
        }
      }
    }
    // The org is mixed enough that tiers reach other approvals and calls, and members are asked too.
    expect(pendingCovered).toBeGreaterThan(20);
    expect(callsCovered).toBeGreaterThan(20);
    expect(memberAnswers).toBeGreaterThan(20);
  }, 600_000);

  it('reads the identities and rules the tier can touch, not the org\'s', async () => {
    // Tuples read from each table, as PostgreSQL counts them for the transaction the reads run in.
    const readCounts = z.object({ relname: z.string(), n: z.coerce.number() });
    // What the reads touch when the planner uses the indexes, as it does on an org big enough to
    // matter: on this test's few thousand rows a sequential scan is as cheap, and whether the
    // planner picks one (by the statistics of the moment, or a generic plan cached on a shared
    // connection by the other tests' runs) would make the count a coin toss. Hence connections of
    // their own, custom plans and no sequential scan where an index serves; a design that reads
    // the whole org (every identity and rule, as the old loader did) reads them by index too.
    const fresh = await createDatabasePool(url);
    const tuplesRead = (read: (db: DatabasePool) => Promise<unknown>) =>
      fresh.transaction(async (tx) => {
        await tx.query(sql.unsafe`SET LOCAL plan_cache_mode = force_custom_plan`);
        await tx.query(sql.unsafe`SET LOCAL enable_seqscan = off`);
        await read(tx as unknown as DatabasePool);
        const counts = await tx.any(sql.type(readCounts)`
          SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_xact_user_tables
          WHERE relname IN ('identities', 'permission_rules')`);
        return Object.fromEntries(counts.map((c) => [c.relname, c.n])) as Record<string, number | undefined>;
      });
    // Asked by a member (the admin's own subtree holds the org's 5,000 idle agents, which reading
    // any approval as the admin walks): the approvals the member may weigh.
    const mine: string[] = [];
    for (const id of org.pendingIds) {
      if (mine.length === 2) break;
      if (await service.forTier(org.member, id, 0).then(() => true, () => false)) mine.push(id);
    }
    expect(mine).toHaveLength(2);
    for (const [approvalId, tier] of [[mine[0]!, 2], [mine[1]!, 1]] as const) {
      // Reading the approval itself (its visibility: the viewer's subtree) is the approval page's cost, not this one's.
      const page = await tuplesRead((db) => readVisibleApproval(approvalViewReader(db), org.member, approvalId));
      const radius = await tuplesRead((db) =>
        createBlastRadiusService({ pool: db, identities: createIdentityReader(db), audit: createAuditReader(db) }).forTier(org.member, approvalId, tier),
      );
      const context = JSON.stringify({ page, radius });
      // The org has 5,038 identities and 3,240 rules; the tier's chains hold a few dozen of each.
      expect((radius.identities ?? 0) - (page.identities ?? 0), context).toBeLessThan(150);
      expect((radius.permission_rules ?? 0) - (page.permission_rules ?? 0), context).toBeLessThan(1_000);
    }
    await fresh.end();
  }, 120_000);

  it('counts a condition tier only for the pending approvals its condition holds for', async () => {
    // The condition tier (3) and the same keys without a condition: the condition holds for some
    // of the pending approvals it reaches by key, not for all of them.
    let held = 0;
    let failed = 0;
    for (const approvalId of org.pendingIds) {
      const answer = await service.forTier(org.admin, approvalId, 3);
      expect(answer.tier.condition).toBe(CONDITION);
      const amounts = await pool.any(sql.type(z.object({ amount: z.number() }))`
        SELECT (c.request_redacted->'body'->>'amount')::int AS amount FROM approvals a JOIN calls c ON c.id = a.call_id
        WHERE a.id = ANY(${sql.array(answer.pending_covered.map((x) => x.id), 'uuid')})`);
      for (const { amount } of amounts) expect(amount, `approval ${approvalId}`).toBeLessThanOrEqual(60);
      held += amounts.length;
      // The same keys with no condition reach more.
      const unconditional = await oracleWithoutCondition(approvalId);
      failed += unconditional - amounts.length;
    }
    expect(held).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
  }, 600_000);

  /** How many pending approvals tier 3's keys would cover with no condition (the old answer). */
  async function oracleWithoutCondition(approvalId: string): Promise<number> {
    await pool.query(sql.unsafe`UPDATE approvals SET suggested_tiers = suggested_tiers || jsonb_build_array((suggested_tiers->3) - 'condition') WHERE id = ${approvalId}`);
    try {
      return (await service.forTier(org.admin, approvalId, 4)).pending_covered.length;
    } finally {
      await pool.query(sql.unsafe`UPDATE approvals SET suggested_tiers = suggested_tiers - 4 WHERE id = ${approvalId}`);
    }
  }
});
