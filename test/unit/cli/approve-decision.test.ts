// `gateway approve`: the decision it sends, remembering with a condition (--when) included.
import { expect, it } from 'vitest';
import { approveDecision } from '../../../cli/commands/approvals.ts';

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
