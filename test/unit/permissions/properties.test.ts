import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPermission } from '../../../core/permissions/chain.ts';
import type { Identity, Rule } from '../../../core/permissions/chain.ts';
import { actionPermissionKey, httpPermissionKey } from '../../../core/permissions/keys.ts';
import { isValidPattern, matchesPattern } from '../../../core/permissions/patterns.ts';
import { suggestedTiers } from '../../../core/permissions/tiers.ts';

const NOW = new Date('2025-06-01T12:00:00Z');

const KEYS = ['slack:post:C1', 'slack:post:C2', 'slack:read:C1', 'github:merge:7', 'http:GET:h.com/a/b', 'http:DELETE:h.com/x'];
const PATTERNS = [
  ...KEYS,
  'slack:post:*',
  'slack:*:*',
  '*:*:*',
  'github:*:*',
  'http:ANY:h.com/*',
  'http:GET:h.com/*',
  'http:DELETE:*',
  'slack:post:C*',
];

/** A chain [S_d … S_1, A, U] with random inherit flags on the subagents. */
const chainArb = fc.array(fc.boolean(), { maxLength: 3 }).map((inherits): Identity[] => {
  const chain: Identity[] = [
    { id: 'A', kind: 'agent', parentId: 'U', inheritPermissions: false },
    { id: 'U', kind: 'user', parentId: null, inheritPermissions: false },
  ];
  inherits.forEach((inherit, i) => {
    chain.unshift({ id: `S${i + 1}`, kind: 'subagent', parentId: chain[0]!.id, inheritPermissions: inherit });
  });
  return chain;
});

const expiryArb = fc.oneof(
  fc.constant(null),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map((ms) => new Date(NOW.getTime() + ms)),
);

const ruleArb = (ids: string[], effect?: 'allow' | 'deny', expiresAt = expiryArb) =>
  fc.record({
    id: fc.uuid(),
    identityId: fc.constantFrom(...ids),
    effect: effect === undefined ? fc.constantFrom<'allow' | 'deny'>('allow', 'deny') : fc.constant(effect),
    pattern: fc.constantFrom(...PATTERNS),
    expiresAt,
  }) as fc.Arbitrary<Rule>;

/** Chain, rules on it (plus an outsider), keys. */
const scenarioArb = chainArb.chain((chain) => {
  const ids = [...chain.map((i) => i.id), 'OUTSIDER'];
  return fc.record({
    chain: fc.constant(chain),
    rules: fc.array(ruleArb(ids), { maxLength: 8 }),
    keys: fc.uniqueArray(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 3 }),
    ids: fc.constant(ids),
  });
});

const isActive = (r: Rule) => r.expiresAt === null || r.expiresAt > NOW;

