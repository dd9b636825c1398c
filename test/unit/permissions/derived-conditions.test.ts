import { describe, expect, it } from 'vitest';
import { conditionRequest, evaluateCondition } from '../../../core/permissions/conditions.ts';
import { celNumber, celPath, celString, deriveConditions, MAX_DERIVED_CONDITIONS, type ConditionSource } from '../../../core/permissions/derived-conditions.ts';
import { isSubsetOfTiers, suggestedTiers } from '../../../core/permissions/tiers.ts';

const param = (name: string, raw: Record<string, unknown>) => ({ name, schema: { raw } });
const call = (body: unknown, params: Record<string, unknown> = {}) => ({ method: 'POST', url: 'https://api.example.test/x', params, body });

/** A refund: a numeric amount, a currency enum, a customer id, a free-text note. */
const refund: ConditionSource = {
  parameters: [param('account_id', { type: 'string' }), param('limit', { type: 'integer' })],
  bodySchema: {
    type: 'object',
    properties: {
      amount: { type: 'number' },
      currency: { type: 'string', enum: ['usd', 'eur'] },
      customer: { type: 'string', format: 'uuid' },
      note: { type: 'string' },
    },
  },
};

describe('deriveConditions', () => {
  it('offers "up to this amount" for numbers and "only this value" for enums and ids, in schema order', () => {
    const derived = deriveConditions(refund, call({ amount: 60, currency: 'eur', customer: '6f1c0e1a-9a54-4b8e-8d0e-3f8f5b0c2a11', note: 'late' }, { account_id: 'acct_9', limit: 5 }));
    expect(derived).toEqual([
      { condition: 'params.account_id == "acct_9"', description: 'only this value: params.account_id == "acct_9"' },
      { condition: 'params.limit <= 5', description: 'up to this amount: params.limit <= 5' },
      { condition: 'body.amount <= 60', description: 'up to this amount: body.amount <= 60' },
      { condition: 'body.currency == "eur"', description: 'only this value: body.currency == "eur"' },
    ]);
    expect(derived.length).toBe(MAX_DERIVED_CONDITIONS);
  });

  it('derives nothing for a field that is missing, null, not a scalar, of the wrong type or redacted', () => {
    const source: ConditionSource = {
      parameters: [],
      bodySchema: { type: 'object', properties: { amount: { type: 'number' }, channel_id: { type: 'string' }, kind: { type: 'string', enum: ['a', 'b'] }, tags: { type: 'array' } } },
    };
    for (const body of [{}, null, 'text', [1, 2], { amount: null, channel_id: null }, { amount: '60', channel_id: { id: 'C1' }, kind: ['a'] }, { amount: [60], tags: ['x'] }, { channel_id: '[REDACTED]', kind: '[REDACTED]' }]) {
      expect(deriveConditions(source, call(body)), JSON.stringify(body)).toEqual([]);
    }
    expect(deriveConditions({ parameters: [] }, call({ amount: 5 }))).toEqual([]);
  });

  it('follows nested body fields by path, and selects names that are not identifiers by index', () => {
    const source: ConditionSource = {
      parameters: [],
      bodySchema: {
        type: 'object',
        properties: { refund: { type: 'object', properties: { amount: { type: ['integer', 'null'] }, 'order-id': { type: 'string' }, in: { type: 'number' } } } },
      },
    };
    const request = call({ refund: { amount: 7, 'order-id': 'o-1', in: 3 } });
    const derived = deriveConditions(source, request).map((d) => d.condition);
    expect(derived).toEqual(['body.refund.amount <= 7', 'body.refund["order-id"] == "o-1"', 'body.refund["in"] <= 3']);
    for (const c of derived) expect(evaluateCondition(c, conditionRequest(request)).holds, c).toBe(true);
  });

  it('quotes hostile strings as CEL literals that hold for exactly this value', () => {
    const source: ConditionSource = { parameters: [], bodySchema: { type: 'object', properties: { channel_id: { type: 'string' } } } };
    for (const value of ['a"b', 'back\\slash', 'line\nbreak\ttab', '" || true || "', '\\" || true || \\"', 'é 漢字 😀', '\u2028\u0000\u007f', '${x}']) {
      const request = call({ channel_id: value });
      const [derived] = deriveConditions(source, request);
      expect(derived?.condition, value).toBe(`body.channel_id == ${celString(value)}`);
      expect(evaluateCondition(derived!.condition, conditionRequest(request)).holds, value).toBe(true);
      // Any other value, even one the literal's text contains, is outside it.
      expect(evaluateCondition(derived!.condition, conditionRequest(call({ channel_id: `${value}x` }))).holds, value).toBe(false);
      expect(evaluateCondition(derived!.condition, conditionRequest(call({ channel_id: 'other' }))).holds, value).toBe(false);
    }
    // A lone surrogate cannot be written as a CEL literal; a very long value does not read as "this value".
    expect(deriveConditions(source, call({ channel_id: 'a\ud800b' }))).toEqual([]);
    expect(deriveConditions(source, call({ channel_id: 'x'.repeat(201) }))).toEqual([]);
  });

  it('bounds huge, negative and fractional numbers exactly, and a number above them is outside', () => {
    const source: ConditionSource = { parameters: [], bodySchema: { type: 'object', properties: { amount: { type: 'number' } } } };
    for (const amount of [0, -5, 60.5, 1e21, 2 ** 60, Number.MAX_SAFE_INTEGER, 1e-7, -0.25]) {
      const request = call({ amount });
      const [derived] = deriveConditions(source, request);
      expect(derived?.condition, String(amount)).toBe(`body.amount <= ${celNumber(amount)}`);
      expect(evaluateCondition(derived!.condition, conditionRequest(request)).holds, String(amount)).toBe(true);
      const above = amount === 0 ? 1 : amount + Math.abs(amount);
      expect(evaluateCondition(derived!.condition, conditionRequest(call({ amount: above }))).holds, String(above)).toBe(false);
    }
  });

  it('an id may be an integer; it is offered as "only this value", never as a bound', () => {
    const source: ConditionSource = { parameters: [param('user_id', { type: 'integer' }), param('repoId', { type: 'integer' }), param('id', { type: 'string' })], bodySchema: undefined };
    const request = call(null, { user_id: 42, repoId: 7, id: 'x-1' });
    expect(deriveConditions(source, request).map((d) => d.condition)).toEqual(['params.user_id == 42', 'params.repoId == 7', 'params.id == "x-1"']);
    expect(evaluateCondition('params.user_id == 42', conditionRequest(call(null, { user_id: 43 }))).holds).toBe(false);
  });

  it('leaves out the scope parameter: the exact key tier already binds it', () => {
    const source: ConditionSource = { parameters: [param('channel_id', { type: 'string' })], bodySchema: { type: 'object', properties: { team_id: { type: 'string' } } }, scopeParam: 'team_id' };
    expect(deriveConditions(source, call({ team_id: 'T1' }, { channel_id: 'C1' })).map((d) => d.condition)).toEqual(['params.channel_id == "C1"']);
    expect(deriveConditions({ ...source, scopeParam: 'channel_id' }, call({ team_id: 'T1' }, { channel_id: 'C1' })).map((d) => d.condition)).toEqual(['body.team_id == "T1"']);
  });
});

