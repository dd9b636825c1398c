import { describe, expect, it } from 'vitest';
import { compileCondition, compiledCondition, conditionRequest, evaluateCondition, CONDITION_LIMITS } from '../../../core/permissions/conditions.ts';

const request = (body: unknown, params: Record<string, unknown> = {}) =>
  conditionRequest({ method: 'POST', url: 'https://api.example.test/v1/refunds?currency=usd&tag=a&tag=b', params, body });

describe('compileCondition', () => {
  it('accepts boolean expressions over the projection', () => {
    expect(compileCondition('body.amount <= 50')).toEqual({ ok: true });
    expect(compileCondition('method == "POST" && host == "api.example.test" && path.startsWith("/v1/")')).toEqual({ ok: true });
    expect(compileCondition('has(body.amount) && params.channel in ["eng", "ops"]')).toEqual({ ok: true });
    expect(compileCondition('body.items.all(i, i.price < 10)')).toEqual({ ok: true });
  });

  it('names the position of a syntax error', () => {
    const r = compileCondition('body.amount <= ');
    expect(r).toMatchObject({ ok: false, position: 15 });
  });

  it('refuses unknown variables and non-boolean results', () => {
    expect(compileCondition('amount <= 50')).toMatchObject({ ok: false, position: 0 });
    expect(compileCondition('body.amount + 1')).toMatchObject({ ok: false });
    expect(compileCondition('"a" + "b"')).toMatchObject({ ok: false, message: expect.stringContaining('true or false') });
  });

  it('refuses long, deep, empty and unbounded expressions', () => {
    const long = `body.a == "${'x'.repeat(CONDITION_LIMITS.maxChars)}"`;
    expect(compileCondition(long)).toMatchObject({ ok: false, message: expect.stringContaining('at most') });
    expect(compileCondition(`${'('.repeat(40)}body.a${')'.repeat(40)} == 1`)).toMatchObject({ ok: false });
    expect(compileCondition(Array.from({ length: 120 }, (_, i) => `body.a == ${i}`).join(' || '))).toMatchObject({ ok: false });
    expect(compileCondition('   ')).toMatchObject({ ok: false });
    expect(compileCondition('body.s.matches("(a+)+$")')).toMatchObject({ ok: false, message: expect.stringContaining('matches') });
    expect(compileCondition('body.xs.all(x, body.xs.all(y, x == y))')).toMatchObject({ ok: false, position: 15 });
  });
});

describe('evaluateCondition', () => {
  it('holds within the bound and explains the failure with the value read', () => {
    expect(evaluateCondition('body.amount <= 50', request({ amount: 40 }))).toEqual({ holds: true, explanation: '' });
    expect(evaluateCondition('body.amount <= 50', request({ amount: 60 }))).toEqual({ holds: false, explanation: 'body.amount <= 50 was false: amount is 60' });
  });

  it('a missing field, a null body or a string for a number is false, never an error', () => {
    expect(evaluateCondition('body.amount <= 50', request({})).holds).toBe(false);
    expect(evaluateCondition('body.amount <= 50', request({})).explanation).toContain('amount is missing');
    expect(evaluateCondition('body.amount <= 50', request(null)).holds).toBe(false);
    expect(evaluateCondition('body.amount <= 50', request({ amount: '40' })).holds).toBe(false);
    expect(evaluateCondition('body.amount <= 50', request([1, 2])).holds).toBe(false);
    expect(evaluateCondition('body.amount.value <= 50', request({ amount: 5 })).holds).toBe(false);
  });

  it('huge and negative numbers compare as numbers', () => {
    expect(evaluateCondition('body.amount <= 50', request({ amount: 1e308 })).holds).toBe(false);
    expect(evaluateCondition('body.amount <= 50', request({ amount: -1e308 })).holds).toBe(true);
    expect(evaluateCondition('body.amount >= 0 && body.amount <= 50', request({ amount: -5 })).holds).toBe(false);
    expect(evaluateCondition('body.amount <= 50', request({ amount: Number.MAX_SAFE_INTEGER + 2 })).holds).toBe(false);
  });

  it('compares unicode exactly (no normalisation)', () => {
    expect(evaluateCondition('params.channel == "équipe"', request({}, { channel: 'équipe' })).holds).toBe(true);
    // The same word with a combining accent is a different string.
    expect(evaluateCondition('params.channel == "équipe"', request({}, { channel: 'e\u0301quipe' })).holds).toBe(false);
    expect(evaluateCondition('body.note.size() < 3', request({ note: '😀😀' })).holds).toBe(true);
  });

  it('reads own fields only: no prototype members, a "__proto__" key is just a key', () => {
    const hostile = conditionRequest({ method: 'GET', url: 'https://a.test/', params: {}, body: JSON.parse('{"__proto__": {"amount": 1}}') });
    expect(evaluateCondition('has(body.constructor)', hostile).holds).toBe(false);
    expect(evaluateCondition('body.amount == 1', hostile).holds).toBe(false);
    expect(evaluateCondition('body.__proto__.amount == 1', hostile).holds).toBe(true);
  });

  it('sees host, path and query of the URL', () => {
    expect(evaluateCondition('host == "api.example.test" && path == "/v1/refunds" && query.currency == "usd"', request({})).holds).toBe(true);
    expect(evaluateCondition('"b" in query.tag', request({})).holds).toBe(true);
  });

  it('a non-boolean or unknown request is false', () => {
    expect(evaluateCondition('body.flag', request({ flag: 'yes' })).holds).toBe(false);
    expect(evaluateCondition('body.amount <= 50', null)).toMatchObject({ holds: false });
    expect(evaluateCondition('not valid (', request({}))).toMatchObject({ holds: false });
  });

  it('evaluation time stays bounded on the largest allowed expression over a large body', () => {
    const items = Array.from({ length: 50_000 }, (_, i) => ({ price: i % 7, name: `item ${i}` }));
    const source = 'body.items.all(i, i.price < 10 && i.name.size() < 20 && i.name.startsWith("item")) && body.items.exists(i, i.price == 99) == false';
    expect(compileCondition(source)).toEqual({ ok: true });
    const started = performance.now();
    expect(evaluateCondition(source, request({ items })).holds).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('compiled conditions', () => {
  it('keeps a condition checked on every call compiled while a thousand others pass through', () => {
    const hot = 'body.amount <= 50';
    const compiled = compiledCondition(hot);
    expect(compiled).not.toBeNull();
    for (let i = 0; i < 2_500; i++) {
      compiledCondition(`body.amount <= ${i + 100}`);
      // The hot rule's condition is read on every call between the others.
      expect(compiledCondition(hot)).toBe(compiled);
    }
    expect(compiledCondition('body.amount <= 100')).not.toBe(compiledCondition('body.amount <= 101'));
  });
});
