// `gateway services import FILE` as a person and a script run it: the report as tables, --json,
// --dry-run saving nothing, a draft published with `gateway services publish`, --publish at once,
// and a refused document as exit 2 with the gateway's reason.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayCli, type RunOptions } from '../support/cli.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';

const vendorDoc = (extra: Record<string, unknown> = {}) => ({
  swagger: '2.0',
  info: { title: 'Gadget Store API', version: '3' },
  host: 'api.gadgets.test',
  schemes: ['https'],
  securityDefinitions: { token: { type: 'apiKey', in: 'header', name: 'X-Gadget-Key' } },
  security: [{ token: [] }],
  paths: {
    '/gadgets/{gadget_id}': {
      get: { operationId: 'getGadget', summary: 'Get a gadget', parameters: [{ name: 'gadget_id', in: 'path', required: true, type: 'string' }], responses: { 200: { description: 'ok' } } },
    },
    '/gadgets/{gadget_id}/manual': {
      put: {
        operationId: 'uploadManual',
        consumes: ['application/pdf'],
        parameters: [{ name: 'gadget_id', in: 'path', required: true, type: 'string' }, { name: 'body', in: 'body', required: true, schema: { type: 'string', format: 'binary' } }],
        responses: { 200: { description: 'ok' } },
      },
    },
    ...extra,
  },
});

describe('gateway services import', () => {
  let gw: TestGateway;
  let home: string;
  let admin: RunOptions['env'];
  const cli = (args: string[]) => runGatewayCli(args, { env: admin });
  const file = async (name: string, doc: unknown) => {
    const at = path.join(home, name);
    await writeFile(at, typeof doc === 'string' ? doc : stringify(doc));
    return at;
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    home = await mkdtemp(path.join(os.tmpdir(), 'gateway-cli-import-'));
    admin = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
    const login = await runGatewayCli(['login', '--url', gw.url, '--email', ADMIN_EMAIL], { env: admin, stdin: ADMIN_PASSWORD });
    expect(login.code, login.stderr).toBe(0);
  });
  afterAll(async () => {
    await gw?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('--dry-run prints the report as tables and saves nothing; --json is the API answer', async () => {
    const doc = await file('gadgets.yaml', vendorDoc());
    const dry = await cli(['services', 'import', doc, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    const lines = dry.stdout.split('\n');
    expect(lines[0]).toBe('Gadget Store API (swagger-2.0) → service key gadget-store: 2 operations, 1 actions, 1 skipped, 0 warnings');
    expect(lines).toContain('Skipped:');
    expect(lines.find((l) => l.startsWith('METHOD'))).toMatch(/^METHOD\s+PATH\s+REASON$/);
    expect(lines.find((l) => l.startsWith('PUT'))).toMatch(/^PUT\s+\/gadgets\/\{gadget_id\}\/manual\s+its request body is a binary upload \(application\/pdf\)$/);
    expect(dry.stderr).toContain('Dry run: nothing was saved.');

    const json = await cli(['services', 'import', doc, '--dry-run', '--json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(parsed).toMatchObject({ saved: false, report: { key: 'gadget-store', actions: 1 } });
    expect(parsed.document.components.securitySchemes.token).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Gadget-Key' });
    expect((await gw.as(gw.adminToken)('GET', '/v1/templates')).body.templates.map((t: any) => t.key)).not.toContain('gadget-store');
  });

  it('saves a draft, publishes it with `services publish`; a re-import with --publish lists the changes', async () => {
    const doc = await file('gadgets.yaml', vendorDoc());
    const saved = await cli(['services', 'import', doc, '--json']);
    expect(saved.code, saved.stderr).toBe(0);
    const { template } = JSON.parse(saved.stdout);
    expect(template).toMatchObject({ key: 'gadget-store', status: 'draft' });
    expect((await cli(['services', '--json'])).stdout).not.toContain('gadget-store');

    const published = await cli(['services', 'publish', template.id]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stderr).toContain(`Published gadget-store (org template ${template.id}): its 1 actions are callable.`);
    expect(JSON.parse((await cli(['services', '--json'])).stdout).map((s: any) => s.service)).toContain('gadget-store');

    const next = await file('gadgets-v4.json', JSON.stringify(vendorDoc({
      '/gadgets': { get: { operationId: 'listGadgets', summary: 'List gadgets', responses: { 200: { description: 'ok' } } } },
    })));
    const again = await cli(['services', 'import', next, '--key', 'gadget-store', '--publish']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Changes from the current template:\nCHANGE\s+ACTION\s+FIELDS\nadded\s+listGadgets/);
    expect(again.stderr).toContain('Published gadget-store');
    const show = JSON.parse((await cli(['services', 'show', 'gadget-store', '--json'])).stdout);
    expect(show.actions.map((a: any) => a.action).sort()).toEqual(['getGadget', 'listGadgets']);
  });

  it('a refused document exits 2 with the reason; a missing file is a usage error', async () => {
    const bad = await file('external.yaml', { ...vendorDoc(), definitions: { Gadget: { $ref: 'https://gadgets.test/schemas/gadget.json' } } });
    const r = await cli(['services', 'import', bad, '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^gateway: \$ref "https:\/\/gadgets\.test\/schemas\/gadget\.json" points outside the document; only local references \(#\/\.\.\.\) are imported \(invalid_request\)/m);
    const missing = await cli(['services', 'import', path.join(home, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.yaml/);
  });
});
