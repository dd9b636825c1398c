// Which of an identity's rules a check of some keys can need. A pattern matches a key only when
// its service segment is `*` or the key's service, and its action segment is `*`, the key's
// action, or `ANY` (raw HTTP keys: patterns.ts). So the check reads only rules whose first two
// segments are in these sets — an index lookup (migrations/0030) instead of every rule of the chain
// — and the engine (chain.ts) judges what comes back exactly as before. A superset by design:
// the sets are the product of the keys' services and actions, never narrower than any one key.
import { ANY_VERB } from './patterns.ts';

export interface RuleScope {
  /** Service segments a needed rule may have. */
  services: string[];
  /** Action segments a needed rule may have. */
  actions: string[];
}

/**
 * A pattern's first two segments as PostgreSQL's `split_part(pattern, ':', 1)` and `… 2)` give
 * them (the SQL side of the narrowing uses those expressions; this is the same split).
 */
export function patternSegments(pattern: string): { service: string; action: string } {
  const parts = pattern.split(':');
  return { service: parts[0] ?? '', action: parts[1] ?? '' };
}

export function ruleScope(keys: readonly string[]): RuleScope {
  const services = new Set(['*']);
  const actions = new Set(['*', ANY_VERB]);
  for (const key of keys) {
    const { service, action } = patternSegments(key);
    services.add(service);
    actions.add(action);
  }
  return { services: [...services], actions: [...actions] };
}

/** Whether a rule with `pattern` is read for a check in `scope` (what the SQL filter decides). */
export function inRuleScope(pattern: string, scope: RuleScope): boolean {
  const { service, action } = patternSegments(pattern);
  return scope.services.includes(service) && scope.actions.includes(action);
}
