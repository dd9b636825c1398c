// The permission walk along an identity chain (requester first, the owning user last).
// Order of precedence: a user-kind requester skips the layer; then any matching unexpired deny
// on the chain wins; then every agent-kind identity must be covered for every key.

import type { RuleBudget } from './budgets.ts';
import { evaluateCondition, type ConditionRequest } from './conditions.ts';
import { matchesPattern } from './patterns.ts';

export type IdentityKind = 'user' | 'agent' | 'subagent';

export interface Identity {
  id: string;
  kind: IdentityKind;
  parentId: string | null;
  inheritPermissions: boolean;
}

export interface Rule {
  id: string;
  identityId: string;
  effect: 'allow' | 'deny';
  pattern: string;
  expiresAt: Date | null;
  /** A CEL condition on the request (core/permissions/conditions.ts): the rule applies only when it holds. */
  condition?: string | null;
  /** Calls or a sum per window (core/permissions/budgets.ts); an allow covers only within it. */
  budget?: RuleBudget | null;
}

/** An allow rule whose pattern matched an uncovered key but whose condition did not hold. */
export interface FailedCondition {
  ruleId: string;
  condition: string;
  /** "body.amount <= 50 was false: amount is 60" */
  explanation: string;
}

/** A budgeted allow that matched an uncovered key but whose budget cannot take this call. */
export interface ExhaustedBudget {
  ruleId: string;
  /** "at most 3 calls per hour: 3 used" */
  explanation: string;
}

export type Decision =
  /**
   * `coveredBy`: the allow chosen for each key on each checked identity (none for a person's own
   * call); `budgeted`: those with a budget (each must be charged before the send).
   */
  | { outcome: 'covered'; coveredBy: Rule[]; budgeted: Rule[] }
  | { outcome: 'denied'; rule: Rule; key: string }
  | {
      outcome: 'gap';
      gapIdentityId: string;
      firstResolverId: string;
      uncoveredKeys: string[];
      failedConditions: FailedCondition[];
      exhaustedBudgets: ExhaustedBudget[];
    };

export interface CheckInput {
  chain: readonly Identity[];
  rules: readonly Rule[];
  keys: readonly string[];
  now: Date;
  /** The call's request as conditions see it; without it no conditional rule applies. */
  request?: ConditionRequest | null;
  /** Budgeted rules that cannot take this call (rule id → why); they do not apply. */
  exhausted?: ReadonlyMap<string, string>;
}

/** A malformed chain or empty key list is a caller bug; failing closed beats guessing. */
export class PermissionInputError extends Error {
  override name = 'PermissionInputError';
}

/** Whether a rule's condition holds for the request (a rule without one always applies). */
function conditionHolds(rule: Rule, request: ConditionRequest | null): boolean {
  return !rule.condition || evaluateCondition(rule.condition, request).holds;
}

/** A rule applies to a key when its pattern matches it and its condition holds. */
function appliesTo(rule: Rule, key: string, request: ConditionRequest | null): boolean {
  return matchesPattern(rule.pattern, key) && conditionHolds(rule, request);
}

/** A rule applies strictly before its expiry instant. */
export function isRuleActive(rule: Rule, now: Date): boolean {
  return rule.expiresAt === null || rule.expiresAt.getTime() > now.getTime();
}

function isAgentKind(identity: Identity): boolean {
  return identity.kind !== 'user';
}

/**
 * Only a subagent whose parent is agent-kind inherits: DESIGN gives the flag to subagents only,
 * and "inheriting" from a user (who is never checked) would silently allow everything.
 */
function inheritsFrom(identity: Identity, parent: Identity | undefined): boolean {
  return (
    identity.kind === 'subagent' &&
    identity.inheritPermissions &&
    parent !== undefined &&
    isAgentKind(parent)
  );
}

/** Checks links (each parentId is the next id), a user at the end and nowhere else. */
export function assertValidChain(chain: readonly Identity[]): void {
  if (chain.length === 0) throw new PermissionInputError('empty identity chain');
  chain.forEach((identity, i) => {
    const next = chain[i + 1];
    if (next === undefined) {
      if (identity.kind !== 'user' || identity.parentId !== null) {
        throw new PermissionInputError('identity chain must end with its user');
      }
    } else if (identity.kind === 'user' || identity.parentId !== next.id) {
      throw new PermissionInputError(`identity chain is broken at ${identity.id}`);
    }
  });
}

export function checkPermission(input: CheckInput): Decision {
  const { chain, keys, now } = input;
  const request = input.request ?? null;
  const exhausted = input.exhausted ?? new Map<string, string>();
  assertValidChain(chain);
  if (keys.length === 0) throw new PermissionInputError('no permission keys to check');
  if (chain[0]?.kind === 'user') return { outcome: 'covered', coveredBy: [], budgeted: [] };

  const onChain = new Set(chain.map((i) => i.id));
  const active = input.rules.filter((r) => onChain.has(r.identityId) && isRuleActive(r, now));

  // Deny wins anywhere on the chain, the user included; report the one closest to the requester.
  for (const identity of chain) {
    for (const rule of active) {
      if (rule.identityId !== identity.id || rule.effect !== 'deny') continue;
      const key = keys.find((k) => appliesTo(rule, k, request));
      if (key !== undefined) return { outcome: 'denied', rule, key };
    }
  }

  const { uncovered, chosen } = coverByIdentity(chain, active, keys, request, exhausted);
  const isCovered = (n: number): boolean => (uncovered[n]?.length ?? 0) === 0;
  const gapIndex = chain.findIndex((_, n) => !isCovered(n));
  if (gapIndex < 0) return { outcome: 'covered', coveredBy: chosen, budgeted: chosen.filter((r) => r.budget) };

  const gap = chain[gapIndex] as Identity;
  // The user ends the chain and counts as covered, so this always finds someone.
  const resolver = chain.find((_, n) => n > gapIndex && isCovered(n)) as Identity;
  const uncoveredKeys = uncovered[gapIndex] ?? [];
  return {
    outcome: 'gap',
    gapIdentityId: gap.id,
    firstResolverId: resolver.id,
    uncoveredKeys,
    failedConditions: failedConditions(ruleOwner(chain, gapIndex), active, uncoveredKeys, request),
    exhaustedBudgets: active
      .filter((r) => r.identityId === ruleOwner(chain, gapIndex).id && exhausted.has(r.id) && uncoveredKeys.some((k) => appliesTo(r, k, request)))
      .map((r) => ({ ruleId: r.id, explanation: exhausted.get(r.id) as string })),
  };
}

