import { describe, expect, it } from 'vitest';
import { callAmount, describeBudget, validateBudget, windowStart } from '../../../core/permissions/budgets.ts';
import { conditionRequest } from '../../../core/permissions/conditions.ts';

const req = (body: unknown) => conditionRequest({ method: 'POST', url: 'https://pay.test/refunds', params: {}, body });

describe('rule budgets', () => {
  it('accepts the two shapes and refuses anything else, naming the field', () => {
    expect(validateBudget({ calls: 20, per: '1d' })).toEqual({ ok: true, budget: { calls: 20, per: '1d' } });
    expect(validateBudget({ sum: 'body.amount', max: 500, per: '1d' })).toEqual({ ok: true, budget: { sum: 'body.amount', max: 500, per: '1d' } });
    expect(validateBudget({ calls: 1.5, per: '1h' })).toMatchObject({ ok: false, field: 'budget.calls' });
    expect(validateBudget({ calls: 3, per: '91d' })).toMatchObject({ ok: false, field: 'budget.per' });
    expect(validateBudget({ calls: 3, per: '01h' })).toMatchObject({ ok: false, field: 'budget.per' });
    expect(validateBudget({ sum: 'body.__proto__x', max: Number.POSITIVE_INFINITY, per: '1d' })).toMatchObject({ ok: false, field: 'budget.max' });
    expect(validateBudget({ sum: 'amount', max: 5, per: '1d' })).toMatchObject({ ok: false, field: 'budget.sum' });
    expect(validateBudget({ calls: 3, per: '1h', extra: 1 })).toMatchObject({ ok: false, field: 'budget' });
    expect(validateBudget([1])).toMatchObject({ ok: false });
  });

  it('windows are fixed and aligned to the epoch', () => {
    expect(windowStart({ calls: 1, per: '1h' }, new Date('2026-11-28T01:59:59.999Z')).toISOString()).toBe('2026-11-28T01:00:00.000Z');
    expect(windowStart({ calls: 1, per: '1d' }, new Date('2026-11-28T23:00:00Z')).toISOString()).toBe('2026-11-28T00:00:00.000Z');
  });

  it('a sum charges the field only when it is a non-negative finite number', () => {
    const sum = { sum: 'body.amount', max: 100, per: '1d' };
    expect(callAmount(sum, req({ amount: 40 }))).toBe(40);
    expect(callAmount(sum, req({ amount: -40 }))).toBeNull();
    expect(callAmount(sum, req({ amount: '40' }))).toBeNull();
    expect(callAmount(sum, req({}))).toBeNull();
    expect(callAmount(sum, null)).toBeNull();
    expect(callAmount({ calls: 3, per: '1h' }, null)).toBe(1);
  });

  it('says the budget in words', () => {
    expect(describeBudget({ calls: 1, per: '1h' })).toBe('at most 1 call per hour');
    expect(describeBudget({ calls: 20, per: '2d' })).toBe('at most 20 calls per 2 days');
    expect(describeBudget({ sum: 'body.amount', max: 500, per: '1d' })).toBe('body.amount adding up to at most 500 per day');
  });
});
