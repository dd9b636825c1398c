import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addedField, applyEdit, fieldDiff, keysBeyondOriginal, RequestEditError, wideningKey, type EditableRequest } from '../../../core/approvals/request-edit.ts';
import { httpPermissionKey } from '../../../core/permissions/keys.ts';

const raw: EditableRequest = {
  kind: 'http',
  method: 'POST',
  url: 'https://bank.test/transfer',
  headers: { 'Content-Type': 'application/json', Authorization: 'Bearer agent-typed' },
  body: { amount: 5000, to: 'acct-9' },
  inject: { secret: 'BANK', in: 'header', name: 'X-Bank-Key' },
};

describe('applyEdit', () => {
  it('replaces the fields of a raw request that the edit names and keeps the rest', () => {
    const edited = applyEdit(raw, { kind: 'request', request: { body: { amount: 50, to: 'acct-9' } } });
    expect(edited).toEqual({ ...raw, body: { amount: 50, to: 'acct-9' } });
    expect(applyEdit(raw, { kind: 'request', request: { method: 'put' } })).toMatchObject({ method: 'PUT' });
  });

  it('keeps credential headers as the agent sent them and refuses an edit that sets one', () => {
    const edited = applyEdit(raw, { kind: 'request', request: { headers: { Accept: 'application/json' } } });
    expect(edited.kind === 'http' && edited.headers).toEqual({ Authorization: 'Bearer agent-typed', Accept: 'application/json' });
    for (const name of ['authorization', 'Cookie', 'x-bank-key', 'Proxy-Authorization']) {
      expect(() => applyEdit(raw, { kind: 'request', request: { headers: { [name]: 'typed' } } })).toThrow(RequestEditError);
    }
  });

  it('refuses credentials in the URL and the injected query parameter', () => {
    expect(() => applyEdit(raw, { kind: 'request', request: { url: 'https://u:p@bank.test/transfer' } })).toThrow(/credentials/);
    const q: EditableRequest = { ...raw, inject: { secret: 'K', in: 'query', name: 'api_key' } } as EditableRequest;
    expect(() => applyEdit(q, { kind: 'request', request: { url: 'https://bank.test/transfer?api_key=x' } })).toThrow(/injected/);
    expect(() => applyEdit(raw, { kind: 'request', request: { url: 'not a url' } })).toThrow(RequestEditError);
  });

  it('refuses a body field the agent\'s request does not have, naming it, at any depth (defects issue, item 7)', () => {
    const refused = (body: unknown, original: EditableRequest = raw) => {
      try {
        applyEdit(original, { kind: 'request', request: { body } });
      } catch (err) {
        if (err instanceof RequestEditError) return err.field;
        throw err;
      }
      return null;
    };
    expect(refused({ amount: 100, to: 'acct-9', amout: 5 })).toBe('request.body.amout');
    expect(refused({ amount: 5 })).toBeNull(); // removing a field narrows
    const nested: EditableRequest = { ...raw, body: { to: { iban: 'X1' }, items: [{ sku: 'a' }] } } as EditableRequest;
    expect(refused({ to: { iban: 'X2', bic: 'B' } }, nested)).toBe('request.body.to.bic');
    expect(refused({ items: [{ sku: 'b' }] }, nested)).toBeNull(); // an array is a value
    const bodiless: EditableRequest = { kind: 'http', method: 'POST', url: 'https://bank.test/x' };
    expect(refused({ amount: 1 }, bodiless)).toBe('request.body.amount');
    expect(refused('plain text', bodiless)).toBeNull();
    expect(addedField({ a: 1 }, { a: { b: 1 } }, 'body')).toBe('body.a.b');
    expect(addedField({ a: 1 }, ['x'], 'body')).toBeNull();
  });

  it('merges params over a service action\'s, null removing one; the shapes must match', () => {
    const action: EditableRequest = { kind: 'action', params: { owner: 'o', repo: 'r', title: 'T', draft: true } };
    expect(applyEdit(action, { kind: 'params', params: { title: 'U', draft: null } })).toEqual({ kind: 'action', params: { owner: 'o', repo: 'r', title: 'U' } });
    expect(() => applyEdit(action, { kind: 'request', request: { method: 'GET' } })).toThrow(RequestEditError);
    expect(() => applyEdit(raw, { kind: 'params', params: {} })).toThrow(RequestEditError);
  });
});

