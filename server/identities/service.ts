// Identities, agent keys and permission rules. Each method: authorize → load/validate → write.
// Visibility: admins see their org; members their own tree; agents their own subtree.
import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { isAncestor } from '../../core/permissions/ancestry.ts';
import { validatePattern } from '../../core/permissions/patterns.ts';
import { parseTtl } from '../../core/permissions/ttl.ts';
import { compileCondition } from '../../core/permissions/conditions.ts';
import { budgetLimit, validateBudget, windowMs, windowStart, type RuleBudget } from '../../core/permissions/budgets.ts';
import { usedInWindows } from './budget-store.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { agentMayManage } from '../auth/authority.ts';
import { AGENT_KEY_PREFIX, displayPrefix, hashToken, newToken } from '../auth/tokens.ts';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
// Revoking identities ends their OAuth bindings in the same transaction, so oauth's store is used here.
import { revokeBindingsOfAgents } from '../oauth/store.ts';
import type { OrgReader } from '../orgs/readers.ts';
import { decodeIdentityCursor, encodeIdentityCursor } from './cursor.ts';
import * as store from './store.ts';
import { identityPage } from './page-store.ts';

export interface CreateAgentInput {
  name: string;
  parent_id?: string | undefined;
  inherit_permissions?: boolean | undefined;
  auto_call_on_approve?: boolean | undefined;
  key_name?: string | undefined;
}

export interface UpdateAgentInput {
  name?: string | undefined;
  inherit_permissions?: boolean | undefined;
  auto_call_on_approve?: boolean | undefined;
}

export interface CreateRuleInput {
  effect: 'allow' | 'deny';
  pattern: string;
  ttl?: string | undefined;
  expires_at?: string | undefined;
  /** CEL over the request (core/permissions/conditions.ts). */
  condition?: string | undefined;
  /** `{calls, per}` or `{sum, max, per}` (core/permissions/budgets.ts). */
  budget?: unknown;
}

/** A rule's condition and budget as a client sent them, checked: 400 naming the field (and the condition's position). */
export function checkedRuleExtras(input: { effect: 'allow' | 'deny'; condition?: string | undefined; budget?: unknown }): { condition: string | null; budget: RuleBudget | null } {
  let condition: string | null = null;
  if (input.condition !== undefined) {
    const compiled = compileCondition(input.condition);
    if (!compiled.ok) throw invalidRequest(`invalid condition at position ${compiled.position}: ${compiled.message}`, { field: 'condition', position: compiled.position });
    condition = input.condition;
  }
  let budget: RuleBudget | null = null;
  if (input.budget !== undefined) {
    if (input.effect !== 'allow') throw invalidRequest('only an allow rule may carry a budget', { field: 'budget' });
    const checked = validateBudget(input.budget);
    if (!checked.ok) throw invalidRequest(checked.message, { field: checked.field });
    budget = checked.budget;
  }
  return { condition, budget };
}

export function publicIdentity(row: store.IdentityRow) {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    org_id: row.org_id,
    parent_id: row.parent_id,
    user_id: row.user_id,
    ...(row.kind === 'user' ? { email: row.email, role: row.role } : {}),
    ...(row.kind === 'subagent' ? { inherit_permissions: row.inherit_permissions } : {}),
    ...(row.kind !== 'user' ? { auto_call_on_approve: row.auto_call_on_approve } : {}),
    status: row.status,
    created_at: row.created_at.toISOString(),
  };
}

/** A budget's current window and what it used (null without a budget). */
function budgetUsage(r: store.RuleRow, used: ReadonlyMap<string, number>, now: Date) {
  if (!r.budget) return null;
  const start = windowStart(r.budget, now);
  return { used: used.get(r.id) ?? 0, limit: budgetLimit(r.budget), window_start: start.toISOString(), resets_at: new Date(start.getTime() + windowMs(r.budget.per)!).toISOString() };
}

