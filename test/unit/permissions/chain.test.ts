import { describe, expect, it } from 'vitest';
import {
  PermissionInputError,
  checkPermission,
  closestNonInheritingAncestor,
  rememberTargets,
} from '../../../core/permissions/chain.ts';
import { isAncestor, relationship } from '../../../core/permissions/ancestry.ts';
import type { Decision, Identity, Rule } from '../../../core/permissions/chain.ts';

const NOW = new Date('2025-06-01T12:00:00Z');
const PAST = new Date(NOW.getTime() - 1000);
const FUTURE = new Date(NOW.getTime() + 60_000);

const U: Identity = { id: 'U', kind: 'user', parentId: null, inheritPermissions: false };
const A: Identity = { id: 'A', kind: 'agent', parentId: 'U', inheritPermissions: false };
const sub = (id: string, parentId: string, inherit: boolean): Identity => ({
  id,
  kind: 'subagent',
  parentId,
  inheritPermissions: inherit,
});
const S1 = sub('S1', 'A', false);
const S1i = sub('S1', 'A', true);
const S2 = sub('S2', 'S1', false);
const S2i = sub('S2', 'S1', true);

let n = 0;
const rule = (identityId: string, effect: 'allow' | 'deny', pattern: string, expiresAt: Date | null = null): Rule => ({
  id: `r${++n}`,
  identityId,
  effect,
  pattern,
  expiresAt,
});
const allow = (id: string, pattern: string, exp?: Date | null) => rule(id, 'allow', pattern, exp);
const deny = (id: string, pattern: string, exp?: Date | null) => rule(id, 'deny', pattern, exp);

const KEY = 'slack:post:C1';
const gap = (gapIdentityId: string, firstResolverId: string, uncoveredKeys = [KEY]): Decision => ({
  outcome: 'gap',
  gapIdentityId,
  firstResolverId,
  uncoveredKeys,
  failedConditions: [],
  exhaustedBudgets: [],
});
// Which rules covered is checked in chain-conditions.test.ts; here only that it is covered.
const covered: Decision = { outcome: 'covered', coveredBy: [], budgeted: [] };

interface Case {
  name: string;
  chain: Identity[];
  rules: Rule[];
  keys?: string[];
  expected: Decision | { outcome: 'denied'; ruleIndex: number; key: string };
}

