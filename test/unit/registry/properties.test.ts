import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXTENSIONS, ext, normalizeAliases } from '../../../core/registry/aliases.ts';
import { loadServiceDocument } from '../../../server/registry/loader.ts';
import { validDoc } from './fixtures.ts';

const value = fc.jsonValue({ maxDepth: 2 });

/** An object whose keys mix free keys with bare, canonical and kebab spellings of `names`. */
const aliasObject = (names: readonly string[]) =>
  fc
    .tuple(
      fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 3 }),
      fc.subarray(names.flatMap((n) => [n, ext(n), ext(n.replaceAll('_', '-'))])),
      fc.array(value, { minLength: 12, maxLength: 12 }),
    )
    .map(([free, keys, values]) => ({ ...free, ...Object.fromEntries(keys.map((k, i) => [k, values[i % values.length]])) }));

const param = aliasObject(EXTENSIONS.parameter);
const operation = fc
  .tuple(aliasObject(EXTENSIONS.operation), fc.option(fc.array(fc.oneof(param, value), { maxLength: 3 }), { nil: undefined }))
  .map(([op, parameters]) => (parameters === undefined ? op : { ...op, parameters }));
const pathItem = fc.record(
  { get: operation, post: operation, delete: operation, parameters: fc.array(param, { maxLength: 2 }), summary: value },
  { requiredKeys: [] },
);
const generatedDoc = fc.record(
  {
    openapi: fc.constantFrom('3.1.0', '3.0.0', 3.1),
    info: fc.oneof(aliasObject(EXTENSIONS.info), value),
    paths: fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }).map((s) => `/${s}`), pathItem, { maxKeys: 3 }), value),
    components: fc.record({
      securitySchemes: fc.dictionary(fc.string({ maxLength: 6 }), aliasObject(EXTENSIONS.securityScheme), { maxKeys: 2 }),
      parameters: fc.dictionary(fc.string({ maxLength: 6 }), param, { maxKeys: 2 }),
    }),
    runtime: value,
    mcp: value,
    'x-gateway-runtime': value,
  },
  { requiredKeys: [] },
);

describe('normalizeAliases (properties)', () => {
  it('is idempotent and never mutates its input', () => {
    fc.assert(
      fc.property(fc.oneof(generatedDoc, fc.jsonValue()), (input) => {
        const before = structuredClone(input);
        const once = normalizeAliases(input);
        expect(input).toEqual(before);
        const twice = normalizeAliases(once.doc);
        expect(twice.doc).toEqual(once.doc);
        expect(twice.problems).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

const isWellFormed = (r: Awaited<ReturnType<typeof loadServiceDocument>>) =>
  r.ok ? typeof r.service.key === 'string' : r.problems.length > 0 && r.problems.every((p) => typeof p.code === 'string' && typeof p.path === 'string' && p.message !== '');

/** Replaces (or deletes) the node at a random path of the valid fixture. */
const mutatedDoc = fc
  .tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), fc.option(fc.jsonValue({ maxDepth: 3 })))
  .map(([steps, replacement]) => {
    const doc = validDoc();
    let node: any = doc;
    for (const [i, step] of steps.entries()) {
      const keys = node && typeof node === 'object' ? Object.keys(node) : [];
      if (keys.length === 0) break;
      const key = keys[step % keys.length] as string;
      const last = i === steps.length - 1 || !(node[key] && typeof node[key] === 'object');
      if (last) {
        if (replacement === null) {
          if (Array.isArray(node)) node.splice(Number(key), 1);
          else delete node[key];
        } else node[key] = replacement;
        break;
      }
      node = node[key];
    }
    return doc;
  });

/** Mutations that must be rejected: a required field replaced by something it cannot be. */
const requiredFieldBroken = fc
  .tuple(
    fc.constantFrom<Array<(d: any, v: unknown) => void>>(
      (d, v) => (d.openapi = v),
      (d, v) => (d.info.title = v),
      (d, v) => (d.info.key = v),
      (d, v) => (d.servers = v),
      (d, v) => (d.paths['/chat.postMessage'].post.operationId = v),
      (d, v) => (d.paths['/chat.postMessage'].post.summary = v),
      (d, v) => (d.paths['/chat.postMessage'].post.risk = v),
    ),
    fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.constant(''), fc.constant({})),
  )
  .map(([mutate, v]) => {
    const d = validDoc();
    mutate(d, v);
    return d;
  });

describe('loadServiceDocument (properties)', () => {
  it('never throws on random JSON values and rejects them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (input) => {
        const r = await loadServiceDocument(input, 'fuzz');
        expect(r.ok).toBe(false);
        expect(isWellFormed(r)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('never throws on random text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (text) => {
        const r = await loadServiceDocument(text, 'fuzz');
        expect(r.ok).toBe(false);
        expect(isWellFormed(r)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('never throws on random mutations of a valid document', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutatedDoc, generatedDoc), async (doc) => {
        expect(isWellFormed(await loadServiceDocument(doc, 'fuzz'))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('returns problems when a required field is broken', async () => {
    await fc.assert(
      fc.asyncProperty(requiredFieldBroken, async (doc) => {
        const r = await loadServiceDocument(doc, 'fuzz');
        expect(r.ok).toBe(false);
        expect(isWellFormed(r)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
