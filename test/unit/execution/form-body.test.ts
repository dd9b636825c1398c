// The form-body encoder: exact bytes for the shapes vendors document, refusals for values a form
// cannot carry faithfully, and round trips through real parsers (URLSearchParams; qs, the parser
// behind express's extended urlencoded bodies and the bracket syntax Stripe documents; undici's
// multipart parser behind Response.formData()).
import fc from 'fast-check';
import qs from 'qs';
import { describe, expect, it } from 'vitest';
import { encodeFormBody, formFields } from '../../../core/execution/form-body.ts';
import type { FieldEncoding, FormBody } from '../../../core/registry/request-body.ts';

const FORM = 'application/x-www-form-urlencoded';
const form = (encoding: Record<string, FieldEncoding> = {}): FormBody => ({ mediaType: FORM, encoding });
const multipart = (encoding: Record<string, FieldEncoding> = {}): FormBody => ({ mediaType: 'multipart/form-data', encoding });
const deep: FieldEncoding = { style: 'deepObject', explode: true };
const urlencoded = (body: Record<string, unknown>, f = form()) => encodeFormBody(body, f, 'unused').payload;

describe('application/x-www-form-urlencoded', () => {
  it('writes Stripe-style nested objects and arrays with literal brackets and text scalars', () => {
    const body = {
      customer: 'cus_123',
      amount: 2000,
      confirm: true,
      metadata: { order_id: '6735', 'note with space': 'a&b=c' },
      items: [{ price: 'price_1', quantity: 2 }, { price: 'price_2' }],
      expand: ['customer', 'invoice.subscription'],
    };
    const encoding = { metadata: deep, items: deep, expand: deep };
    expect(encodeFormBody(body, form(encoding), 'x')).toEqual({
      contentType: FORM,
      payload:
        'customer=cus_123&amount=2000&confirm=true&metadata[order_id]=6735&metadata[note+with+space]=a%26b%3Dc' +
        '&items[0][price]=price_1&items[0][quantity]=2&items[1][price]=price_2&expand[]=customer&expand[]=invoice.subscription',
    });
  });

  it('follows OpenAPI form style: exploded arrays repeat the key, explode false joins with commas, null is empty', () => {
    expect(urlencoded({ ids: ['a', 'b'], note: null, n: 1.5, off: false })).toBe('ids=a&ids=b&note=&n=1.5&off=false');
    expect(urlencoded({ ids: ['a', 'b'], color: { r: 1, g: 2 } }, form({ ids: { style: 'form', explode: false }, color: { style: 'form', explode: false } }))).toBe('ids=a%2Cb&color=r%2C1%2Cg%2C2');
    expect(urlencoded({ color: { r: 1, g: 2 }, name: 'x' })).toBe('r=1&g=2&name=x');
  });

  it('sends a contentType application/json property as JSON text', () => {
    expect(urlencoded({ blocks: [{ type: 'section' }] }, form({ blocks: { style: 'form', explode: true, contentType: 'application/json' } }))).toBe(
      `blocks=${encodeURIComponent('[{"type":"section"}]')}`,
    );
  });

  it('escapes as URLSearchParams does, lone surrogates included', () => {
    const value = "a b+c/é!'()~*-._\ud800";
    expect(urlencoded({ v: value })).toBe(new URLSearchParams({ v: value }).toString());
  });

  it('refuses what the upstream would read differently from the body an approver saw', () => {
    const problems = (body: Record<string, unknown>, f = form()) => {
      const r = formFields(body, f);
      return r.ok ? [] : r.problems.map((p) => p.field);
    };
    expect(problems({ metadata: { 'a][b': 'x' } }, form({ metadata: deep }))).toEqual(['metadata.a][b']);
    expect(problems({ 'x[y]': 1 })).toEqual(['x[y]']);
    expect(problems({ tags: ['a,b'] }, form({ tags: { style: 'form', explode: false } }))).toEqual(['tags']);
    expect(problems({ items: [{ price: 'p' }] })).toEqual(['items']);
    expect(problems({ name: 'Bob', address: { name: 'Eve' } })).toEqual(['address.name']);
    expect(problems({ a: { k: 1 }, b: { k: 2 } })).toEqual(['b.k']);
    expect(() => encodeFormBody({ 'x[y]': 1 }, form(), 'b')).toThrow(/cannot be encoded/);
  });

  const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !/[[\]]/.test(k) && k !== '__proto__');
  const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean());

  it('round-trips a flat form through URLSearchParams', () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.oneof(scalar, fc.array(scalar, { minLength: 1, maxLength: 4 }))), (body) => {
        const parsed = new URLSearchParams(urlencoded(body));
        for (const [name, value] of Object.entries(body)) {
          const want = (Array.isArray(value) ? value : [value]).map((v) => String(v).toWellFormed());
          expect(parsed.getAll(name)).toEqual(want);
        }
        expect(new Set(parsed.keys())).toEqual(new Set(Object.keys(body)));
      }),
    );
  });

  it('round-trips deepObject bodies through qs (scalars become text; empty lists and objects send nothing)', () => {
    // Objects whose members are scalars, lists of scalars or lists of such objects: what Stripe takes.
    // Index-like member names are left out: in the bracket syntax `a[0]=x` is a list to qs (a map
    // to Rack); either way both sides of the round trip agree only on names that are not indices.
    const name = key.filter((k) => !/^\d+$/.test(k));
    const leaf = fc.dictionary(name, scalar, { minKeys: 1, maxKeys: 3 });
    const member = fc.oneof(scalar, leaf, fc.array(scalar, { minLength: 1, maxLength: 3 }), fc.array(leaf, { minLength: 1, maxLength: 3 }));
    const asText = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(asText) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asText(x)])) : String(v).toWellFormed();
    fc.assert(
      fc.property(fc.dictionary(name, member, { minKeys: 1, maxKeys: 4 }), (body) => {
        const encoding = Object.fromEntries(Object.keys(body).map((k) => [k, deep]));
        const parsed = qs.parse(urlencoded(body, form(encoding)), { depth: 10, arrayLimit: 100, parameterLimit: 10_000, allowPrototypes: true, plainObjects: true });
        expect(parsed).toEqual(asText(body));
      }),
    );
  });
});

