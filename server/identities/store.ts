// SQL for identities, agent keys and permission rules. No authorization here: the service decides
// who may do what; this module only reads and writes rows. Other features read identities through
// readers.ts, handed to them by the composition root.
import { prepared } from '../db/prepared.ts';
import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { Identity as ChainIdentity, Rule } from '../../core/permissions/chain.ts';
import type { RuleBudget } from '../../core/permissions/budgets.ts';
import { ruleScope } from '../../core/permissions/rule-scope.ts';
// An agent key's read carries its org's approval settings (one statement): their row type is orgs'.
import type { OrgRow } from '../orgs/readers.ts';

export const identityRow = z.object({
  id: z.string(),
  org_id: z.string(),
  kind: z.enum(['user', 'agent', 'subagent']),
  parent_id: z.string().nullable(),
  user_id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  role: z.enum(['admin', 'member', 'approver']).nullable(),
  inherit_permissions: z.boolean(),
  auto_call_on_approve: z.boolean(),
  status: z.enum(['active', 'archived', 'revoked']),
  created_by: z.string().nullable(),
  created_at: z.date(),
  archived_at: z.date().nullable(),
});
export type IdentityRow = z.infer<typeof identityRow>;

const IDENTITY_COLUMNS = sql.fragment`
  id, org_id, kind, parent_id, user_id, name, email, role, inherit_permissions,
  auto_call_on_approve, status, created_by, created_at, archived_at`;

/** A stored budget (validated at save by core/permissions/budgets.ts validateBudget). */
const ruleBudget = z.union([
  z.object({ calls: z.number(), per: z.string() }),
  z.object({ sum: z.string(), max: z.number(), per: z.string() }),
]) as z.ZodType<RuleBudget>;

export const ruleRow = z.object({
  id: z.string(),
  org_id: z.string(),
  identity_id: z.string(),
  effect: z.enum(['allow', 'deny']),
  pattern: z.string(),
  expires_at: z.date().nullable(),
  condition: z.string().nullable(),
  budget: ruleBudget.nullable(),
  source: z.enum(['manual', 'approval']),
  approval_id: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.date(),
  revoked_at: z.date().nullable(),
});
export type RuleRow = z.infer<typeof ruleRow>;

export const agentKeyRow = z.object({
  id: z.string(),
  identity_id: z.string(),
  prefix: z.string(),
  name: z.string().nullable(),
  created_by: z.string(),
  created_at: z.date(),
  last_used_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
});
export type AgentKeyRow = z.infer<typeof agentKeyRow>;

type Db = CommonQueryMethods;

export async function createUser(
  db: Db,
  u: { orgId: string; name: string; email: string; role: 'admin' | 'member' | 'approver'; passwordHash: string; createdBy: string | null },
): Promise<IdentityRow> {
  return db.one(sql.type(identityRow)`
    WITH new_id AS (SELECT gen_random_uuid() AS id)
    INSERT INTO identities (id, org_id, kind, user_id, name, email, role, password_hash, created_by)
    SELECT id, ${u.orgId}, 'user', id, ${u.name}, ${u.email}, ${u.role}, ${u.passwordHash}, ${u.createdBy} FROM new_id
    RETURNING ${IDENTITY_COLUMNS}`);
}

export async function createAgent(
  db: Db,
  a: { orgId: string; parent: IdentityRow; name: string; inheritPermissions: boolean; autoCallOnApprove: boolean; createdBy: string },
): Promise<IdentityRow> {
  const kind = a.parent.kind === 'user' ? 'agent' : 'subagent';
  return db.one(sql.type(identityRow)`
    INSERT INTO identities (org_id, kind, parent_id, user_id, name, inherit_permissions, auto_call_on_approve, created_by)
    VALUES (${a.orgId}, ${kind}, ${a.parent.id}, ${a.parent.user_id}, ${a.name}, ${kind === 'subagent' && a.inheritPermissions},
            ${a.autoCallOnApprove}, ${a.createdBy})
    RETURNING ${IDENTITY_COLUMNS}`);
}

/** Name and settings of an agent or subagent; absent fields stay as they are. */
export async function updateAgent(
  db: Db,
  id: string,
  u: { name?: string | undefined; inheritPermissions?: boolean | undefined; autoCallOnApprove?: boolean | undefined },
): Promise<IdentityRow> {
  return db.one(sql.type(identityRow)`
    UPDATE identities SET
      name = coalesce(${u.name ?? null}::text, name),
      inherit_permissions = coalesce(${u.inheritPermissions ?? null}::boolean, inherit_permissions),
      auto_call_on_approve = coalesce(${u.autoCallOnApprove ?? null}::boolean, auto_call_on_approve)
    WHERE id = ${id} AND kind <> 'user'
    RETURNING ${IDENTITY_COLUMNS}`);
}

