// `gateway agents allow|deny`: the rule it sends (condition, budget) and a rule's "when" in words.
import { expect, it } from 'vitest';
import { ruleBody, ruleWhen } from '../../../cli/commands/rules.ts';

it('carries --when as the condition and the budget options as a budget', () => {
  expect(ruleBody('allow', 'pay:*:*', {})).toEqual({ effect: 'allow', pattern: 'pay:*:*' });
  expect(ruleBody('allow', 'pay:*:*', { when: 'body.amount <= 50', calls: '20', per: '1d', ttl: '7d' })).toEqual({
    effect: 'allow',
    pattern: 'pay:*:*',
    condition: 'body.amount <= 50',
    ttl: '7d',
    budget: { calls: 20, per: '1d' },
  });
  expect(ruleBody('allow', 'pay:*:*', { sum: 'body.amount', max: '500', per: '1d' })).toMatchObject({ budget: { sum: 'body.amount', max: 500, per: '1d' } });
  expect(ruleBody('deny', 'pay:*:*', { when: 'body.amount > 100' })).toEqual({ effect: 'deny', pattern: 'pay:*:*', condition: 'body.amount > 100' });
});

it('refuses budget options that do not fit together', () => {
  expect(() => ruleBody('deny', 'p:*:*', { calls: '3', per: '1h' })).toThrow('only an allow rule takes a budget');
  expect(() => ruleBody('allow', 'p:*:*', { calls: '3' })).toThrow('needs --per');
  expect(() => ruleBody('allow', 'p:*:*', { per: '1h' })).toThrow('--per goes with');
  expect(() => ruleBody('allow', 'p:*:*', { calls: '3', sum: 'body.a', max: '1', per: '1h' })).toThrow('not both');
  expect(() => ruleBody('allow', 'p:*:*', { sum: 'body.a', per: '1h' })).toThrow('go together');
});

it('says a rule\'s when in words', () => {
  expect(ruleWhen({ condition: null, budget: null, budget_usage: null })).toBe('always');
  expect(ruleWhen({ condition: 'body.amount <= 50', budget: { calls: 3, per: '1h' }, budget_usage: { used: 1, limit: 3 } })).toBe('only when body.amount <= 50; at most 3 calls per hour (1 of 3 used)');
});
