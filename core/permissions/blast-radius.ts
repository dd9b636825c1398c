// What remembering a tier would reach beyond the approval at hand, computed with the same engine
// that gates calls: the rules allow_remember would plant (on the same identities as the workflow's
// plantRules), added to today's rules, checked against other pending approvals and past calls.
// A tier with a condition plants conditional rules: a pending approval is judged on its stored
// request (what the covered check would see); a past call has none here, so for past calls the
// tier is weighed by its keys only (the answer says so).
import {
  checkPermission,
  closestNonInheritingAncestor,
  rememberTargets,
  type Identity,
  type Rule,
} from './chain.ts';
import { evaluateCondition, type ConditionRequest } from './conditions.ts';
import { matchesPattern } from './patterns.ts';

export interface Gated {
  id: string;
  requesterId: string;
  keys: readonly string[];
}

/** A pending approval with the request its conditions are judged on (null: none stored). */
export interface GatedWithRequest extends Gated {
  request?: ConditionRequest | null;
}

export interface BlastRadiusInput {
  /** Every identity on the chains of the approval, of `pending` and of `pastCalls`, by id (walked through `parentId`). */
  identities: ReadonlyMap<string, Identity>;
  /**
   * Live rules: at least those on each of those chains that its keys can need (rule-scope.ts);
   * the engine keeps those on each chain and matching its keys.
   */
  rules: readonly Rule[];
  approval: Gated;
  /** Where the resolver sits: on the requester's chain, else the user (as plantRules does). */
  resolverId: string;
  tierKeys: readonly string[];
  /** The tier's condition (a derived tier): the remembered rules carry it. */
  tierCondition?: string | null;
  pending: readonly GatedWithRequest[];
  pastCalls: readonly Gated[];
  now: Date;
}

export interface BlastRadius {
  /** The identities the remembered rules would be planted on. */
  targetIds: string[];
  /** Pending approvals (other than this one) that would stop needing a decision. */
  coveredPendingIds: string[];
  /** Past calls whose keys the new rules take part in covering. */
  coveredCallIds: string[];
}

/** The chain requester-first, user-last; null when an identity is unknown or the links loop. */
export function chainOf(identities: ReadonlyMap<string, Identity>, id: string): Identity[] | null {
  const chain: Identity[] = [];
  let current: string | null = id;
  while (current !== null) {
    const identity = identities.get(current);
    if (!identity || chain.length > 64) return null;
    chain.push(identity);
    current = identity.parentId;
  }
  return chain;
}

/** Whether a rule planted with these patterns could match one of `keys` (else it cannot help cover them). */
export function touchesTier(tierKeys: readonly string[], keys: readonly string[]): boolean {
  return tierKeys.some((pattern) => keys.some((k) => matchesPattern(pattern, k)));
}

/** The identities the remembered rules would be planted on (no user: a user is never checked). */
export function ruleTargetIds(input: Pick<BlastRadiusInput, 'identities' | 'rules' | 'approval' | 'resolverId' | 'now'>): string[] {
  const chain = chainOf(input.identities, input.approval.requesterId);
  if (!chain) return [];
  const resolverOnChain = chain.some((c) => c.id === input.resolverId) ? input.resolverId : (chain.at(-1) as Identity).id;
  const targets = new Set([closestNonInheritingAncestor(chain, input.approval.requesterId).id]);
  for (const t of rememberTargets({ chain, rules: input.rules, keys: input.approval.keys, now: input.now }, resolverOnChain)) targets.add(t.id);
  return [...targets].filter((id) => input.identities.get(id)?.kind !== 'user');
}

export function blastRadius(input: BlastRadiusInput): BlastRadius {
  const targetIds = ruleTargetIds(input);
  if (targetIds.length === 0) return { targetIds: [], coveredPendingIds: [], coveredCallIds: [] };
  const plant = (condition: string | null): Rule[] =>
    targetIds.flatMap((identityId) =>
      input.tierKeys.map((pattern, n) => ({ id: `remembered:${identityId}:${n}`, identityId, effect: 'allow' as const, pattern, expiresAt: null, condition })),
    );
  const withCondition = plant(input.tierCondition ?? null);
  // Past calls have no request here: the tier is weighed by its keys.
  const byKeysOnly = plant(null);
  const pendingRules = [...input.rules, ...withCondition];
  const pastRules = [...input.rules, ...byKeysOnly];

  /** Covered with the new rules, and at least one new rule on its chain applies to one of its keys. */
  const covers = (g: Gated, planted: readonly Rule[], rules: readonly Rule[], request: ConditionRequest | null): boolean => {
    const c = chainOf(input.identities, g.requesterId);
    if (!c || g.keys.length === 0) return false;
    const onChain = new Set(c.map((i) => i.id));
    const applies = (r: Rule, k: string) => matchesPattern(r.pattern, k) && (!r.condition || evaluateCondition(r.condition, request).holds);
    const touched = planted.some((r) => onChain.has(r.identityId) && g.keys.some((k) => applies(r, k)));
    return touched && checkPermission({ chain: c, rules, keys: g.keys, now: input.now, request }).outcome === 'covered';
  };

  return {
    targetIds,
    coveredPendingIds: input.pending.filter((g) => g.id !== input.approval.id && covers(g, withCondition, pendingRules, g.request ?? null)).map((g) => g.id),
    coveredCallIds: input.pastCalls.filter((g) => covers(g, byKeysOnly, pastRules, null)).map((g) => g.id),
  };
}
