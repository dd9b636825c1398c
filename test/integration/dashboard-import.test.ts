// Services → Import in real Chromium against a real gateway (PostgreSQL, Temporal, a loopback
// upstream): a vendor-like OpenAPI 3.0 document uploaded and checked (the report: operations,
// actions, skipped with reasons, warnings; nothing saved), imported as a draft no agent sees,
// reviewed (an action disabled, a risk raised, scope_param cleared, a summary rewritten), refused
// at publish while the placeholder server remains, published with the vendor's URL, then called
// by an agent; a newer version pasted shows what changed before it is imported and published.
// axe-core on every page; screenshots into docs/screenshots/ (SCREENSHOTS=1), desktop and phone.
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { pageWidth, PHONE } from '../support/phone.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };
const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '..', 'fixtures', 'import', name), 'utf8');

describe('the dashboard: Services → Import, review and publish', () => {
  let gw: TestGateway;
  let up: Upstream;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: ReturnType<TestGateway['as']>;
  let agent: ReturnType<TestGateway['as']>;
  let draftId = '';

  const expectAccessible = async (p: Page, where: string) => {
    expect(await seriousViolations(p), where).toEqual([]);
  };
  const shot = (p: Page, name: string) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const templateKeys = async () => (await admin('GET', '/v1/templates')).body.templates.map((t: { key: string }) => t.key);
  const storedOperation = async (p: string, method: string) => parse((await admin('GET', `/v1/templates/${draftId}`)).body.source).paths[p][method];

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true });
    admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/secrets', { name: 'ACME_API_KEY', value: 'acme_dashboard_import_key' })).status).toBe(201);
    const a = await admin('POST', '/v1/identities/agents', { name: 'helpdesk-bot' });
    expect(a.status).toBe(201);
    agent = gw.as(a.body.key.token);
    expect((await admin('POST', `/v1/identities/${a.body.identity.id}/rules`, { effect: 'allow', pattern: 'acme:*:*' })).status).toBe(201);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    context.on('console', (m) => {
      // 401s are the sign-in redirect; 422s are the publish refusal the test provokes.
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
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `import-failure-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await up?.close();
  });

  it('uploads a vendor document and checks it: the report in tables, the actions it would make, nothing saved', async () => {
    await page.getByRole('link', { name: 'Import', exact: true }).click();
    await page.getByRole('heading', { name: 'Import a service' }).waitFor(WAIT);
    await expectAccessible(page, 'import page, empty');
    await page.getByLabel('Upload a file').setInputFiles({ name: 'acme-tickets.yaml', mimeType: 'application/yaml', buffer: Buffer.from(fixture('acme-tickets-v1.yaml')) });
    await expect.poll(() => page.getByLabel('Or paste the document (JSON or YAML)').inputValue(), WAIT).toBe(fixture('acme-tickets-v1.yaml'));
    // A key the registry cannot take is refused at its field.
    const keyField = page.getByLabel('Service key (optional)');
    await keyField.fill('Acme Tickets!');
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: /^key lowercase letters, digits, _ and -/ }).waitFor(WAIT);
    expect(await keyField.getAttribute('aria-invalid')).toBe('true');
    await keyField.fill('acme');
    await page.getByRole('button', { name: 'Check', exact: true }).click();

    await page.getByRole('status').filter({ hasText: 'Checked: 4 actions from 5 operations. Nothing was saved.' }).waitFor(WAIT);
    const counts = page.getByRole('region', { name: 'Report' });
    await counts.getByText('OpenAPI 3.0').waitFor(WAIT);
    const skipped = page.getByRole('region', { name: 'Skipped operations' });
    const upload = skipped.getByRole('row').filter({ hasText: '/projects/{project}/tickets/{ticket_id}/attachments' });
    await upload.getByRole('cell', { name: 'POST', exact: true }).waitFor(WAIT);
    expect(await upload.getByRole('cell').nth(2).innerText()).toMatch(/\S/);
    const warnings = page.getByRole('region', { name: 'Warnings' });
    await warnings.getByRole('row').filter({ hasText: /X-Request-Id/ }).first().waitFor(WAIT);
    await warnings.getByRole('row').filter({ hasText: /server/i }).first().waitFor(WAIT);
    const would = page.getByRole('region', { name: 'Actions it would make' });
    const create = would.getByRole('row').filter({ hasText: 'createTicket' });
    await create.getByRole('cell', { name: 'POST /projects/{project}/tickets' }).waitFor(WAIT);
    await create.getByRole('cell', { name: 'write', exact: true }).waitFor(WAIT);
    await create.getByRole('cell', { name: 'project', exact: true }).waitFor(WAIT);
    await expectAccessible(page, 'import page, checked');
    await shot(page, 'import-check');
    expect(await templateKeys()).not.toContain('acme');
  });

  it('imports a draft no agent sees; the review is saved, publishing is refused while the placeholder server remains', async () => {
    await page.getByRole('button', { name: 'Import as draft' }).click();
    await page.waitForURL(/\/services\/import\/[0-9a-f-]{36}$/, WAIT);
    draftId = page.url().split('/').pop()!;
    await page.getByRole('heading', { name: 'Review “Acme Tickets API v2”' }).waitFor(WAIT);
    await page.getByText('Draft', { exact: true }).waitFor(WAIT);
    const found = (await agent('GET', '/v1/search?q=ticket')).body.results.map((r: { service: string }) => r.service);
    expect(found.length).toBeGreaterThan(0); // built-in services match; the draft does not
    expect(found).not.toContain('acme');

    const table = page.getByRole('region', { name: 'Actions to review' });
    await expect.poll(() => table.getByRole('row').count(), WAIT).toBe(5); // header + 4 actions
    expect(await page.getByLabel('Risk of createTicket').inputValue()).toBe('write');
    expect(await page.getByLabel('Scope parameter of getTicket').inputValue()).toBe('project');
    await page.getByLabel('Enable deleteTicket').uncheck();
    await page.getByLabel('Risk of createTicket').selectOption('delete');
    await page.getByLabel('Scope parameter of getTicket').selectOption('');
    await page.getByLabel('Summary of createTicket').fill('Open a ticket “{subject}” in {project}');
    await expectAccessible(page, 'review page');

    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('alert').filter({ hasText: 'set the vendor’s base URL in servers before publishing' }).waitFor(WAIT);
    await page.getByText('Draft', { exact: true }).waitFor(WAIT);
    await shot(page, 'import-review-refused');
    // The review was saved before the refusal; the template is still a draft.
    expect(await storedOperation('/projects/{project}/tickets/{ticket_id}', 'delete')).toMatchObject({ 'x-gateway-disabled': true });
    expect(await storedOperation('/projects/{project}/tickets', 'post')).toMatchObject({ 'x-gateway-risk': 'delete', summary: 'Open a ticket “{subject}” in {project}' });
    expect(await storedOperation('/projects/{project}/tickets/{ticket_id}', 'get')).not.toHaveProperty('x-gateway-scope_param');
    expect((await admin('GET', '/v1/templates')).body.templates.find((t: { key: string }) => t.key === 'acme')).toMatchObject({ status: 'draft' });

    // The catalog marks the draft and offers its review, not a service page or instances.
    await page.goto(`${gw.url}/services`);
    const card = page.getByRole('region', { name: /Catalog/ }).getByRole('listitem').filter({ hasText: 'Acme Tickets API v2' });
    await card.getByText('Draft', { exact: true }).waitFor(WAIT);
    expect(await card.getByRole('link', { name: 'Open Acme Tickets API v2' }).count()).toBe(0);
    await card.getByRole('link', { name: 'Review Acme Tickets API v2' }).click();
    await page.waitForURL(`${gw.url}/services/import/${draftId}`, WAIT);
    await page.getByRole('heading', { name: 'Review “Acme Tickets API v2”' }).waitFor(WAIT);
    expect(await page.getByLabel('Enable deleteTicket').isChecked()).toBe(false);
  });

  it('publishes with the vendor\'s base URL: agents find and call the reviewed actions, not the disabled one', async () => {
    await page.getByLabel('Base URL of the vendor\'s API').fill(`${up.url}/v2`);
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published. Agents can now find and call “acme”.' }).waitFor(WAIT);
    await page.getByText('Published', { exact: true }).waitFor(WAIT);
    await expectAccessible(page, 'review page, published');
    await shot(page, 'import-review');

    const service = (await admin('GET', '/v1/services/acme')).body;
    expect(service.actions.map((a: { action: string }) => a.action).sort()).toEqual(['createTicket', 'getTicket', 'listTickets']);
    expect(service.actions.find((a: { action: string }) => a.action === 'createTicket')).toMatchObject({ risk: 'delete' });
    const call = await agent('POST', '/v1/actions/call', { service: 'acme', action: 'listTickets', params: { project: 'web', status: 'open' } });
    expect(call.status).toBe(200);
    expect(up.requests.at(-1)).toMatchObject({ method: 'GET', url: '/v2/projects/web/tickets?status=open' });
    expect(up.requests.at(-1)!.headers['x-acme-token']).toBe('acme_dashboard_import_key');
    expect((await agent('POST', '/v1/actions/call', { service: 'acme', action: 'deleteTicket', params: { project: 'web', ticket_id: '7' } })).status).toBeGreaterThanOrEqual(400);
  });

  it('a newer version pasted shows what changed before it is imported; the review edits carry over', async () => {
    await page.goto(`${gw.url}/services`);
    await page.getByRole('link', { name: 'Import', exact: true }).click();
    await page.getByRole('heading', { name: 'Import a service' }).waitFor(WAIT);
    await page.getByLabel('Or paste the document (JSON or YAML)').fill(fixture('acme-tickets-v2.yaml'));
    await page.getByLabel('Service key (optional)').fill('acme');
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    const changes = page.getByRole('region', { name: 'What changed since the previous import' });
    await changes.getByRole('list', { name: 'Added actions' }).getByText('closeTicket').waitFor(WAIT);
    await changes.getByRole('list', { name: 'Removed actions' }).getByText('deleteTicket').waitFor(WAIT);
    const changed = changes.getByRole('list', { name: 'Changed actions' }).getByRole('listitem');
    await changed.filter({ hasText: 'listTickets' }).getByText(/parameters/).waitFor(WAIT);
    expect(await changed.allInnerTexts()).toEqual(['listTickets: parameters']); // untouched actions are not "changed"
    expect(await changes.getByRole('list', { name: 'Added actions' }).getByRole('listitem').allInnerTexts()).toEqual(['closeTicket']);
    await expectAccessible(page, 'import page, re-import checked');
    await shot(page, 'import-reimport');
    // A check changes nothing: the published template is untouched.
    expect((await admin('GET', '/v1/services/acme')).body.actions.map((a: { action: string }) => a.action)).not.toContain('closeTicket');

    await page.getByRole('button', { name: 'Import as draft' }).click();
    await page.waitForURL(`${gw.url}/services/import/${draftId}`, WAIT);
    await page.getByText('Draft', { exact: true }).waitFor(WAIT);
    await page.getByRole('region', { name: 'What changed since the previous import' }).getByText('closeTicket').waitFor(WAIT);
    expect(await page.getByLabel('Risk of createTicket').inputValue()).toBe('delete');
    expect(await page.getByLabel('Summary of createTicket').inputValue()).toBe('Open a ticket “{subject}” in {project}');
    await page.getByLabel('Base URL of the vendor\'s API').fill(`${up.url}/v2`);
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published.' }).waitFor(WAIT);
    expect((await admin('GET', '/v1/services/acme')).body.actions.map((a: { action: string }) => a.action).sort()).toEqual(['closeTicket', 'createTicket', 'getTicket', 'listTickets']);
  });

  it('at phone width nothing scrolls sideways on the import and review pages', async () => {
    const phone = await browser.newContext({ ...PHONE, storageState: await context.storageState() });
    const p = await phone.newPage();
    try {
      const noSideways = async () => expect(await p.evaluate(pageWidth)).toBeLessThanOrEqual(PHONE.viewport.width);
      await p.goto(`${gw.url}/services/import`);
      await p.getByLabel('Or paste the document (JSON or YAML)').fill(fixture('acme-tickets-v1.yaml'));
      await p.getByLabel('Service key (optional)').fill('acme');
      await p.getByRole('button', { name: 'Check', exact: true }).click();
      await p.getByRole('region', { name: 'Skipped operations' }).waitFor(WAIT);
      await noSideways();
      await expectAccessible(p, 'import page at 390 px');
      await shot(p, 'import-mobile');
      await p.goto(`${gw.url}/services/import/${draftId}`);
      await p.getByRole('region', { name: 'Actions to review' }).waitFor(WAIT);
      await p.getByLabel('Risk of createTicket').waitFor(WAIT);
      await noSideways();
      await expectAccessible(p, 'review page at 390 px');
      await shot(p, 'import-review-mobile');
    } finally {
      await phone.close();
    }
  });
});
