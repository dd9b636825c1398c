// What the import refuses before converting anything, and why (details.reason of the 400).
import { describe, expect, it } from 'vitest';
import { ImportRefused } from '../../../../server/registry/import/errors.ts';
import { normalizeDocument } from '../../../../server/registry/import/normalize.ts';
import { MAX_IMPORT_BYTES, MAX_NESTING, parseImportInput } from '../../../../server/registry/import/parse-input.ts';

const reason = async (fn: () => unknown): Promise<string | undefined> => {
  try {
    await fn();
    return undefined;
  } catch (err) {
    if (err instanceof ImportRefused) return err.reason;
    throw err;
  }
};

describe('parseImportInput', () => {
  it('reads JSON and YAML text and passes objects through', () => {
    expect(parseImportInput('{"openapi": "3.1.0"}')).toEqual({ openapi: '3.1.0' });
    expect(parseImportInput('openapi: 3.0.3\ninfo: {title: x}\n')).toEqual({ openapi: '3.0.3', info: { title: 'x' } });
    expect(parseImportInput({ swagger: '2.0' })).toEqual({ swagger: '2.0' });
  });

  it('refuses unparseable text, alias bombs, deep nesting (flow, block, object), unstorable text and oversize text', async () => {
    expect(await reason(() => parseImportInput('openapi: 3.0.0\ninfo: [unclosed'))).toBe('unparseable');
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 10 }, (_, i) => `l${i}: &l${i} [${Array(9).fill(i === 0 ? '*a' : `*l${i - 1}`).join(', ')}]`)].join('\n');
    expect(await reason(() => parseImportInput(bomb))).toBe('too_many_aliases');
    expect(await reason(() => parseImportInput(`a: ${'['.repeat(5000)}${']'.repeat(5000)}`))).toBe('too_deep');
    const block = Array.from({ length: MAX_NESTING + 2 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
    expect(await reason(() => parseImportInput(block))).toBe('too_deep');
    let deep: unknown = {};
    for (let i = 0; i < MAX_NESTING + 1; i++) deep = { d: deep };
    expect(await reason(() => parseImportInput(deep))).toBe('too_deep');
    expect(await reason(() => parseImportInput('openapi: "3.0.0\\0"'))).toBe('unparseable');
    expect(await reason(() => parseImportInput(`# ${'x'.repeat(MAX_IMPORT_BYTES)}`))).toBe('too_large');
  });
});

describe('normalizeDocument', () => {
  it('refuses what is not OpenAPI 3.1, 3.0.x or Swagger 2.0', async () => {
    for (const doc of [{ asyncapi: '2.6.0' }, { openapi: '4.0.0' }, { swagger: '1.2' }, [], 'text']) {
      expect(await reason(() => normalizeDocument(doc))).toBe('not_openapi');
    }
  });

  it('refuses a $ref to a URL, a file or a relative document, naming where it is', async () => {
    for (const ref of ['https://example.test/s.json', 'file:///etc/passwd', '/etc/passwd', 'other.yaml#/Widget']) {
      const doc = { openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/a': { get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: ref } } } } } } } } };
      const err = await normalizeDocument(doc).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImportRefused);
      expect(err).toMatchObject({ reason: 'external_ref', at: '/paths/~1a/get/responses/200/content/application~1json/schema/$ref' });
    }
  });

  it('dereferences local refs and keeps a circular one as a shared object (cut later)', async () => {
    const { api } = await normalizeDocument({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {},
      components: { schemas: { Node: { type: 'object', properties: { next: { $ref: '#/components/schemas/Node' } } } } },
    });
    const node = (api['components'] as any).schemas.Node;
    expect(node.properties.next).toBe(node);
  });
});
