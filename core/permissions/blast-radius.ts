// What remembering a tier would reach beyond the approval at hand, computed with the same engine
// that gates calls: the rules allow_remember would plant (on the same identities as the workflow's
// plantRules), added to today's rules, checked against other pending approvals and past calls.
import {
  checkPermission,
  closestNonInheritingAncestor,
  rememberTargets,
  type Identity,
  type Rule,
} from './chain.ts';
import { matchesPattern } from './patterns.ts';

export interface Gated {
  id: string;
  requesterId: string;
  keys: readonly string[];
}

export interface BlastRadiusInput {
  /** Every identity the inputs mention, by id (chains are walked through `parentId`). */
  identities: ReadonlyMap<string, Identity>;
  /** Live rules of the org (any identity); the engine keeps those on each chain. */
  rules: readonly Rule[];
  approval: Gated;
  /** Where the resolver sits: on the requester's chain, else the user (as plantRules does). */
  resolverId: string;
  tierKeys: readonly string[];
  pending: readonly Gated[];
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

export function blastRadius(input: BlastRadiusInput): BlastRadius {
  const chain = chainOf(input.identities, input.approval.requesterId);
  if (!chain) return { targetIds: [], coveredPendingIds: [], coveredCallIds: [] };
  const resolverOnChain = chain.some((c) => c.id === input.resolverId) ? input.resolverId : (chain.at(-1) as Identity).id;
  const targets = new Set([closestNonInheritingAncestor(chain, input.approval.requesterId).id]);
  for (const t of rememberTargets({ chain, rules: input.rules, keys: input.approval.keys, now: input.now }, resolverOnChain)) targets.add(t.id);
  const targetIds = [...targets].filter((id) => input.identities.get(id)?.kind !== 'user');
  const planted: Rule[] = targetIds.flatMap((identityId) =>
    input.tierKeys.map((pattern, n) => ({ id: `remembered:${identityId}:${n}`, identityId, effect: 'allow' as const, pattern, expiresAt: null })),
  );
  const rules = [...input.rules, ...planted];

  /** Covered with the new rules, and at least one new rule on its chain matches one of its keys. */
  const covers = (g: Gated): boolean => {
    const c = chainOf(input.identities, g.requesterId);
    if (!c || g.keys.length === 0) return false;
    const onChain = new Set(c.map((i) => i.id));
    const touched = planted.some((r) => onChain.has(r.identityId) && g.keys.some((k) => matchesPattern(r.pattern, k)));
    return touched && checkPermission({ chain: c, rules, keys: g.keys, now: input.now }).outcome === 'covered';
  };

  return {
    targetIds,
    coveredPendingIds: input.pending.filter((g) => g.id !== input.approval.id && covers(g)).map((g) => g.id),
    coveredCallIds: input.pastCalls.filter(covers).map((g) => g.id),
  };
}