/**
 * Names among the children of one parent are taken one at a time (create, rename): with this
 * transaction-scoped lock held, checking a name and then writing it cannot race another request.
 */
export async function lockChildNames(db: Db, parentId: string): Promise<void> {
  await db.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`identity-names:${parentId}`}, 7242008))`);
}

/** The active child of `parentId` called `name` (case aside), other than `exceptId`. */
export const activeChildNamed = (db: Db, parentId: string, name: string, exceptId: string | null) =>
  db.maybeOne(sql.type(identityRow)`
    SELECT ${IDENTITY_COLUMNS} FROM identities
    WHERE parent_id = ${parentId} AND status = 'active' AND lower(name) = lower(${name})
      ${exceptId ? sql.fragment`AND id <> ${exceptId}` : sql.fragment``}
    LIMIT 1`);

export const getIdentity = (db: Db, id: string) =>
  db.maybeOne(sql.type(identityRow)`SELECT ${IDENTITY_COLUMNS} FROM identities WHERE id = ${id}`);

const userWithPassword = identityRow.extend({ password_hash: z.string() });

export const getUserByEmail = (db: Db, email: string) =>
  db.maybeOne(
    sql.type(userWithPassword)`
      SELECT ${IDENTITY_COLUMNS}, password_hash FROM identities WHERE kind = 'user' AND lower(email) = lower(${email})`,
  );

/** The identity and its ancestors, requester first, the user last. */
export async function getChain(db: Db, id: string): Promise<IdentityRow[]> {
  const rows = await db.any(sql.type(chainRow)`
    WITH RECURSIVE chain AS (
      SELECT i.*, 0 AS depth FROM identities i WHERE i.id = ${id}
      UNION ALL
      SELECT p.*, c.depth + 1 FROM identities p JOIN chain c ON p.id = c.parent_id WHERE c.depth < 64
    )
    SELECT ${IDENTITY_COLUMNS}, depth FROM chain ORDER BY depth`);
  return rows.map(({ depth: _depth, ...r }) => r);
}

const chainRow = identityRow.extend({ depth: z.number() });

const ruleJson = z.object({ id: z.string(), effect: z.enum(['allow', 'deny']), pattern: z.string(), expires_at: z.string().nullable(), condition: z.string().nullable(), budget: ruleBudget.nullable() });
const chainWithRulesRow = chainRow.extend({ rules: z.array(ruleJson) });

// Row schemas are built once per `extra` schema: building (and compiling) a zod schema costs more
// than validating with it, and this runs on every call.
const extendedRows = new WeakMap<z.ZodTypeAny, z.ZodTypeAny>();
function withExtra(schema: z.ZodTypeAny) {
  let row = extendedRows.get(schema);
  if (!row) extendedRows.set(schema, (row = chainWithRulesRow.extend({ extra: schema })));
  return row as typeof chainWithRulesRow;
}

/**
 * Only the rules a check of `keys` can need (core/permissions/rule-scope.ts): the expressions of
 * the index permission_rules_identity_scope (migrations/0030), so a chain with thousands of rules
 * reads the few that name the keys' service and action, or `*`. Read oldest first (the engine
 * takes the first rule that covers a key, and the audit names it): the same whatever index is used.
 */
function inScope(keys: readonly string[]) {
  const scope = ruleScope(keys);
  return sql.fragment`split_part(r.pattern, ':', 1) = ANY(${sql.array(scope.services, 'text')}) AND split_part(r.pattern, ':', 2) = ANY(${sql.array(scope.actions, 'text')})`;
}

/**
 * The chain's rows with their live rules (those `keys` can need), as a statement other statements can extend: `with` adds
 * CTEs after the chain's and `also` a column to every row (e.g. the covered call's send claim, so the
 * check and the mark share one round trip).
 */
export function chainWithRulesQuery<T extends z.ZodTypeAny>(id: string, keys: readonly string[], extra?: { with: ReturnType<typeof sql.fragment>; also: ReturnType<typeof sql.fragment>; schema: T }) {
  const rowSchema = extra ? withExtra(extra.schema) : chainWithRulesRow;
  return sql.type(rowSchema)`
    WITH RECURSIVE chain AS (
      SELECT i.*, 0 AS depth FROM identities i WHERE i.id = ${id}
      UNION ALL
      SELECT p.*, c.depth + 1 FROM identities p JOIN chain c ON p.id = c.parent_id WHERE c.depth < 64
    )${extra ? sql.fragment`, ${extra.with}` : sql.fragment``}
    SELECT ${IDENTITY_COLUMNS}, depth,
      COALESCE((SELECT json_agg(json_build_object('id', r.id, 'effect', r.effect, 'pattern', r.pattern, 'expires_at', r.expires_at, 'condition', r.condition, 'budget', r.budget) ORDER BY r.created_at, r.id)
                FROM permission_rules r WHERE r.identity_id = chain.id AND r.revoked_at IS NULL AND ${inScope(keys)}), '[]') AS rules
      ${extra ? sql.fragment`, ${extra.also} AS extra` : sql.fragment``}
    FROM chain ORDER BY depth`;
}

/** Splits the rows of `chainWithRulesQuery` into the chain (requester first) and its rules. */
export function chainAndRules(rows: ReadonlyArray<z.infer<typeof chainWithRulesRow> & { extra?: unknown }>): { chain: IdentityRow[]; rules: Rule[] } {
  const rules: Rule[] = [];
  for (const r of rows) {
    for (const rule of r.rules) {
      rules.push({ id: rule.id, identityId: r.id, effect: rule.effect, pattern: rule.pattern, expiresAt: rule.expires_at === null ? null : new Date(rule.expires_at), condition: rule.condition, budget: rule.budget });
    }
  }
  return { chain: rows.map(({ depth: _depth, rules: _rules, extra: _extra, ...r }) => r), rules };
}

/** The chain (requester first) and every live rule on it that `keys` can need, in one round trip (the permission check). */
export async function getChainWithRules(db: Db, id: string, keys: readonly string[]): Promise<{ chain: IdentityRow[]; rules: Rule[] }> {
  return chainAndRules(await db.any(prepared(chainWithRulesQuery(id, keys))));
}

/** The identity and all of its descendants. */
export async function getSubtree(db: Db, rootId: string): Promise<IdentityRow[]> {
  const rows = await db.any(sql.type(identityRow.extend({ depth: z.number() }))`
    WITH RECURSIVE tree AS (
      SELECT i.*, 0 AS depth FROM identities i WHERE i.id = ${rootId}
      UNION ALL
      SELECT c.*, t.depth + 1 FROM identities c JOIN tree t ON c.parent_id = t.id WHERE t.depth < 64
    )
    SELECT ${IDENTITY_COLUMNS}, depth FROM tree ORDER BY depth, created_at`);
  return rows.map(({ depth: _depth, ...r }) => r);
}

export const listOrgIdentities = (db: Db, orgId: string) =>
  db.any(sql.type(identityRow)`SELECT ${IDENTITY_COLUMNS} FROM identities WHERE org_id = ${orgId} ORDER BY created_at`);


export async function setStatus(db: Db, ids: readonly string[], status: 'archived' | 'revoked'): Promise<void> {
  if (ids.length === 0) return;
  await db.query(sql.unsafe`
    UPDATE identities SET status = ${status}, archived_at = COALESCE(archived_at, now())
    WHERE id = ANY(${sql.array(ids, 'uuid')}) AND status <> 'revoked'`);
  // Every key of these identities, and every key an agent among them minted (wherever it points;
  // keys a person minted stay with the identities they belong to).
  await db.query(sql.unsafe`
    UPDATE agent_keys k SET revoked_at = now()
    WHERE k.revoked_at IS NULL AND (k.identity_id = ANY(${sql.array(ids, 'uuid')})
      OR k.created_by IN (SELECT id FROM identities WHERE id = ANY(${sql.array(ids, 'uuid')}) AND kind <> 'user'))`);
}

// Agent keys ----------------------------------------------------------------------------------

export async function createAgentKey(
  db: Db,
  k: { identityId: string; prefix: string; tokenHash: Buffer; name: string | null; createdBy: string },
): Promise<AgentKeyRow> {
  return db.one(sql.type(agentKeyRow)`
    INSERT INTO agent_keys (identity_id, prefix, token_hash, name, created_by)
    VALUES (${k.identityId}, ${k.prefix}, ${sql.binary(k.tokenHash)}, ${k.name}, ${k.createdBy})
    RETURNING id, identity_id, prefix, name, created_by, created_at, last_used_at, revoked_at`);
}

const agentKeyChainRow = identityRow.extend({
  depth: z.number(),
  key_id: z.string(),
  last_used_at: z.date().nullable(),
  approval_ttl_seconds: z.number(),
  approval_auto_bubble_seconds: z.number().nullable(),
  max_pending_per_agent: z.number(),
});

export interface AgentKeyWithChain {
  keyId: string;
  lastUsedAt: Date | null;
  /** The key's identity first, its user last. */
  chain: IdentityRow[];
  org: Pick<OrgRow, 'approval_ttl_seconds' | 'approval_auto_bubble_seconds' | 'max_pending_per_agent'>;
}

/**
 * A read that rides along another statement (an authentication, an allow's decision): a SQL
 * expression of one JSON value, given the org, the user and the identity (the key's agent, the
 * session's user, the requester) as SQL expressions; it comes back as `alongside` (one statement,
 * not two).
 */
export type RideAlongRead = (org: FragmentSqlToken, user: FragmentSqlToken, identity: FragmentSqlToken) => FragmentSqlToken;

/**
 * The principal behind an agent key plus what a call needs next, in the same round trip: the
 * whole chain and the org's approval settings, and what `alongside` reads. A key only
 * authenticates while it is live and it, its (non-user) identity and every ancestor are active.
 */
const agentKeyWithAlongside = agentKeyChainRow.extend({ alongside: z.unknown() });

export async function findAgentKeyWithChain(db: Db, tokenHash: Buffer, alongside?: RideAlongRead): Promise<(AgentKeyWithChain & { alongside: unknown }) | null> {
  const rows = await db.any(prepared(sql.type(agentKeyWithAlongside)`
    WITH RECURSIVE key AS (
      SELECT id AS key_id, identity_id, last_used_at FROM agent_keys WHERE token_hash = ${sql.binary(tokenHash)} AND revoked_at IS NULL
    ), chain AS (
      SELECT i.*, 0 AS depth FROM identities i JOIN key ON i.id = key.identity_id
      UNION ALL
      SELECT p.*, c.depth + 1 FROM identities p JOIN chain c ON p.id = c.parent_id WHERE c.depth < 64
    )
    SELECT c.*, key.key_id, key.last_used_at, o.approval_ttl_seconds, o.approval_auto_bubble_seconds, o.max_pending_per_agent,
      ${alongside ? sql.fragment`(SELECT ${alongside(sql.fragment`me.org_id`, sql.fragment`me.user_id`, sql.fragment`me.id`)} FROM chain me WHERE me.depth = 0)` : sql.fragment`NULL::json`} AS alongside
    FROM (SELECT ${IDENTITY_COLUMNS}, depth FROM chain) c CROSS JOIN key JOIN orgs o ON o.id = c.org_id
    ORDER BY c.depth`));
  const first = rows[0];
  if (!first || first.depth !== 0 || first.kind === 'user' || rows.some((r) => r.status !== 'active')) return null;
  return {
    keyId: first.key_id,
    lastUsedAt: first.last_used_at,
    chain: rows.map(({ depth: _d, key_id: _k, last_used_at: _l, approval_ttl_seconds: _t, approval_auto_bubble_seconds: _b, max_pending_per_agent: _m, alongside: _a, ...r }) => r),
    org: { approval_ttl_seconds: first.approval_ttl_seconds, approval_auto_bubble_seconds: first.approval_auto_bubble_seconds, max_pending_per_agent: first.max_pending_per_agent },
    alongside: first.alongside,
  };
}

export async function touchAgentKey(db: Db, keyId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE agent_keys SET last_used_at = now() WHERE id = ${keyId}`);
}