export function publicRule(r: store.RuleRow, used: ReadonlyMap<string, number> = new Map(), now = new Date()) {
  return {
    id: r.id,
    identity_id: r.identity_id,
    effect: r.effect,
    pattern: r.pattern,
    expires_at: r.expires_at?.toISOString() ?? null,
    source: r.source,
    approval_id: r.approval_id,
    created_by: r.created_by,
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
    condition: r.condition,
    budget: r.budget,
    budget_usage: budgetUsage(r, used, now),
  };
}

export function publicKey(k: store.AgentKeyRow) {
  return {
    id: k.id,
    identity_id: k.identity_id,
    prefix: k.prefix,
    name: k.name,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
  };
}

export function createIdentityService(deps: {
  pool: DatabasePool;
  /** The org named beside the principal's chain (`me`). */
  orgs: Pick<OrgReader, 'getOrg'>;
  /** Ends what the revoked identities still had open: their pending approvals (cancelled with `reason`). */
  closePendingOf?: (requesterIds: string[], reason: string) => Promise<void>;
  /** The moment whose budget windows the rules' usage is read from (server/services.ts). */
  budgetClock?: () => Date;
}) {
  const { pool } = deps;

  /** The identity if the principal may see it; 404 otherwise, so ids of others never leak. */
  async function loadVisible(p: Principal, id: string): Promise<store.IdentityRow> {
    const row = await store.getIdentity(pool, id);
    if (!row || row.org_id !== p.orgId) throw notFound('identity');
    if (isAdmin(p)) return row;
    if (p.type === 'user') {
      if (row.user_id === p.userId) return row;
      throw notFound('identity');
    }
    if (row.id === p.identityId) return row;
    const chain = await store.getChain(pool, row.id);
    if (chain.some((c) => c.id === p.identityId)) return row;
    throw notFound('identity');
  }

  /**
   * May the principal manage this identity? Humans manage their own tree (admins the org). An
   * agent may create subagents under itself or a descendant (`under`), but keys, revocation and
   * archiving apply only to strict descendants (server/auth/authority.ts, the one rule).
   */
  async function assertManages(p: Principal, target: store.IdentityRow, mode: 'under' | 'manage' = 'manage'): Promise<void> {
    if (p.type === 'user') {
      if (isAdmin(p) || target.user_id === p.userId) return;
      throw forbidden('you may only manage identities in your own tree');
    }
    if (mode === 'under' && target.id === p.identityId) return;
    const chain = await store.getChain(pool, target.id);
    if (!agentMayManage(p, chain)) throw forbidden('agents may only manage subagents below themselves');
  }

  function assertActive(row: store.IdentityRow): void {
    if (row.status !== 'active') throw new AppError('conflict', `identity is ${row.status}`);
  }

  /**
   * Takes `name` for a child of `parent` (inside the caller's transaction): the active children of
   * one parent — a person's agents, an agent's subagents — never share a name, case aside, so a
   * chain read as names ("dana › release-bot") always means one identity.
   */
  async function claimName(tx: DatabaseTransactionConnection, parent: store.IdentityRow, name: string, exceptId: string | null) {
    await store.lockChildNames(tx, parent.id);
    const taken = await store.activeChildNamed(tx, parent.id, name, exceptId);
    if (taken) {
      const what = parent.kind === 'user' ? 'an agent' : 'a subagent';
      throw conflict(`${parent.name} already has ${what} named "${taken.name}": choose another name`, { field: 'name', identity_id: taken.id });
    }
  }

  return {
    loadVisible,

    async me(p: Principal) {
      const chain = await store.getChain(pool, p.identityId);
      const self = chain[0];
      if (!self) throw notFound('identity');
      const org = await deps.orgs.getOrg(p.orgId);
      return {
        identity: publicIdentity(self),
        chain: chain.map(publicIdentity),
        org: { id: org.id, name: org.name },
        authenticated_via: p.type === 'user' ? 'session' : p.via,
      };
    },

    /** A keyset page, oldest first: the org (admins), the person's tree (members) or the agent's subtree. */
    async list(p: Principal, q: { kind?: string | undefined; status?: string | undefined; limit: number; cursor?: string | undefined }) {
      const rows = await identityPage(pool, {
        orgId: p.orgId,
        within: isAdmin(p) ? { org: true } : p.type === 'user' ? { userId: p.userId } : { rootId: p.identityId },
        kind: q.kind,
        status: q.status,
        after: q.cursor === undefined ? undefined : decodeIdentityCursor(q.cursor),
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return {
        identities: page.map(({ at_micros: _at, ...row }) => publicIdentity(row)),
        next_cursor: rows.length > q.limit && last ? encodeIdentityCursor(last) : null,
      };
    },

    async get(p: Principal, id: string) {
      return publicIdentity(await loadVisible(p, id));
    },

    async createAgent(p: Principal, input: CreateAgentInput) {
      const parent = await loadVisible(p, input.parent_id ?? p.identityId);
      await assertManages(p, parent, 'under');
      assertActive(parent);
      if (input.inherit_permissions && parent.kind === 'user') {
        throw invalidRequest('inherit_permissions applies to subagents only (the parent must be an agent)');
      }
      const token = newToken(AGENT_KEY_PREFIX);
      const result = await pool.transaction(async (tx) => {
        await claimName(tx, parent, input.name, null);
        const identity = await store.createAgent(tx, {
          orgId: p.orgId,
          parent,
          name: input.name,
          inheritPermissions: input.inherit_permissions ?? false,
          autoCallOnApprove: input.auto_call_on_approve ?? true,
          createdBy: p.identityId,
        });
        const key = await store.createAgentKey(tx, {
          identityId: identity.id,
          prefix: displayPrefix(token),
          tokenHash: hashToken(token),
          name: input.key_name ?? null,
          createdBy: p.identityId,
        });
        return { identity, key };
      });
      return { identity: publicIdentity(result.identity), key: { ...publicKey(result.key), token } };
    },

    /**
     * People only: inheriting widens what a subagent may do, so an agent never flips it (nor
     * auto_call_on_approve) for itself or its subagents, nor renames one. A new name must be free
     * among its siblings.
     */
    async update(p: Principal, id: string, input: UpdateAgentInput) {
      if (p.type !== 'user') throw forbidden('only people may rename an agent or change its settings');
      const target = await loadVisible(p, id);
      await assertManages(p, target);
      assertActive(target);
      if (target.kind === 'user' || target.parent_id === null) throw invalidRequest('names and settings here apply to agents and subagents, not users');
      if (input.inherit_permissions !== undefined && target.kind !== 'subagent') {
        throw invalidRequest('inherit_permissions applies to subagents only (the parent must be an agent)', { field: 'inherit_permissions' });
      }
      const parentId = target.parent_id;
      const updated = await pool.transaction(async (tx) => {
        if (input.name !== undefined) {
          const parent = await store.getIdentity(tx, parentId);
          if (!parent) throw notFound('identity');
          await claimName(tx, parent, input.name, target.id);
        }
        return store.updateAgent(tx, target.id, { name: input.name, inheritPermissions: input.inherit_permissions, autoCallOnApprove: input.auto_call_on_approve });
      });
      return publicIdentity(updated);
    },

    /** Revoking or archiving an identity does the same to its whole subtree and kills its keys. */
    async setStatus(p: Principal, id: string, status: 'revoked' | 'archived') {
      const target = await loadVisible(p, id);
      if (target.id === p.identityId) throw forbidden(`you cannot ${status === 'revoked' ? 'revoke' : 'archive'} yourself`);
      if (target.kind === 'user' && !isAdmin(p)) throw forbidden('only admins may revoke users');
      await assertManages(p, target);
      const subtree = await store.getSubtree(pool, target.id);
      // Total: the subtree's keys, the keys they minted, and the OAuth grants bound to any of them.
      await pool.transaction(async (tx) => {
        await store.setStatus(tx, subtree.map((s) => s.id), status);
        await revokeBindingsOfAgents(tx, subtree.filter((s) => s.kind !== 'user').map((s) => s.id));
      });
      // Their open approvals leave every inbox: nobody should decide for an identity that is gone.
      await deps.closePendingOf?.(subtree.map((s) => s.id), `the requesting ${target.kind} was ${status}`);
      return publicIdentity((await store.getIdentity(pool, id))!);
    },

    async listKeys(p: Principal, id: string) {
      const target = await loadVisible(p, id);
      await assertManages(p, target);
      return (await store.listAgentKeys(pool, target.id)).map(publicKey);
    },

    async createKey(p: Principal, id: string, name: string | undefined) {
      const target = await loadVisible(p, id);
      await assertManages(p, target);
      assertActive(target);
      if (target.kind === 'user') throw invalidRequest('agent keys belong to agents and subagents, not users');
      const token = newToken(AGENT_KEY_PREFIX);
      const key = await store.createAgentKey(pool, {
        identityId: target.id,
        prefix: displayPrefix(token),
        tokenHash: hashToken(token),
        name: name ?? null,
        createdBy: p.identityId,
      });
      return { ...publicKey(key), token };
    },

    async revokeKey(p: Principal, id: string, keyId: string) {
      const target = await loadVisible(p, id);
      await assertManages(p, target);
      if (!(await store.revokeAgentKey(pool, target.id, keyId))) throw notFound('agent key');
    },

    async listRules(p: Principal, id: string, includeRevoked: boolean) {
      const target = await loadVisible(p, id);
      const rules = await store.listRules(pool, target.id, includeRevoked);
      const now = deps.budgetClock?.() ?? new Date();
      const used = await usedInWindows(pool, rules.flatMap((r) => (r.budget ? [{ ruleId: r.id, windowStart: windowStart(r.budget, now) }] : [])));
      return rules.map((r) => publicRule(r, used, now));
    },

    /** Humans only: an agent can never widen its own (or anyone's) permissions. */
    async createRule(p: Principal, id: string, input: CreateRuleInput) {
      if (p.type !== 'user') throw forbidden('only people may create permission rules');
      const target = await loadVisible(p, id);
      await assertManages(p, target);
      if (target.kind === 'user') throw invalidRequest('rules apply to agents and subagents; a user is never checked');
      const check = validatePattern(input.pattern);
      if (!check.ok) throw invalidRequest(`invalid pattern: ${check.reason}`, { field: 'pattern' });
      const extras = checkedRuleExtras(input);
      let expiresAt: Date | null = null;
      if (input.ttl !== undefined && input.expires_at !== undefined) throw invalidRequest('give either ttl or expires_at, not both');
      if (input.ttl !== undefined) {
        const ttl = parseTtl(input.ttl);
        if (!ttl.ok) throw invalidRequest(ttl.message, { field: 'ttl' });
        expiresAt = new Date(Date.now() + ttl.ms);
      } else if (input.expires_at !== undefined) {
        expiresAt = new Date(input.expires_at);
        if (expiresAt.getTime() <= Date.now()) throw invalidRequest('expires_at must be in the future', { field: 'expires_at' });
      }
      const rule = await store.createRule(pool, {
        orgId: p.orgId,
        identityId: target.id,
        effect: input.effect,
        pattern: input.pattern,
        expiresAt,
        source: 'manual',
        approvalId: null,
        createdBy: p.identityId,
        ...extras,
      });
      return publicRule(rule);
    },

    async revokeRule(p: Principal, id: string, ruleId: string) {
      if (p.type !== 'user') throw forbidden('only people may revoke permission rules');
      const target = await loadVisible(p, id);
      await assertManages(p, target);
      if (!(await store.revokeRule(pool, target.id, ruleId))) throw notFound('rule');
    },

    /** For approvals (issue 5): is `ancestorId` above `descendantId`? */
    async isAncestorOf(ancestorId: string, descendantId: string): Promise<boolean> {
      const chain = await store.getChain(pool, descendantId);
      return isAncestor(chain.map(store.toChainIdentity), ancestorId, descendantId);
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
