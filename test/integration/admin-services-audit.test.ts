// The admin's dashboard, services and audit half (issue 17), in real Chromium against a real
// gateway (PostgreSQL, Temporal, a loopback upstream): the catalog with search, a service page,
// instances created and archived, a custom template whose 422 problems are shown by path and
// beside their line, fixed and saved, then its action run with "try it"; the audit log filtered
// through the URL, paged, expanded, and exported as CSV and JSON Lines whose rows match the API.
// axe-core on every page; screenshots into docs/screenshots/ (SCREENSHOTS=1).
import { auditEntries } from '../support/audit.ts';
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CSV_COLUMNS } from '../../core/audit/export-format.ts';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, withPool } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };

/** A custom template in YAML: `risk` goes into the read action (line 22), so a bad value is easy to place. */
const notesYaml = (upstreamUrl: string, risk: string) => `# Notes: a custom service for the dashboard test
openapi: 3.1.0
info:
  title: Team notes
  key: team_notes
  version: "1"
servers:
  - url: ${upstreamUrl}
components:
  securitySchemes:
    api_key:
      type: apiKey
      in: header
      name: X-Api-Key
      default_secret_name: WIDGETS_KEY
security:
  - api_key: []
paths:
  /notes/{id}:
    get:
      operationId: get_note
      summary: Read note {id}
      x-gateway-risk: ${risk}
      parameters:
        - name: id
          in: path
          required: true
          schema:
            type: string
      responses:
        "200":
          description: the note
`;

