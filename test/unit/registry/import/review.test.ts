// What a re-import reports as changed (server/registry/import/review.ts). The template the
// registry holds comes back from PostgreSQL's jsonb with its object keys reordered, so an action
// the vendor did not touch must not read as changed because of key order.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeAliases } from '../../../../core/registry/aliases.ts';
import { compileService } from '../../../../core/registry/compile.ts';
import { convertDocument } from '../../../../server/registry/import/convert.ts';
import { templateChanges } from '../../../../server/registry/import/review.ts';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'fixtures', 'import', name), 'utf8');
const compiled = (doc: unknown) => compileService(normalizeAliases(doc).doc, 'test');

/** Object keys in another order at every depth, as jsonb hands them back (shorter keys first). */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || a.localeCompare(b));
  return Object.fromEntries(keys.map((k) => [k, reordered((value as Record<string, unknown>)[k])]));
}

describe('what a re-import changed', () => {
  it('the same document again changes nothing, whatever order the stored keys came back in', async () => {
    const { document } = await convertDocument(fixture('acme-tickets-v1.yaml'));
    expect(templateChanges(compiled(reordered(document)), compiled(document))).toEqual({ added: [], removed: [], changed: [] });
  });

  it('names the actions added, removed and changed, and the changed fields', async () => {
    const v1 = (await convertDocument(fixture('acme-tickets-v1.yaml'))).document;
    const v2 = (await convertDocument(fixture('acme-tickets-v2.yaml'))).document;
    expect(templateChanges(compiled(reordered(v1)), compiled(v2))).toEqual({
      added: ['closeTicket'],
      removed: ['deleteTicket'],
      changed: [{ action: 'listTickets', fields: ['parameters'] }],
    });
  });
});