export const listAgentKeys = (db: Db, identityId: string) =>
  db.any(sql.type(agentKeyRow)`
    SELECT id, identity_id, prefix, name, created_by, created_at, last_used_at, revoked_at
    FROM agent_keys WHERE identity_id = ${identityId} ORDER BY created_at`);

export async function revokeAgentKey(db: Db, identityId: string, keyId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE agent_keys SET revoked_at = now() WHERE id = ${keyId} AND identity_id = ${identityId} AND revoked_at IS NULL`);
  return r.rowCount > 0;
}

// Permission rules -----------------------------------------------------------------------------

export async function createRule(
  db: Db,
  r: {
    orgId: string; identityId: string; effect: 'allow' | 'deny'; pattern: string; expiresAt: Date | null; source: 'manual' | 'approval'; approvalId: string | null; createdBy: string | null;
    /** Compiled and bounded by the caller (core/permissions/conditions.ts compileCondition). */
    condition?: string | null; budget?: RuleBudget | null;
  },
): Promise<RuleRow> {
  return db.one(sql.type(ruleRow)`
    INSERT INTO permission_rules (org_id, identity_id, effect, pattern, expires_at, source, approval_id, created_by, condition, budget)
    VALUES (${r.orgId}, ${r.identityId}, ${r.effect}, ${r.pattern},
            ${r.expiresAt ? sql.timestamp(r.expiresAt) : null}, ${r.source}, ${r.approvalId}, ${r.createdBy},
            ${r.condition ?? null}, ${r.budget ? sql.jsonb(r.budget as never) : null})
    RETURNING *`);
}

export const listRules = (db: Db, identityId: string, includeRevoked = false) =>
  db.any(sql.type(ruleRow)`
    SELECT * FROM permission_rules WHERE identity_id = ${identityId}
    ${includeRevoked ? sql.fragment`` : sql.fragment`AND revoked_at IS NULL`}
    ORDER BY created_at`);

/** A rule row in the shape the pure permission engine takes. */
const toRule = (r: RuleRow): Rule => ({ id: r.id, identityId: r.identity_id, effect: r.effect, pattern: r.pattern, expiresAt: r.expires_at, condition: r.condition, budget: r.budget });

/** Every live rule on a chain that `keys` can need, in the shape the pure permission engine takes. */
export async function rulesForChain(db: Db, identityIds: readonly string[], keys: readonly string[]): Promise<Rule[]> {
  const rows = await db.any(sql.type(ruleRow)`
    SELECT * FROM permission_rules r WHERE r.identity_id = ANY(${sql.array(identityIds, 'uuid')}) AND r.revoked_at IS NULL AND ${inScope(keys)}
    ORDER BY r.created_at, r.id`);
  return rows.map(toRule);
}

const chainLink = z.object({ id: z.string(), kind: z.enum(['user', 'agent', 'subagent']), parent_id: z.string().nullable(), inherit_permissions: z.boolean(), name: z.string() });
export type ChainLink = z.infer<typeof chainLink>;
const ruleOfChains = ruleJson.extend({ identity_id: z.string() });

/**
 * The chains of `ids` in `orgId` (each identity once, at most 65 links up from each id, as a
 * chain is walked) and the live rules on them that a check of `keys` can need (rule-scope.ts,
 * the index of migrations/0030): what judging those identities' keys reads, bounded by the
 * chains rather than the org. One round trip.
 */
export async function chainsWithRules(db: Db, orgId: string, ids: readonly string[], keys: readonly string[]): Promise<{ identities: ChainLink[]; rules: Rule[] }> {
  if (ids.length === 0) return { identities: [], rules: [] };
  const row = await db.one(sql.type(z.object({ identities: z.array(chainLink), rules: z.array(ruleOfChains) }))`
    WITH RECURSIVE chain AS (
      SELECT i.id, i.parent_id, i.kind, i.inherit_permissions, i.name, 0 AS depth FROM identities i WHERE i.org_id = ${orgId} AND i.id = ANY(${sql.array([...ids], 'uuid')})
      UNION
      SELECT p.id, p.parent_id, p.kind, p.inherit_permissions, p.name, c.depth + 1 FROM identities p JOIN chain c ON p.id = c.parent_id WHERE c.depth < 64 AND p.org_id = ${orgId}
    ), links AS (SELECT DISTINCT id, parent_id, kind, inherit_permissions, name FROM chain)
    SELECT
      -- The links carry their columns: joining identities again would read the org's.
      (SELECT coalesce(json_agg(json_build_object('id', id, 'kind', kind, 'parent_id', parent_id, 'inherit_permissions', inherit_permissions, 'name', name)), '[]')
         FROM links) AS identities,
      ${keys.length === 0 ? sql.fragment`'[]'::json` : sql.fragment`(SELECT coalesce(json_agg(json_build_object('id', r.id, 'identity_id', r.identity_id, 'effect', r.effect, 'pattern', r.pattern, 'expires_at', r.expires_at, 'condition', r.condition, 'budget', r.budget) ORDER BY r.created_at, r.id), '[]')
         FROM permission_rules r WHERE r.identity_id IN (SELECT id FROM links) AND r.revoked_at IS NULL AND ${inScope(keys)})`} AS rules`);
  return {
    identities: row.identities,
    rules: row.rules.map((r) => ({ id: r.id, identityId: r.identity_id, effect: r.effect, pattern: r.pattern, expiresAt: r.expires_at === null ? null : new Date(r.expires_at), condition: r.condition, budget: r.budget })),
  };
}

export async function revokeRule(db: Db, identityId: string, ruleId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE permission_rules SET revoked_at = now() WHERE id = ${ruleId} AND identity_id = ${identityId} AND revoked_at IS NULL`);
  return r.rowCount > 0;
}

export function toChainIdentity(row: IdentityRow): ChainIdentity {
  return { id: row.id, kind: row.kind, parentId: row.parent_id, inheritPermissions: row.inherit_permissions };
}
