// The permission check against a requester's live chain: statuses and rules as they are now (they
// may have changed since the call started or the approval was raised). The one place the call
// path reads a chain and judges it; the judging itself is core/permissions/chain.ts.
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { callAmount, windowStart } from '../../core/permissions/budgets.ts';
import { budgetedRulesFor, checkPermission, PermissionInputError, type Decision, type Rule } from '../../core/permissions/chain.ts';
import type { ConditionRequest } from '../../core/permissions/conditions.ts';
import type { ErrorBody } from '../../workflows/definitions.ts';
import { chargeAll, chargeRegardless } from './budget-store.ts';
import { getChainWithRules, toChainIdentity, type IdentityRow } from './store.ts';

export type LiveCheck = { inactive: IdentityRow; decision: null } | { inactive: null; decision: Decision };

/**
 * An inactive identity on the chain wins over any rule; otherwise the rules decide (PermissionInputError on bad input).
 * `request`: the call's redacted projection, for rules with a condition (without it, none applies).
 */
export async function checkLiveChain(db: CommonQueryMethods, requesterId: string, keys: readonly string[], request: ConditionRequest | null = null): Promise<LiveCheck> {
  return judgeChain(await getChainWithRules(db, requesterId, keys), keys, { request });
}

/**
 * Whether `keys` are all covered for `identityId`'s chain right now: false on a gap, a deny, an
 * inactive member or keys the rules cannot judge. What services take as their `covers` check.
 */
export function coverageCheck(db: CommonQueryMethods) {
  return async (identityId: string, keys: readonly string[]): Promise<boolean> => {
    try {
      return (await checkLiveChain(db, identityId, keys)).decision?.outcome === 'covered';
    } catch (err) {
      if (err instanceof PermissionInputError) return false;
      throw err;
    }
  };
}

/** What a check knows of the call beyond its keys: the request conditions read, budgets that cannot take it. */
export interface CallContext {
  request?: ConditionRequest | null;
  exhausted?: ReadonlyMap<string, string>;
}

/** The verdict on a chain already read (with its rules). */
export function judgeChain({ chain, rules }: { chain: IdentityRow[]; rules: Rule[] }, keys: readonly string[], context: CallContext = {}): LiveCheck {
  const inactive = chain.find((c) => c.status !== 'active');
  if (inactive) return { inactive, decision: null };
  return {
    inactive: null,
    decision: checkPermission({ chain: chain.map(toChainIdentity), rules, keys: [...keys], now: new Date(), request: context.request ?? null, ...(context.exhausted ? { exhausted: context.exhausted } : {}) }),
  };
}

/**
 * The covered path's verdict with budgets: a cover that relies on budgeted rules holds only once
 * each is charged for this call (all or none, atomically). A budget that cannot take the call is
 * left out and the chain judged again, so another rule may still cover it — else the gap says
 * which budget was spent. Charged here, at the check that decides the call is covered and right
 * before its send: calls that raise an approval or are denied never count. `call.at`: the moment
 * whose budget windows are charged (the gateway's budget clock).
 */
export async function judgeWithBudgets(pool: DatabasePool, read: { chain: IdentityRow[]; rules: Rule[] }, keys: readonly string[], call: BudgetedCall): Promise<LiveCheck> {
  const exhausted = new Map<string, string>();
  for (;;) {
    const check = judgeChain(read, keys, { request: call.request, exhausted });
    if (check.inactive || check.decision.outcome !== 'covered' || check.decision.budgeted.length === 0) return check;
    const refused = await chargeAll(
      pool,
      check.decision.budgeted.map((rule) => ({ ruleId: rule.id, budget: rule.budget!, callId: call.callId, windowStart: windowStart(rule.budget!, call.at), amount: callAmount(rule.budget!, call.request) })),
    );
    if (refused.size === 0) return check;
    // Each round leaves out at least one more rule: the loop ends within the number of rules.
    for (const [ruleId, reason] of refused) exhausted.set(ruleId, reason);
  }
}

/** A call as its budgets are charged: which call, what conditions read, and the moment whose windows count it. */
export interface BudgetedCall {
  callId: string;
  request: ConditionRequest | null;
  at: Date;
}

/**
 * An approved call about to be sent, once its re-check let it through: charged to the budgeted
 * allows it falls under (key and condition), past their limits if need be. The budget counts the
 * calls that were sent; a person's allow is not refused by it.
 */
export async function chargeApprovedSend(pool: DatabasePool, read: { chain: IdentityRow[]; rules: Rule[] }, keys: readonly string[], call: BudgetedCall): Promise<void> {
  if (read.chain.some((c) => c.status !== 'active')) return;
  const rules = budgetedRulesFor({ chain: read.chain.map(toChainIdentity), rules: read.rules, keys: [...keys], now: new Date(), request: call.request });
  await chargeRegardless(
    pool,
    rules.map((rule) => ({ ruleId: rule.id, budget: rule.budget!, callId: call.callId, windowStart: windowStart(rule.budget!, call.at), amount: callAmount(rule.budget!, call.request) })),
  );
}

/** The re-check before an approved call runs: a revoked identity or a new deny since the approval wins. */
export function recheckRefusal(check: LiveCheck): ErrorBody | null {
  if (check.inactive) return { code: 'forbidden', message: `identity ${check.inactive.id} is ${check.inactive.status}` };
  if (check.decision.outcome === 'denied') return { code: 'forbidden', message: `denied by rule "${check.decision.rule.pattern}" since the approval` };
  return null;
}