describe('celPath, celString, celNumber', () => {
  it('writes paths, strings and numbers as CEL reads them', () => {
    expect(celPath(['body', 'a', 'b_c'])).toBe('body.a.b_c');
    expect(celPath(['body', 'x-y', 'null', '1st'])).toBe('body["x-y"]["null"]["1st"]');
    expect(celString('a"\\\n')).toBe('"a\\"\\\\\\u000a"');
    expect([celNumber(60), celNumber(-5), celNumber(0.5), celNumber(1e21), celNumber(2 ** 60)]).toEqual(['60', '-5', '0.5', '1e+21', '1152921504606847000.0']);
  });
});

describe('suggestedTiers with derived conditions', () => {
  it('appends one tier per condition after the key tiers: the action-wide key, remembered with the condition', () => {
    const tiers = suggestedTiers(['pay:create_refund:acct_9'], [{ condition: 'body.amount <= 60', description: 'up to this amount: body.amount <= 60' }]);
    expect(tiers).toEqual([
      { keys: ['pay:create_refund:acct_9'], description: 'create_refund on pay for acct_9, with any other parameters' },
      { keys: ['pay:create_refund:*'], description: 'Any create_refund on pay' },
      { keys: ['pay:*:*'], description: 'Any action on pay' },
      { keys: ['pay:create_refund:*'], description: 'Any create_refund on pay, up to this amount: body.amount <= 60', condition: 'body.amount <= 60' },
    ]);
    expect(isSubsetOfTiers(tiers[3]!.keys, tiers)).toBe(true);
    expect(suggestedTiers(['pay:create_refund:acct_9'])).toEqual(tiers.slice(0, 3));
  });
});