/** CSV records: split on CRLF outside quoted fields. */
function csvRecords(text: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (!quoted && text[i] === '\r' && text[i + 1] === '\n') {
      out.push(text.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

describe('the admin\'s dashboard: services, custom templates, audit', () => {
  let gw: TestGateway;
  let up: Upstream;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: ReturnType<TestGateway['as']>;
  let me: { org: { id: string }; identity: { id: string; user_id: string } };
  let agent: { id: string; call: ReturnType<TestGateway['as']> };

  const expectAccessible = async (p: Page, where: string) => {
    expect(await seriousViolations(p), where).toEqual([]);
  };
  const shot = (p: Page, name: string, fullPage = true) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true });
    admin = gw.as(gw.adminToken);
    me = (await admin('GET', '/v1/identities/me')).body;
    await seedUser(gw.databaseUrl, { orgId: me.org.id, email: 'omar@example.test' });
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_admin_pages_test' })).status).toBe(201);
    const a = await admin('POST', '/v1/identities/agents', { name: 'ops-bot' });
    expect(a.status).toBe(201);
    agent = { id: a.body.identity.id, call: gw.as(a.body.key.token) };
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    page = await context.newPage();
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    context.on('console', (m) => {
      // 401s are the sign-in redirects; 422s are the template problems the test provokes.
      if (m.type() === 'error' && !/status of (401|422)/.test(m.text())) console.error('browser console:', m.text());
    });
    await page.goto(`${gw.url}/services`);
    await page.waitForURL(/\/signin\?next=/, WAIT);
    await page.getByLabel('Email').fill('admin@example.test');
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/services`, WAIT);
  }, 180_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `admin-failure-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await up?.close();
  });

  it('lists the catalog and callable services with search; a service page shows actions, risk, parameters, scopes and the credential', async () => {
    await page.getByRole('heading', { name: 'Services', exact: true }).waitFor(WAIT);
    const services = page.getByRole('region', { name: /Callable services/ });
    await services.getByRole('link', { name: 'widgets', exact: true }).waitFor(WAIT);
    await page.getByLabel('Search services and actions').fill('create item');
    const matching = page.getByRole('region', { name: 'Matching actions' });
    await matching.getByRole('link', { name: 'widgets › create_item' }).waitFor(WAIT);
    await page.getByLabel('Search services and actions').fill('widgets');
    await expect.poll(() => page.getByRole('region', { name: /Catalog/ }).getByRole('listitem').count(), WAIT).toBe(1);
    await expectAccessible(page, 'services');
    await shot(page, 'services');

    await services.getByRole('link', { name: 'widgets', exact: true }).click();
    await page.getByRole('heading', { name: 'Widgets (widgets)' }).waitFor(WAIT);
    await page.getByText('Credential present').waitFor(WAIT);
    await page.getByText(/Vault secret WIDGETS_KEY \(api_key\): present/).waitFor(WAIT);
    const create = page.getByRole('row').filter({ hasText: 'create_item' });
    await create.getByText('write', { exact: true }).waitFor(WAIT);
    await create.getByText('scoped by name').waitFor(WAIT);
    const read = page.getByRole('row').filter({ hasText: 'get_item' });
    await read.getByText('read', { exact: true }).waitFor(WAIT);
    await read.getByText(/path · string · required/).waitFor(WAIT);
    expect(await page.getByRole('button', { name: /^Try it ?: get_item$/ }).count()).toBe(1);
    expect(await page.getByRole('button', { name: /^Try it ?: delete_item$/ }).count()).toBe(0); // read actions only
    await expectAccessible(page, 'service page');
    await shot(page, 'service');
    // No UUIDs on the page: names only.
    expect(await page.locator('main').innerText()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });

  it('creates an instance from a template in a dialog, then archives it', async () => {
    await page.goto(`${gw.url}/services`);
    await page.getByRole('button', { name: 'New instance of Widgets (widgets)' }).click();
    const dialog = page.getByRole('dialog', { name: 'New service instance' });
    await dialog.getByLabel('Name', { exact: true }).fill('widgets_team');
    await dialog.getByLabel('Who can call it').selectOption('org');
    await dialog.getByLabel('Vault secret name (optional)').fill('WIDGETS_KEY');
    await expectAccessible(page, 'new instance dialog');
    await dialog.getByRole('button', { name: 'Create instance' }).click();
    await page.waitForURL(`${gw.url}/services/widgets_team`, WAIT);
    await page.getByText('Organisation-wide').waitFor(WAIT);
    expect((await admin('GET', '/v1/services/widgets_team')).body).toMatchObject({ service: 'widgets_team', template: 'widgets', scope: 'org' });

    await page.getByRole('button', { name: 'Archive instance' }).click();
    const confirm = page.getByRole('dialog', { name: 'Archive widgets_team?' });
    await confirm.waitFor(WAIT);
    await expectAccessible(page, 'archive dialog');
    await confirm.getByRole('button', { name: 'Archive instance' }).click();
    await page.waitForURL(`${gw.url}/services`, WAIT);
    expect((await admin('GET', '/v1/services/widgets_team')).status).toBe(404);
  });

  it('a custom template with an error shows the problem by path and beside its line; fixed and saved, its action runs with "try it"', async () => {
    await page.goto(`${gw.url}/services/templates/new`);
    await page.getByRole('heading', { name: 'New custom template' }).waitFor(WAIT);
    const editor = page.getByLabel('Service document (OpenAPI 3.1, YAML or JSON)');
    // Upload a file: its text goes into the editor.
    const bad = notesYaml(up.url, 'dangerous');
    await page.getByLabel('Load a file').setInputFiles({ name: 'notes.yaml', mimeType: 'application/yaml', buffer: Buffer.from(bad) });
    await expect.poll(() => editor.inputValue(), WAIT).toBe(bad);
    await page.getByRole('button', { name: 'Create template' }).click();

    const problems = page.getByRole('region', { name: 'Problems' });
    const problem = problems.getByRole('listitem').filter({ hasText: 'risk must be read, write or delete' });
    await problem.getByText('/paths/~1notes~1{id}/get/x-gateway-risk').waitFor(WAIT);
    const riskLine = bad.split('\n').findIndex((l) => l.includes('x-gateway-risk')) + 1;
    await problem.getByRole('button', { name: `line ${riskLine}` }).waitFor(WAIT);
    // Beside the line: the marker sits at that line's height in the editor.
    const marker = page.locator(`[data-problem-line="${riskLine}"]`);
    await marker.waitFor(WAIT);
    const gutter = page.locator(`[data-line="${riskLine}"]`);
    const [mBox, gBox] = [await marker.boundingBox(), await gutter.boundingBox()];
    expect(Math.abs(mBox!.y - gBox!.y)).toBeLessThan(2);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    expect((await admin('GET', '/v1/templates')).body.templates.some((t: { key: string }) => t.key === 'team_notes')).toBe(false);
    await expectAccessible(page, 'template with problems');
    await shot(page, 'template-problems');

    // Go to the line from the list, fix it in place, save.
    await problem.getByRole('button', { name: `line ${riskLine}` }).click();
    await editor.fill(notesYaml(up.url, 'read'));
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.waitForURL(/\/services\/templates\/[0-9a-f-]{36}\?saved=1$/, WAIT);
    await page.getByRole('heading', { name: 'Team notes' }).waitFor(WAIT);
    await page.getByText('Created. Agents can call it as service “team_notes”.').waitFor(WAIT);
    // The text comes back as written (the comment survives) for the next edit.
    await expect.poll(() => page.getByLabel('Service document (OpenAPI 3.1, YAML or JSON)').inputValue(), WAIT).toContain('# Notes: a custom service');
    await expectAccessible(page, 'template editor');
    await shot(page, 'template');

    // An edit of the saved template: saved in place, the header follows.
    await page.getByLabel('Service document (OpenAPI 3.1, YAML or JSON)').fill(notesYaml(up.url, 'read').replace('title: Team notes', 'title: Team notes v2'));
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved "Team notes v2" (1 action).' }).waitFor(WAIT);
    await page.getByRole('heading', { name: 'Team notes v2' }).waitFor(WAIT);

    // Its action is callable: "try it" runs it through POST /v1/actions/call.
    await page.getByRole('link', { name: 'Open service “team_notes”' }).click();
    await page.getByRole('heading', { name: 'Team notes v2' }).waitFor(WAIT);
    const before = up.requests.length;
    await page.getByRole('button', { name: /^Try it ?: get_note$/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Try get_note' });
    await dialog.getByLabel('id').fill('n-42');
    await dialog.getByRole('button', { name: 'Run' }).click();
    await dialog.getByText('Called · HTTP 200').waitFor(WAIT);
    await dialog.getByLabel('Result').getByText('"url": "/notes/n-42"').waitFor(WAIT);
    await expectAccessible(page, 'try it');
    await shot(page, 'service-try-it');
    expect(up.requests.length).toBe(before + 1);
    expect(up.requests.at(-1)).toMatchObject({ method: 'GET', url: '/notes/n-42' });
    await dialog.getByRole('button', { name: 'Close' }).click();
    // And an agent can call it too (its call waits for approval like any uncovered call).
    const call = await agent.call('POST', '/v1/actions/call', { service: 'team_notes', action: 'get_note', params: { id: 'n-43' } });
    expect([200, 202]).toContain(call.status);
  });

  it('filters the audit log through the URL, pages with a cursor, expands a row, and exports CSV and JSON Lines whose rows match the API', async () => {
    // 130 entries of the agent's chain for one service (more than two pages of 50), plus a few others;
    // the chain as the gateway writes it, the requester first.
    await withPool(gw.databaseUrl, (pool) =>
      pool.query(sql.unsafe`
        INSERT INTO audit_log (org_id, at, event, user_id, identity_chain, service, action, permission_keys, decision, http_status_code, details)
        SELECT ${me.org.id}, now() - (200 - g) * interval '1 second', 'call.called', ${me.identity.user_id},
               ARRAY[${agent.id}, ${me.identity.id}]::uuid[], 'ledger', CASE WHEN g % 2 = 0 THEN 'read_entry' ELSE 'list_entries' END,
               ARRAY['ledger:read_entry'], CASE WHEN g <= 130 THEN 'covered' ELSE 'denied' END, 200,
               jsonb_build_object('disclosed', jsonb_build_array(jsonb_build_object('label', 'Entry', 'value', 'entry ' || g)))
        FROM generate_series(1, 150) AS g`),
    );
    await page.goto(`${gw.url}/audit`);
    await page.getByRole('heading', { name: 'Audit log' }).waitFor(WAIT);
    await page.getByLabel('Service').fill('ledger');
    // The outcome is one of the values the gateway writes, picked from a list.
    await page.getByLabel('Outcome').selectOption('covered');
    await page.getByLabel('Identity').selectOption({ label: 'Administrator › ops-bot' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/\/audit\?identity=[0-9a-f-]+&service=ledger&decision=covered$/, WAIT);
    const rows = page.getByRole('region', { name: 'Entries' }).getByRole('listitem');
    await page.getByText('50 entries loaded, more below').waitFor(WAIT);
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('100 entries loaded, more below').waitFor(WAIT);
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('130 entries loaded').waitFor(WAIT);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    expect(await rows.count()).toBe(130);

    // The view is in the URL: a fresh load of it shows the same filters and rows.
    const shared = page.url();
    await page.goto(shared);
    await page.getByText('50 entries loaded, more below').waitFor(WAIT);
    expect(await page.getByLabel('Service').inputValue()).toBe('ledger');
    expect(await page.getByLabel('Outcome').inputValue()).toBe('covered');
    expect(await page.getByLabel('Outcome').getByRole('option').allInnerTexts()).toEqual(expect.arrayContaining(['Any outcome', 'covered: ran without asking', 'deny: a person denied it']));

    // A row expands to its disclosed fields, decision, chain (names, the person first) and a link to the agent.
    await rows.first().getByRole('button').click();
    const detail = page.getByRole('region', { name: /^Audit entry \d+$/ });
    await detail.getByText('Entry: entry 130').waitFor(WAIT);
    await detail.getByText('Administrator › ops-bot').first().waitFor(WAIT);
    expect(await detail.getByRole('link', { name: 'Open agent ops-bot' }).getAttribute('href')).toBe(`/agents?agent=${agent.id}`);
    await expectAccessible(page, 'audit');
    await shot(page, 'audit', false); // the first rows; the page holds 50

    // Export of the current filter: the server streams every matching row, not the page's 50.
    const query = new URL(shared).search.slice(1);
    const api = await auditEntries(admin, query);
    expect(api.length).toBe(130);
    const [csvDownload] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('link', { name: 'Export CSV' }).click()]);
    expect(csvDownload.suggestedFilename()).toMatch(/^audit_service-ledger_decision-covered_.*\.csv$/);
    const csv = csvRecords(readFileSync((await csvDownload.path())!, 'utf8'));
    expect(csv[0]).toBe(CSV_COLUMNS.join(','));
    expect(csv.slice(1).map((r) => Number(r.split(',')[0]))).toEqual(api.map((e) => e.id));
    const [jsonDownload] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('link', { name: 'Export JSON Lines' }).click()]);
    const lines = readFileSync((await jsonDownload.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual(api);

    // The approval link: an entry of a raised approval links to its page.
    const raised = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'w-9' } });
    expect(raised.status).toBe(202);
    await page.goto(`${gw.url}/audit?event=approval.raised`);
    await page.getByRole('region', { name: 'Entries' }).getByRole('listitem').first().getByRole('button').click();
    await page.getByRole('link', { name: 'Open the approval' }).click();
    await page.waitForURL(`${gw.url}/approvals/${raised.body.approval_id}`, WAIT);
  });
});
