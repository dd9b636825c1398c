// `gateway approve`: the decision it sends, remembering with a condition (--when) included.
import { expect, it } from 'vitest';
import { approveDecision, tierCondition } from '../../../cli/commands/approvals.ts';

it('allows once without keys, remembers with keys and a ttl, and carries --when as remember_condition', () => {
  expect(approveDecision([], {})).toEqual({ decision: 'allow_once' });
  expect(approveDecision(['pay:create_refund:*'], { ttl: '7d' })).toEqual({ decision: 'allow_remember', remember_keys: ['pay:create_refund:*'], ttl: '7d' });
  expect(approveDecision(['pay:create_refund:*'], { ttl: '7d', when: 'body.amount <= 50' })).toEqual({
    decision: 'allow_remember',
    remember_keys: ['pay:create_refund:*'],
    ttl: '7d',
    remember_condition: 'body.amount <= 50',
  });
});

it('refuses --when and --ttl without keys, and keys without --ttl', () => {
  expect(() => approveDecision([], { when: 'body.amount <= 50' })).toThrow('--when goes with --remember KEY or --tier N');
  expect(() => approveDecision([], { ttl: '1d' })).toThrow('--ttl goes with');
  expect(() => approveDecision(['k'], {})).toThrow('remembering needs --ttl');
});

it('--tier with a condition remembers it, and with --when as well both must hold', () => {
  expect(tierCondition({}, undefined)).toBeUndefined();
  expect(tierCondition({}, 'body.a == 1')).toBe('body.a == 1');
  expect(tierCondition({ condition: 'body.amount <= 60' }, undefined)).toBe('body.amount <= 60');
  expect(tierCondition({ condition: 'body.amount <= 60' }, 'body.currency == "eur" || true')).toBe('(body.amount <= 60) && (body.currency == "eur" || true)');
});
