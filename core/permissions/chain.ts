// The permission walk along an identity chain (requester first, the owning user last).
// Order of precedence: a user-kind requester skips the layer; then any matching unexpired deny
// on the chain wins; then every agent-kind identity must be covered for every key.

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
}

export type Decision =
  | { outcome: 'covered' }
  | { outcome: 'denied'; rule: Rule; key: string }
  | { outcome: 'gap'; gapIdentityId: string; firstResolverId: string; uncoveredKeys: string[] };

export interface CheckInput {
  chain: readonly Identity[];
  rules: readonly Rule[];
  keys: readonly string[];
  now: Date;
}

export type Relationship = 'self' | 'downstream' | 'not_in_your_chain';

/** A malformed chain or empty key list is a caller bug; failing closed beats guessing. */
export class PermissionInputError extends Error {
  override name = 'PermissionInputError';
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
  assertValidChain(chain);
  if (keys.length === 0) throw new PermissionInputError('no permission keys to check');
  if (chain[0]?.kind === 'user') return { outcome: 'covered' };

  const onChain = new Set(chain.map((i) => i.id));
  const active = input.rules.filter((r) => onChain.has(r.identityId) && isRuleActive(r, now));

  // Deny wins anywhere on the chain, the user included; report the one closest to the requester.
  for (const identity of chain) {
    for (const rule of active) {
      if (rule.identityId !== identity.id || rule.effect !== 'deny') continue;
      const key = keys.find((k) => matchesPattern(rule.pattern, k));
      if (key !== undefined) return { outcome: 'denied', rule, key };
    }
  }

  const uncovered = uncoveredKeysByIdentity(chain, active, keys);
  const isCovered = (n: number): boolean => (uncovered[n]?.length ?? 0) === 0;
  const gapIndex = chain.findIndex((_, n) => !isCovered(n));
  if (gapIndex < 0) return { outcome: 'covered' };

  const gap = chain[gapIndex] as Identity;
  // The user ends the chain and counts as covered, so this always finds someone.
  const resolver = chain.find((_, n) => n > gapIndex && isCovered(n)) as Identity;
  return {
    outcome: 'gap',
    gapIdentityId: gap.id,
    firstResolverId: resolver.id,
    uncoveredKeys: uncovered[gapIndex] ?? [],
  };
}

/**
 * Per chain position, the keys that identity is not covered for. Computed from the user end
 * down so an inheriting subagent can take its parent's result. The user is never checked.
 */
function uncoveredKeysByIdentity(
  chain: readonly Identity[],
  activeRules: readonly Rule[],
  keys: readonly string[],
): string[][] {
  const result: string[][] = new Array<string[]>(chain.length);
  for (let i = chain.length - 1; i >= 0; i--) {
    const identity = chain[i] as Identity;
    if (!isAgentKind(identity)) {
      result[i] = [];
    } else if (inheritsFrom(identity, chain[i + 1])) {
      result[i] = result[i + 1] ?? [...keys];
    } else {
      const allows = activeRules.filter((r) => r.identityId === identity.id && r.effect === 'allow');
      result[i] = keys.filter((k) => !allows.some((r) => matchesPattern(r.pattern, k)));
    }
  }
  return result;
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
  const uncovered = uncoveredKeysByIdentity(chain, active, keys);
  return chain.filter(
    (identity, i) =>
      i < stop &&
      isAgentKind(identity) &&
      !inheritsFrom(identity, chain[i + 1]) &&
      (uncovered[i]?.length ?? 0) > 0,
  );
}

/** Strict ancestry (an identity is not its own ancestor); tolerant of cycles in bad data. */
export function isAncestor(
  identities: readonly Identity[] | ReadonlyMap<string, Identity>,
  ancestorId: string,
  descendantId: string,
): boolean {
  const byId: ReadonlyMap<string, Identity> = Array.isArray(identities)
    ? new Map((identities as readonly Identity[]).map((i) => [i.id, i]))
    : (identities as ReadonlyMap<string, Identity>);
  const seen = new Set<string>();
  let current = byId.get(descendantId)?.parentId ?? null;
  while (current !== null && !seen.has(current)) {
    if (current === ancestorId) return true;
    seen.add(current);
    current = byId.get(current)?.parentId ?? null;
  }
  return false;
}

/** The viewer's relationship to the requester (`requesterChain[0]`). */
export function relationship(viewerId: string, requesterChain: readonly Identity[]): Relationship {
  const requester = requesterChain[0];
  if (requester === undefined) return 'not_in_your_chain';
  if (requester.id === viewerId) return 'self';
  return isAncestor(requesterChain, viewerId, requester.id) ? 'downstream' : 'not_in_your_chain';
}
