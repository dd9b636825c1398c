// The narrowed rule read (core/permissions/rule-scope.ts): every rule that can match a key of the
// check is in scope, so the engine's verdict on the narrowed rules is its verdict on all of them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPermission, type Identity, type Rule } from '../../../core/permissions/chain.ts';
import { matchesPattern } from '../../../core/permissions/patterns.ts';
import { inRuleScope, patternSegments, ruleScope } from '../../../core/permissions/rule-scope.ts';

const NOW = new Date('2026-06-01T12:00:00Z');
const KEYS = ['slack:post:C1', 'slack:read:C1', 'github:merge:7', 'http:GET:h.example/a/b', 'http:DELETE:h.example/x', 'pay:refund:<missing>'];
// Wildcards in every segment, service- and action-level rules, exact keys, raw HTTP with ANY and
// verbs, and near misses (another service or action, a prefix of one).
const PATTERNS = [
  ...KEYS,
  '*:*:*', 'slack:*:*', '*:post:*', 'slack:post:*', 'slack:post:C*', 'slack:pos:*', 'slac:post:*', 'github:*:7',
  'http:ANY:h.example/*', 'http:*:*', 'http:GET:*', 'http:POST:h.example/*', '*:GET:*', 'pay:*:*', 'pay:refund:*', 'other:refund:*',
];
const CHAIN: Identity[] = [
  { id: 'S', kind: 'subagent', parentId: 'A', inheritPermissions: false },
  { id: 'A', kind: 'agent', parentId: 'U', inheritPermissions: false },
  { id: 'U', kind: 'user', parentId: null, inheritPermissions: false },
];
const REQUEST = { method: 'POST', url: 'https://h.example/a', host: 'h.example', path: '/a', query: {}, params: {}, body: { amount: 10 } };

const ruleArb = fc.record({
  id: fc.uuid(),
  identityId: fc.constantFrom('S', 'A', 'U'),
  effect: fc.constantFrom<'allow' | 'deny'>('allow', 'deny'),
  pattern: fc.constantFrom(...PATTERNS),
  expiresAt: fc.constant(null),
  condition: fc.constantFrom(null, 'body.amount <= 50', 'body.amount > 50'),
  budget: fc.constant(null),
}) as fc.Arbitrary<Rule>;
const keysArb = fc.uniqueArray(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 3 });

describe('the rules a check reads', () => {
  it('splits a pattern as split_part(pattern, \':\', 1 and 2) does', () => {
    expect(patternSegments('slack:post:C1')).toEqual({ service: 'slack', action: 'post' });
    expect(patternSegments('http:GET:h.example:8443/a')).toEqual({ service: 'http', action: 'GET' });
    expect(patternSegments('*:*:*')).toEqual({ service: '*', action: '*' });
    expect(patternSegments('nocolon')).toEqual({ service: 'nocolon', action: '' });
  });

  it('keeps wildcard, service-level, action-level and ANY rules, and leaves out other services and actions', () => {
    const scope = ruleScope(['slack:post:C1', 'http:GET:h.example/a']);
    for (const p of ['*:*:*', 'slack:*:*', '*:post:*', 'slack:post:C9', 'http:ANY:h.example/*', 'http:GET:*', 'slack:GET:x']) expect(inRuleScope(p, scope)).toBe(true);
    for (const p of ['github:*:*', 'slack:read:*', 'slac:post:*', 'slack:pos:*', 'http:POST:h.example/*', 'other:*:*']) expect(inRuleScope(p, scope)).toBe(false);
  });

  it('never leaves out a rule whose pattern matches a key of the check', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PATTERNS), keysArb, (pattern, keys) => {
        if (keys.some((k) => matchesPattern(pattern, k))) expect(inRuleScope(pattern, ruleScope(keys))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('gives the same verdict on the narrowed rules as on all of them: denies, conditions, gaps', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 12 }), keysArb, fc.boolean(), (rules, keys, withRequest) => {
        const scope = ruleScope(keys);
        const input = { chain: CHAIN, keys, now: NOW, request: withRequest ? REQUEST : null };
        expect(checkPermission({ ...input, rules: rules.filter((r) => inRuleScope(r.pattern, scope)) })).toEqual(checkPermission({ ...input, rules }));
      }),
      { numRuns: 2_000 },
    );
  });
});