const cases: Case[] = [
  // basic agent
  { name: 'agent with matching allow is covered', chain: [A, U], rules: [allow('A', KEY)], expected: covered },
  { name: 'agent with wildcard allow is covered', chain: [A, U], rules: [allow('A', 'slack:*:*')], expected: covered },
  { name: 'agent without rules → gap at agent, resolver user', chain: [A, U], rules: [], expected: gap('A', 'U') },
  { name: 'non-matching allow does not cover', chain: [A, U], rules: [allow('A', 'slack:post:C2')], expected: gap('A', 'U') },
  { name: 'user allow rules do not cover the agent', chain: [A, U], rules: [allow('U', '*:*:*')], expected: gap('A', 'U') },
  { name: 'allow on an identity off the chain is ignored', chain: [A, U], rules: [allow('B', '*:*:*')], expected: gap('A', 'U') },
  // expiry
  { name: 'expired allow does not cover', chain: [A, U], rules: [allow('A', KEY, PAST)], expected: gap('A', 'U') },
  { name: 'allow expiring exactly now does not cover', chain: [A, U], rules: [allow('A', KEY, NOW)], expected: gap('A', 'U') },
  { name: 'unexpired allow covers', chain: [A, U], rules: [allow('A', KEY, FUTURE)], expected: covered },
  { name: 'expired deny does not deny', chain: [A, U], rules: [allow('A', KEY), deny('A', KEY, PAST)], expected: covered },
  // deny wins
  { name: 'deny on requester wins over its allow', chain: [A, U], rules: [allow('A', KEY), deny('A', KEY)], expected: { outcome: 'denied', ruleIndex: 1, key: KEY } },
  { name: 'deny on the user wins', chain: [A, U], rules: [allow('A', '*:*:*'), deny('U', 'slack:*:*')], expected: { outcome: 'denied', ruleIndex: 1, key: KEY } },
  { name: 'deny on an ancestor wins over a gap', chain: [S1, A, U], rules: [deny('A', KEY)], expected: { outcome: 'denied', ruleIndex: 0, key: KEY } },
  { name: 'deny closest to the requester is reported', chain: [S1, A, U], rules: [deny('U', KEY), deny('S1', KEY)], expected: { outcome: 'denied', ruleIndex: 1, key: KEY } },
  { name: 'deny on one of several keys denies', chain: [A, U], keys: [KEY, 'slack:post:C2'], rules: [allow('A', 'slack:*:*'), deny('A', 'slack:post:C2')], expected: { outcome: 'denied', ruleIndex: 1, key: 'slack:post:C2' } },
  { name: 'non-matching deny is ignored', chain: [A, U], rules: [allow('A', KEY), deny('A', 'slack:post:C2')], expected: covered },
  // subagents, no inheritance
  { name: 'subagent and agent both allowed → covered', chain: [S1, A, U], rules: [allow('S1', KEY), allow('A', KEY)], expected: covered },
  { name: 'subagent missing → gap at subagent, resolver agent', chain: [S1, A, U], rules: [allow('A', KEY)], expected: gap('S1', 'A') },
  { name: 'agent missing → gap at agent, resolver user', chain: [S1, A, U], rules: [allow('S1', KEY)], expected: gap('A', 'U') },
  { name: 'both missing → gap at subagent, resolver user', chain: [S1, A, U], rules: [], expected: gap('S1', 'U') },
  { name: 'deep: S2 missing, S1 missing, A covered → resolver A', chain: [S2, S1, A, U], rules: [allow('A', KEY)], expected: gap('S2', 'A') },
  { name: 'deep: S2 missing, S1 covered → resolver S1', chain: [S2, S1, A, U], rules: [allow('S1', KEY), allow('A', KEY)], expected: gap('S2', 'S1') },
  { name: 'deep: only S1 missing → gap S1, resolver A', chain: [S2, S1, A, U], rules: [allow('S2', KEY), allow('A', KEY)], expected: gap('S1', 'A') },
  // inheritance
  { name: 'inheriting subagent is covered by its parent', chain: [S1i, A, U], rules: [allow('A', KEY)], expected: covered },
  { name: 'inheriting subagent of uncovered parent → gap at subagent', chain: [S1i, A, U], rules: [], expected: gap('S1', 'U') },
  { name: 'own allow on an inheriting subagent does not bypass the parent', chain: [S1i, A, U], rules: [allow('S1', KEY)], expected: gap('S1', 'U') },
  { name: 'inherit chain: S2i → S1i → A covered', chain: [S2i, S1i, A, U], rules: [allow('A', KEY)], expected: covered },
  { name: 'inherit chain: S2i → S1 (own rule) → A covered', chain: [S2i, S1, A, U], rules: [allow('S1', KEY), allow('A', KEY)], expected: covered },
  { name: 'inherit chain: S2i → S1 uncovered → gap S2, resolver A', chain: [S2i, S1, A, U], rules: [allow('A', KEY)], expected: gap('S2', 'A') },
  { name: 'S2 covered, S1i inherits uncovered A → gap at S1, resolver U', chain: [S2, S1i, A, U], rules: [allow('S2', KEY)], expected: gap('S1', 'U') },
  { name: 'inherit flag on an agent is ignored (never inherits from the user)', chain: [{ ...A, inheritPermissions: true }, U], rules: [], expected: gap('A', 'U') },
  // multiple keys
  { name: 'multiple keys all covered', chain: [A, U], keys: [KEY, 'github:merge:7'], rules: [allow('A', KEY), allow('A', 'github:*:*')], expected: covered },
  { name: 'multiple keys, one uncovered → gap lists it', chain: [A, U], keys: [KEY, 'github:merge:7'], rules: [allow('A', KEY)], expected: gap('A', 'U', ['github:merge:7']) },
  { name: 'keys covered by different identities still need each identity', chain: [S1, A, U], keys: [KEY, 'k:a:b'], rules: [allow('S1', KEY), allow('S1', 'k:a:b'), allow('A', KEY)], expected: gap('A', 'U', ['k:a:b']) },
  { name: 'resolver must be covered for all keys', chain: [S2, S1, A, U], keys: [KEY, 'k:a:b'], rules: [allow('S1', KEY), allow('A', '*:*:*')], expected: gap('S2', 'A', [KEY, 'k:a:b']) },
  // raw http
  { name: 'http ANY allow covers a DELETE', chain: [A, U], keys: ['http:DELETE:h.com/a/b'], rules: [allow('A', 'http:ANY:h.com/*')], expected: covered },
  { name: 'http deny on path glob wins', chain: [A, U], keys: ['http:DELETE:h.com/a/b'], rules: [allow('A', 'http:ANY:h.com/*'), deny('U', 'http:DELETE:h.com/*')], expected: { outcome: 'denied', ruleIndex: 1, key: 'http:DELETE:h.com/a/b' } },
  // user requester
  { name: 'user-kind requester skips the layer', chain: [U], rules: [deny('U', '*:*:*')], expected: covered },
];