describe('permission properties', () => {
  it('a matching unexpired deny anywhere on the chain always wins', () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), fc.nat(), ({ chain, rules, keys }, at, keyAt) => {
        const identity = chain[at % chain.length]!;
        const key = keys[keyAt % keys.length]!;
        const denyRule: Rule = { id: 'd', identityId: identity.id, effect: 'deny', pattern: key, expiresAt: null };
        const decision = checkPermission({ chain, rules: [...rules, denyRule], keys, now: NOW });
        expect(decision.outcome).toBe('denied');
      }),
    );
  });

  it('adding an allow rule never turns a covered call into a gap or a denial', () => {
    fc.assert(
      fc.property(
        scenarioArb.chain((s) => fc.tuple(fc.constant(s), ruleArb(s.ids, 'allow'))),
        ([{ chain, rules, keys }, extra]) => {
          const before = checkPermission({ chain, rules, keys, now: NOW });
          const after = checkPermission({ chain, rules: [...rules, extra], keys, now: NOW });
          if (before.outcome === 'covered') expect(after.outcome).toBe('covered');
          // Allows never create denials, nor remove them.
          expect(after.outcome === 'denied').toBe(before.outcome === 'denied');
        },
      ),
    );
  });

  it('expired rules never change the decision (an expired allow never covers)', () => {
    const expired = fc.integer({ min: 0, max: 1_000_000 }).map((ms) => new Date(NOW.getTime() - ms));
    fc.assert(
      fc.property(
        scenarioArb.chain((s) =>
          fc.tuple(fc.constant(s), fc.array(ruleArb(s.ids, undefined, expired), { minLength: 1, maxLength: 5 })),
        ),
        ([{ chain, rules, keys }, stale]) => {
          const before = checkPermission({ chain, rules, keys, now: NOW });
          const after = checkPermission({ chain, rules: [...rules, ...stale], keys, now: NOW });
          expect(after).toEqual(before);
        },
      ),
    );
  });

  it('with only expired rules an agent call is never covered', () => {
    const expired = fc.integer({ min: 0, max: 1_000_000 }).map((ms) => new Date(NOW.getTime() - ms));
    fc.assert(
      fc.property(
        chainArb.chain((chain) =>
          fc.tuple(fc.constant(chain), fc.array(ruleArb(chain.map((i) => i.id), 'allow', expired), { maxLength: 8 })),
        ),
        fc.constantFrom(...KEYS),
        ([chain, rules], key) => {
          expect(checkPermission({ chain, rules, keys: [key], now: NOW }).outcome).toBe('gap');
        },
      ),
    );
  });

  it('a gap names an agent-kind identity on the chain and a resolver above it', () => {
    fc.assert(
      fc.property(scenarioArb, ({ chain, rules, keys }) => {
        const decision = checkPermission({ chain, rules, keys, now: NOW });
        if (decision.outcome !== 'gap') return;
        const gapAt = chain.findIndex((i) => i.id === decision.gapIdentityId);
        const resolverAt = chain.findIndex((i) => i.id === decision.firstResolverId);
        expect(gapAt).toBeGreaterThanOrEqual(0);
        expect(chain[gapAt]!.kind).not.toBe('user');
        expect(resolverAt).toBeGreaterThan(gapAt);
        expect(decision.uncoveredKeys.length).toBeGreaterThan(0);
        expect(decision.uncoveredKeys.every((k) => keys.includes(k))).toBe(true);
      }),
    );
  });

  it('planting every uncovered key as an allow on every agent-kind identity covers the call', () => {
    fc.assert(
      fc.property(scenarioArb, ({ chain, rules, keys }) => {
        const noDeny = rules.filter((r) => r.effect === 'allow' || !isActive(r));
        const planted: Rule[] = chain.flatMap((i) =>
          keys.map((k, n) => ({ id: `p${i.id}${n}`, identityId: i.id, effect: 'allow' as const, pattern: k, expiresAt: null })),
        );
        expect(checkPermission({ chain, rules: [...noDeny, ...planted], keys, now: NOW }).outcome).toBe('covered');
      }),
    );
  });
});

describe('key and tier properties', () => {
  const value = fc.oneof(fc.string(), fc.integer(), fc.boolean());

  it('an exact action key is a valid pattern that matches only its own value', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        const ka = actionPermissionKey('svc', 'act', 'p', { p: a });
        const kb = actionPermissionKey('svc', 'act', 'p', { p: b });
        expect(isValidPattern(ka)).toBe(true);
        expect(matchesPattern(ka, ka)).toBe(true);
        if (ka !== kb) expect(matchesPattern(ka, kb)).toBe(false);
      }),
    );
  });

  it('every tier key matches the key it was derived from', () => {
    const pathArb = fc.array(fc.stringMatching(/^[a-z0-9*:._-]{0,6}$/), { maxLength: 4 }).map((s) => s.join('/'));
    const httpKey = fc
      .tuple(fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH'), fc.constantFrom('h.com', 'api.x.io:8443'), pathArb)
      .map(([verb, host, path]) => httpPermissionKey(verb, `https://${host}/${path}`));
    const svcKey = value.map((v) => actionPermissionKey('svc', 'act', 'p', { p: v }));
    fc.assert(
      fc.property(fc.array(fc.oneof(httpKey, svcKey), { minLength: 1, maxLength: 3 }), (keys) => {
        for (const tier of suggestedTiers(keys)) {
          for (const key of keys) {
            expect(tier.keys.some((pattern) => matchesPattern(pattern, key))).toBe(true);
          }
          for (const pattern of tier.keys) expect(isValidPattern(pattern)).toBe(true);
        }
      }),
    );
  });
});