/**
 * The budgeted allows a call falls under, whatever their budgets still hold: on each checked
 * identity, for each key, the allow a cover would choose (one without a budget first, so a key
 * covered without a budget charges nothing there). What an approved call is charged to when it is
 * sent. None for a person's own call.
 */
export function budgetedRulesFor(input: CheckInput): Rule[] {
  const { chain, keys, now } = input;
  assertValidChain(chain);
  if (chain[0]?.kind === 'user') return [];
  const onChain = new Set(chain.map((i) => i.id));
  const active = input.rules.filter((r) => onChain.has(r.identityId) && isRuleActive(r, now));
  return coverByIdentity(chain, active, keys, input.request ?? null).chosen.filter((r) => r.budget);
}

/** The identity whose own rules decide position `index` (an inheriting subagent's rules are its parent's). */
function ruleOwner(chain: readonly Identity[], index: number): Identity {
  let i = index;
  while (inheritsFrom(chain[i] as Identity, chain[i + 1])) i++;
  return chain[i] as Identity;
}

/** The owner's conditional allows that matched an uncovered key by pattern but not by condition. */
function failedConditions(owner: Identity, active: readonly Rule[], uncoveredKeys: readonly string[], request: ConditionRequest | null): FailedCondition[] {
  return active
    .filter((r) => r.identityId === owner.id && r.effect === 'allow' && r.condition && uncoveredKeys.some((k) => matchesPattern(r.pattern, k)))
    .map((r) => ({ ruleId: r.id, condition: r.condition as string, explanation: evaluateCondition(r.condition as string, request).explanation }));
}

/**
 * Per chain position, the keys that identity is not covered for, and the budgeted allows the
 * covered keys rely on. An allow without a budget is preferred, so a budget is charged only when
 * nothing else covers the key. Computed from the user end down so an inheriting subagent can take
 * its parent's result. The user is never checked.
 */
function coverByIdentity(
  chain: readonly Identity[],
  activeRules: readonly Rule[],
  keys: readonly string[],
  request: ConditionRequest | null,
  exhausted: ReadonlyMap<string, string> = new Map(),
): { uncovered: string[][]; chosen: Rule[] } {
  const uncovered: string[][] = new Array<string[]>(chain.length);
  const chosen = new Set<Rule>();
  for (let i = chain.length - 1; i >= 0; i--) {
    const identity = chain[i] as Identity;
    if (!isAgentKind(identity)) {
      uncovered[i] = [];
    } else if (inheritsFrom(identity, chain[i + 1])) {
      uncovered[i] = uncovered[i + 1] ?? [...keys];
    } else {
      const allows = activeRules.filter((r) => r.identityId === identity.id && r.effect === 'allow' && !exhausted.has(r.id));
      uncovered[i] = [];
      for (const key of keys) {
        const applying = allows.filter((r) => appliesTo(r, key, request));
        const rule = applying.find((r) => !r.budget) ?? applying[0];
        if (rule) chosen.add(rule);
        else uncovered[i]!.push(key);
      }
    }
  }
  return { uncovered, chosen: [...chosen] };
}

/**
 * Where allow_remember plants its rule: `fromId` itself unless it inherits, else up the chain
 * while identities inherit.
 */
export function closestNonInheritingAncestor(chain: readonly Identity[], fromId: string): Identity {
  let index = chain.findIndex((i) => i.id === fromId);
  if (index < 0) throw new PermissionInputError(`identity ${fromId} is not on the chain`);
  while (inheritsFrom(chain[index] as Identity, chain[index + 1])) index++;
  return chain[index] as Identity;
}

/**
 * Agent-kind identities below `resolverId` that need a rule for the keys to become covered:
 * the non-inheriting ones that are not covered now. When the gap sits above the requester's own
 * planting point, planting only on closestNonInheritingAncestor would leave the call gapped.
 */
export function rememberTargets(input: CheckInput, resolverId: string): Identity[] {
  const { chain, keys, now } = input;
  assertValidChain(chain);
  const stop = chain.findIndex((i) => i.id === resolverId);
  if (stop < 0) throw new PermissionInputError(`resolver ${resolverId} is not on the chain`);
  const active = input.rules.filter((r) => isRuleActive(r, now));
  const { uncovered } = coverByIdentity(chain, active, keys, input.request ?? null, input.exhausted);
  return chain.filter(
    (identity, i) =>
      i < stop &&
      isAgentKind(identity) &&
      !inheritsFrom(identity, chain[i + 1]) &&
      (uncovered[i]?.length ?? 0) > 0,
  );
}