describe('wideningKey', () => {
  const original = ['http:POST:bank.test/transfer'];
  it('accepts the same keys, refuses another host, path or method naming the key', () => {
    expect(wideningKey(original, ['http:POST:bank.test/transfer'], new Set())).toBeNull();
    expect(wideningKey(original, ['http:POST:evil.test/transfer'], new Set())).toBe('http:POST:evil.test/transfer');
    expect(wideningKey(original, ['http:POST:bank.test/admin'], new Set())).toBe('http:POST:bank.test/admin');
    expect(wideningKey(['http:GET:bank.test/a'], ['http:DELETE:bank.test/a'], new Set())).toBe('http:DELETE:bank.test/a');
  });
  it('accepts a key beyond the original that the resolver could grant', () => {
    expect(wideningKey(original, ['http:POST:bank.test/other'], new Set(['http:POST:bank.test/other']))).toBeNull();
    expect(keysBeyondOriginal(original, ['http:POST:bank.test/transfer', 'x:y:z'])).toEqual(['x:y:z']);
  });

  const segment = fc.stringMatching(/^[a-z0-9]{1,6}$/);
  const httpKey = fc.record({ verb: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'), host: segment, path: fc.array(segment, { maxLength: 3 }) }).map(
    ({ verb, host, path }) => httpPermissionKey(verb, `https://${host}.test/${path.join('/')}`),
  );

  it('property: an edit whose keys are a subset of the original\'s always narrows', () => {
    fc.assert(
      fc.property(fc.uniqueArray(httpKey, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), (keys, picks) => {
        const edited = picks.map((i) => keys[i % keys.length]!);
        expect(wideningKey(keys, edited, new Set())).toBeNull();
      }),
    );
  });

  it('property: a raw edit passes for a person exactly when method, host and path stay; the query and body are free', () => {
    const req = fc.record({ verb: fc.constantFrom('GET', 'POST', 'DELETE'), host: fc.constantFrom('a', 'b'), path: fc.constantFrom('x', 'x/y', 'z'), q: fc.constantFrom('', '?n=1', '?n=2') });
    fc.assert(
      fc.property(req, req, (o, e) => {
        const original = [httpPermissionKey(o.verb, `https://${o.host}.test/${o.path}${o.q}`)];
        const edited = [httpPermissionKey(e.verb, `https://${e.host}.test/${e.path}${e.q}`)];
        const same = o.verb === e.verb && o.host === e.host && o.path === e.path;
        expect(wideningKey(original, edited, new Set()) === null).toBe(same);
      }),
    );
  });

  it('property: any edited key outside the original and the grantable set is refused, by name', () => {
    fc.assert(
      fc.property(fc.uniqueArray(httpKey, { minLength: 2, maxLength: 5 }), fc.nat(), (keys, n) => {
        const [outside, ...original] = [keys[n % keys.length]!, ...keys.filter((_, i) => i !== n % keys.length)];
        const edited = [...original.slice(0, 1), outside];
        expect(wideningKey(original, edited, new Set())).toBe(outside);
        expect(wideningKey(original, edited, new Set([outside]))).toBeNull();
      }),
    );
  });
});

describe('fieldDiff', () => {
  it('lists changed, added and removed fields by dotted path', () => {
    expect(fieldDiff({ body: { amount: 5000, to: 'acct-9', memo: 'x' } }, { body: { amount: 50, to: 'acct-9', note: 'y' } })).toEqual([
      { field: 'body.amount', before: 5000, after: 50 },
      { field: 'body.memo', before: 'x' },
      { field: 'body.note', after: 'y' },
    ]);
    expect(fieldDiff({ a: [1, 2] }, { a: [1, 2] })).toEqual([]);
    expect(fieldDiff({ a: { x: 1, y: 2 } }, { a: { y: 2, x: 1 } })).toEqual([]);
  });

  it('shows a hidden field as [REDACTED] on both sides: that it changed, never its values', () => {
    const diff = fieldDiff({ headers: { 'X-Trace': 'secret-a' }, body: { pin: '1234' } }, { headers: { 'X-Trace': 'secret-b' }, body: { pin: '9999' } }, ['headers.*', 'body.pin']);
    expect(diff).toEqual([
      { field: 'body.pin', before: '[REDACTED]', after: '[REDACTED]' },
      { field: 'headers.X-Trace', before: '[REDACTED]', after: '[REDACTED]' },
    ]);
    expect(JSON.stringify(diff)).not.toMatch(/secret-|1234|9999/);
  });
});