describe('multipart/form-data', () => {
  it('writes one text part per scalar, repeated parts for a list, JSON parts for nested values', () => {
    const body = { channel: 'C1', tags: ['a', 'b'], count: 3, meta: { k: 'v' }, 'odd"name': 'x' };
    const encoded = encodeFormBody(body, multipart(), 'BOUNDARY');
    expect(encoded.contentType).toBe('multipart/form-data; boundary=BOUNDARY');
    expect(encoded.payload).toBe(
      [
        '--BOUNDARY\r\nContent-Disposition: form-data; name="channel"\r\n\r\nC1\r\n',
        '--BOUNDARY\r\nContent-Disposition: form-data; name="tags"\r\n\r\na\r\n',
        '--BOUNDARY\r\nContent-Disposition: form-data; name="tags"\r\n\r\nb\r\n',
        '--BOUNDARY\r\nContent-Disposition: form-data; name="count"\r\n\r\n3\r\n',
        '--BOUNDARY\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n{"k":"v"}\r\n',
        '--BOUNDARY\r\nContent-Disposition: form-data; name="odd%22name"\r\n\r\nx\r\n',
        '--BOUNDARY--\r\n',
      ].join(''),
    );
  });

  it('never lets a value contain the boundary', () => {
    expect(() => encodeFormBody({ v: 'x\r\n--B\r\n' }, multipart(), 'B')).toThrow(/boundary/);
  });

  it('round-trips text fields through a real multipart parser', async () => {
    const text = fc.string({ maxLength: 20 }).map((s) => s.toWellFormed().replaceAll('\r', ''));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/), fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 3 })), { minKeys: 1, maxKeys: 4 }), async (body) => {
        const { contentType, payload } = encodeFormBody(body, multipart(), 'gw0123456789abcdef');
        const parsed = await new Response(payload, { headers: { 'content-type': contentType } }).formData();
        for (const [name, value] of Object.entries(body)) expect(parsed.getAll(name)).toEqual(Array.isArray(value) ? value : [value]);
      }),
      { numRuns: 50 },
    );
  });
});