describe('checkPermission', () => {
  it.each(cases)('$name', ({ chain, rules, keys, expected }) => {
    const decision = checkPermission({ chain, rules, keys: keys ?? [KEY], now: NOW });
    if ('ruleIndex' in expected) {
      expect(decision).toEqual({ outcome: 'denied', rule: rules[expected.ruleIndex], key: expected.key });
    } else {
      expect(decision).toEqual(expected.outcome === 'covered' ? { ...expected, coveredBy: expect.any(Array) } : expected);
    }
  });

  it.each([
    ['empty chain', []],
    ['no user at the end', [S1, A]],
    ['broken link', [S2, A, U]],
    ['user in the middle', [A, U, U]],
  ])('rejects a malformed chain: %s', (_name, chain) => {
    expect(() => checkPermission({ chain: chain as Identity[], rules: [], keys: [KEY], now: NOW })).toThrow(
      PermissionInputError,
    );
  });

  it('rejects an empty key list', () => {
    expect(() => checkPermission({ chain: [A, U], rules: [], keys: [], now: NOW })).toThrow(PermissionInputError);
  });
});

describe('closestNonInheritingAncestor', () => {
  it.each([
    ['non-inheriting requester is itself', [S1, A, U], 'S1', 'S1'],
    ['agent requester is itself', [A, U], 'A', 'A'],
    ['inheriting subagent → its agent', [S1i, A, U], 'S1', 'A'],
    ['walks while inheriting', [S2i, S1i, A, U], 'S2', 'A'],
    ['stops at the first non-inheriting', [S2i, S1, A, U], 'S2', 'S1'],
    ['from an inner identity', [S2, S1i, A, U], 'S1', 'A'],
  ])('%s', (_name, chain, from, expected) => {
    expect(closestNonInheritingAncestor(chain, from).id).toBe(expected);
  });

  it('throws for an identity off the chain', () => {
    expect(() => closestNonInheritingAncestor([A, U], 'X')).toThrow(PermissionInputError);
  });
});

describe('rememberTargets', () => {
  it.each([
    ['gap at requester below a covered agent', [S1, A, U], [allow('A', KEY)], 'A', ['S1']],
    ['gap at the agent above a covered subagent', [S1, A, U], [allow('S1', KEY)], 'U', ['A']],
    ['both uncovered', [S1, A, U], [], 'U', ['S1', 'A']],
    ['inheriting requester plants on its agent', [S1i, A, U], [], 'U', ['A']],
    ['nothing to plant when covered', [S1, A, U], [allow('S1', KEY), allow('A', KEY)], 'U', []],
  ])('%s', (_name, chain, rules, resolver, expected) => {
    const targets = rememberTargets({ chain, rules, keys: [KEY], now: NOW }, resolver);
    expect(targets.map((i) => i.id)).toEqual(expected);
  });
});

describe('isAncestor and relationship', () => {
  const B: Identity = { id: 'B', kind: 'agent', parentId: 'U', inheritPermissions: false };
  const all = [U, A, S1, S2, B];
  const map = new Map(all.map((i) => [i.id, i]));

  it.each([
    ['U', 'S2', true],
    ['A', 'S2', true],
    ['S1', 'S2', true],
    ['S2', 'S2', false],
    ['S2', 'A', false],
    ['B', 'S2', false],
    ['U', 'B', true],
    ['X', 'S2', false],
    ['U', 'X', false],
  ])('isAncestor(%s, %s) = %s', (ancestor, descendant, expected) => {
    expect(isAncestor(all, ancestor, descendant)).toBe(expected);
    expect(isAncestor(map, ancestor, descendant)).toBe(expected);
  });

  it('tolerates cycles', () => {
    const cyc = [sub('P', 'Q', false), sub('Q', 'P', false)];
    expect(isAncestor(cyc, 'X', 'P')).toBe(false);
  });

  it.each([
    ['S2', 'self'],
    ['S1', 'downstream'],
    ['A', 'downstream'],
    ['U', 'downstream'],
    ['B', 'not_in_your_chain'],
    ['X', 'not_in_your_chain'],
  ] as const)('viewer %s → %s', (viewer, expected) => {
    expect(relationship(viewer, [S2, S1, A, U])).toBe(expected);
  });
});
