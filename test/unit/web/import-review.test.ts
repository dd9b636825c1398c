// Reviewing an imported draft in the dashboard (web/src/lib/admin/import-review.ts): the stored
// YAML of a real import read into rows, the reviewer's edits written back, and the registry's own
// compiler reading the result as the reviewer meant it — comments and untouched keys kept.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { normalizeAliases } from '../../../core/registry/aliases.ts';
import { compileService } from '../../../core/registry/compile.ts';
import { convertDocument } from '../../../server/registry/import/convert.ts';
import { applyReview, readReview } from '../../../web/src/lib/admin/import-review.ts';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'import', name), 'utf8');
const compiled = (text: string) => compileService(normalizeAliases(parse(text)).doc, 'test');

describe('reviewing an imported draft', () => {
  it('reads one row per action with the importer\'s risk, scope_param and the names scope_param may take', async () => {
    const { document } = await convertDocument(fixture('acme-tickets-v1.yaml'));
    const review = readReview(stringify(document));
    expect(review.title).toBe('Acme Tickets API v2');
    expect(review.serverUrl).toMatch(/\.invalid/);
    expect(review.actions.map((a) => [a.action, a.method, a.risk, a.scopeParam, a.enabled])).toEqual([
      ['listTickets', 'GET', 'read', 'project', true],
      ['createTicket', 'POST', 'write', 'project', true],
      ['getTicket', 'GET', 'read', 'project', true],
      ['deleteTicket', 'DELETE', 'delete', 'project', true],
    ]);
    expect(review.actions[0]!.candidates).toEqual(['project', 'status']);
    expect(review.actions[1]!.candidates).toEqual(['project', 'subject', 'priority']);
  });

  it('writes toggles, risk, scope_param, summary and the base URL so the registry reads them, keeping comments', async () => {
    const { document } = await convertDocument(fixture('acme-tickets-v1.yaml'));
    const stored = `# reviewed by ops\n${stringify(document)}`;
    const rows = readReview(stored).actions;
    const edits = rows.map((r) => {
      if (r.action === 'deleteTicket') return { ...r, enabled: false };
      if (r.action === 'createTicket') return { ...r, risk: 'delete' as const, summary: 'Open a ticket “{subject}” in {project}' };
      if (r.action === 'getTicket') return { ...r, scopeParam: '' };
      return r;
    });
    const text = applyReview(stored, edits, 'http://127.0.0.1:9/v2');
    expect(text.startsWith('# reviewed by ops\n')).toBe(true);

    const service = compiled(text);
    expect(service.baseUrls).toEqual(['http://127.0.0.1:9/v2']);
    expect(service.actions.get('deleteTicket')!.disabled).toBe(true);
    expect(service.actions.get('createTicket')!.risk).toBe('delete');
    expect(service.actions.get('createTicket')!.summary).toBe('Open a ticket “{subject}” in {project}');
    expect(service.actions.get('getTicket')!.scopeParam).toBeUndefined();
    expect(service.actions.get('listTickets')!.scopeParam).toBe('project');
    expect(readReview(text).actions.find((a) => a.action === 'deleteTicket')!.enabled).toBe(false);

    // Enabling again removes the flag rather than writing `false` beside it.
    const again = applyReview(text, readReview(text).actions.map((r) => ({ ...r, enabled: true })));
    expect(again).not.toContain('x-gateway-disabled');
  });

  it('replaces another spelling of an extension instead of adding a second one (ambiguous_alias)', () => {
    const text = `openapi: 3.1.0
info: { title: T, version: "1", x-gateway-key: t }
servers: [{ url: "https://api.example.com" }]
paths:
  /things/{id}:
    get:
      operationId: get_thing
      risk: write
      x-gateway-scope-param: id
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { "200": { description: ok } }
`;
    const [row] = readReview(text).actions;
    expect(row).toMatchObject({ risk: 'write', scopeParam: 'id' });
    const out = applyReview(text, [{ ...row!, risk: 'read' }]);
    expect(normalizeAliases(parse(out)).problems).toEqual([]);
    const op = parse(out).paths['/things/{id}'].get;
    expect(op).toMatchObject({ 'x-gateway-risk': 'read', 'x-gateway-scope_param': 'id' });
    expect(Object.keys(op)).not.toContain('risk');
    expect(Object.keys(op)).not.toContain('x-gateway-scope-param');
  });

  it('refuses text that does not parse rather than guessing', () => {
    expect(() => readReview('paths: [unclosed')).toThrow(/does not parse/);
  });
});
