// The permission walk with conditional and budgeted rules (issue 44).
import { describe, expect, it } from 'vitest';
import { budgetedRulesFor, checkPermission, rememberTargets, type Identity, type Rule } from '../../../core/permissions/chain.ts';
import { conditionRequest } from '../../../core/permissions/conditions.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const U: Identity = { id: 'U', kind: 'user', parentId: null, inheritPermissions: false };
const A: Identity = { id: 'A', kind: 'agent', parentId: 'U', inheritPermissions: false };
const S: Identity = { id: 'S', kind: 'subagent', parentId: 'A', inheritPermissions: true };
const KEY = 'pay:create_refund:*';
const rule = (id: string, effect: 'allow' | 'deny', extra: Partial<Rule> = {}): Rule => ({ id, identityId: 'A', effect, pattern: 'pay:*:*', expiresAt: null, ...extra });
const req = (amount: unknown) => conditionRequest({ method: 'POST', url: 'https://pay.test/refunds', params: {}, body: { amount } });
const check = (rules: Rule[], amount: unknown, extra: { exhausted?: Map<string, string>; chain?: Identity[]; noRequest?: boolean } = {}) =>
  checkPermission({ chain: extra.chain ?? [A, U], rules, keys: [KEY], now: NOW, request: extra.noRequest ? null : req(amount), ...(extra.exhausted ? { exhausted: extra.exhausted } : {}) });

describe('conditional rules', () => {
  const capped = rule('r1', 'allow', { condition: 'body.amount <= 50' });

  it('an allow covers only when its condition holds', () => {
    expect(check([capped], 40)).toEqual({ outcome: 'covered', coveredBy: [capped], budgeted: [] });
    expect(check([capped], 60)).toMatchObject({
      outcome: 'gap',
      gapIdentityId: 'A',
      failedConditions: [{ ruleId: 'r1', condition: 'body.amount <= 50', explanation: 'body.amount <= 50 was false: amount is 60' }],
    });
  });

  it('without the request no conditional rule applies (allow or deny)', () => {
    expect(check([capped], 40, { noRequest: true }).outcome).toBe('gap');
    expect(check([rule('r2', 'allow'), rule('d1', 'deny', { condition: 'body.amount > 0' })], 40, { noRequest: true }).outcome).toBe('covered');
  });

  it('a deny with a condition wins over an allow when it holds', () => {
    const rules = [rule('r2', 'allow'), rule('d1', 'deny', { condition: 'body.amount > 100' })];
    expect(check(rules, 150)).toMatchObject({ outcome: 'denied', rule: { id: 'd1' } });
    expect(check(rules, 99).outcome).toBe('covered');
  });

  it('an inheriting subagent reports its parent\'s failed condition', () => {
    expect(check([capped], 60, { chain: [S, A, U] })).toMatchObject({ outcome: 'gap', gapIdentityId: 'S', failedConditions: [{ ruleId: 'r1' }] });
  });

  it('remember targets see conditions too', () => {
    expect(rememberTargets({ chain: [A, U], rules: [capped], keys: [KEY], now: NOW, request: req(60) }, 'U').map((i) => i.id)).toEqual(['A']);
    expect(rememberTargets({ chain: [A, U], rules: [capped], keys: [KEY], now: NOW, request: req(10) }, 'U')).toEqual([]);
  });
});

describe('budgeted rules', () => {
  const budgeted = rule('b1', 'allow', { budget: { calls: 3, per: '1h' } });

  it('a covered call names the budgeted rule it relies on', () => {
    expect(check([budgeted], 1)).toEqual({ outcome: 'covered', coveredBy: [budgeted], budgeted: [budgeted] });
  });

  it('an allow without a budget is preferred, so no budget is charged', () => {
    expect(check([budgeted, rule('r2', 'allow')], 1)).toMatchObject({ outcome: 'covered', coveredBy: [{ id: 'r2' }], budgeted: [] });
  });

  it('an exhausted budget does not cover, and the gap says why', () => {
    expect(check([budgeted], 1, { exhausted: new Map([['b1', 'at most 3 calls per hour: 3 used']]) })).toMatchObject({
      outcome: 'gap',
      exhaustedBudgets: [{ ruleId: 'b1', explanation: 'at most 3 calls per hour: 3 used' }],
    });
  });
});

describe('budgetedRulesFor: what an approved call is charged to when it is sent', () => {
  const budgeted = rule('b1', 'allow', { budget: { calls: 3, per: '1h' } });
  const charged = (rules: Rule[], amount: unknown, chain: Identity[] = [A, U]) => budgetedRulesFor({ chain, rules, keys: [KEY], now: NOW, request: req(amount) }).map((r) => r.id);

  it('the budgeted allow the call falls under, whatever its budget holds', () => {
    expect(charged([budgeted], 1)).toEqual(['b1']);
  });

  it('nothing when an allow without a budget covers the key, or the budgeted one does not apply', () => {
    expect(charged([budgeted, rule('r2', 'allow')], 1)).toEqual([]);
    expect(charged([rule('b2', 'allow', { condition: 'body.amount <= 10', budget: { calls: 3, per: '1h' } })], 50)).toEqual([]);
    expect(charged([rule('b3', 'allow', { pattern: 'other:*:*', budget: { calls: 3, per: '1h' } })], 1)).toEqual([]);
    expect(charged([rule('b4', 'allow', { expiresAt: new Date(NOW.getTime() - 1), budget: { calls: 3, per: '1h' } })], 1)).toEqual([]);
  });

  it('an inheriting subagent is charged to its parent\'s rule; a person\'s own call to none', () => {
    expect(charged([budgeted], 1, [S, A, U])).toEqual(['b1']);
    expect(charged([budgeted], 1, [U])).toEqual([]);
  });
});
