// The dashboard on a 390 px wide phone, in real Chromium against a real gateway (PostgreSQL,
// Temporal, a loopback upstream and webhook receiver), with data made to overflow: a long path, a
// 400-character unbroken value in a body, long agent, secret, client and webhook names. Every page
// fits the width; the navigation opens from a menu; every row action is on screen; where a
// decision is made the request to be sent is shown (redacted, truncated with a marker in the
// inbox); the audit log reads person › agent › subagent and opens the agent that acted.
// axe-core on every page; screenshots into the temporary folder (docs/screenshots with SCREENSHOTS=1).
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { oauthClientToken } from '../support/oauth-token.ts';
import { onScreen, pageWidth, PHONE } from '../support/phone.ts';
import { startReceiver } from '../support/receiver.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };

const LONG_AGENT = 'quarterly-financial-reporting-assistant-for-the-northern-european-subsidiaries';
const LONG_SUB = 'reconciliation-subagent-with-an-equally-unreasonable-name';
const LONG_CLIENT = 'An-MCP-client-whose-registered-client-name-goes-on-and-on-without-a-single-space';
const LONG_SECRET = `REPORTING_PIPELINE_${'X'.repeat(90)}_KEY`;
/** 400 characters without a break, in the body of a call. */
const VALUE_400 = `start-${'x'.repeat(390)}-end`;
/** A long path: one item id of 200-odd characters. */
const LONG_ID = `${'path-segment-'.repeat(15)}tail`;
const PASSWORD = 'hunter2-on-a-phone';
const NAV_ITEMS = ['Approvals', 'Agents', 'Secrets', 'Connections', 'Services', 'Audit', 'Webhooks', 'People', 'Settings'];

describe('the dashboard on a 390 px phone', () => {
  let gw: TestGateway;
  let up: Upstream;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let me: { org: { id: string }; identity: { id: string; name: string } };
  let agentId: string;
  let subId: string;
  /** Pending approvals: a body with the long value (and a redacted password), a long path. */
  let bodyApproval: { approval_id: string; approval_url: string };
  let pathApproval: { approval_id: string; approval_url: string };

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `phone-${name}.png`), fullPage: true });
  const expectOnScreen = async (l: Locator, what: string) => expect(await onScreen(l), what).toBe('on screen');
  /** Where the request to be sent is shown. */
  const requestIn = (scope: Locator | Page) => scope.getByRole('group', { name: 'Request to be sent' });

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    receiver = await startReceiver();
    gw = await startTestGateway({ realPublicUrl: true });
    const admin = gw.as(gw.adminToken);
    me = (await admin('GET', '/v1/identities/me')).body;
    await seedUser(gw.databaseUrl, { orgId: me.org.id, email: 'a-person-with-a-rather-long-address-for-layouts@subsidiary.example.test' });
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_phone_test', description: `Key of the widgets service, ${'rotated-quarterly-'.repeat(6)}` })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: LONG_SECRET, value: 'sk_phone_long' })).status).toBe(201);
    const hook = await admin('POST', '/v1/webhooks', { url: `${receiver.url}/${'hooks/'.repeat(25)}end`, events: ['approval.raised', 'approval.resolved'] });
    expect(hook.status, hook.text).toBe(201);
    expect((await admin('PUT', '/v1/oauth-apps/acme', { client_id: `client-${'z'.repeat(120)}`, client_secret: 'not-shown', authorization_url: `${up.url}/authorize`, token_url: `${up.url}/token` })).status).toBe(201);
    expect((await admin('POST', '/v1/connections', { provider: 'acme', name: `acme-${'connection-'.repeat(8)}main` })).status).toBe(201);
    await oauthClientToken(gw, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, LONG_CLIENT);

    const agent = await admin('POST', '/v1/identities/agents', { name: LONG_AGENT });
    expect(agent.status).toBe(201);
    agentId = agent.body.identity.id;
    const asAgent = gw.as(agent.body.key.token);
    const sub = await asAgent('POST', '/v1/identities/agents', { name: LONG_SUB });
    expect(sub.status).toBe(201);
    subId = sub.body.identity.id;
    const body = await asAgent('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: VALUE_400, password: PASSWORD } });
    const longPath = await gw.as(sub.body.key.token)('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: LONG_ID } });
    const decided = await asAgent('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: LONG_ID } });
    expect([body.status, longPath.status, decided.status]).toEqual([202, 202, 202]);
    bodyApproval = body.body;
    pathApproval = longPath.body;
    const reason = `Not from a phone: ${'a-reason-without-spaces-'.repeat(6)}`;
    expect((await admin('POST', `/v1/approvals/${decided.body.approval_id}/resolve`, { decision: 'deny', reason })).status).toBe(200);
    // A delivery in the webhook's log to redeliver.
    await until(async () => (await admin('GET', `/v1/webhooks/${hook.body.id}/events`)).body.events.length, (n) => n > 0, 30_000);

    browser = await launchChromium();
    context = await browser.newContext(PHONE);
    page = await context.newPage();
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    context.on('console', (m) => {
      if (m.type() === 'error' && !m.text().includes('status of 401')) console.error('browser console:', m.text());
    });
    await page.goto(`${gw.url}/approvals`);
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/approvals`, WAIT);
  }, 180_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `dashboard-phone-failure-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await receiver?.close();
    await up?.close();
  });

  it('shows method, URL and body wherever a decision is made: truncated with a marker in the inbox, whole on the approval page, redacted in both', async () => {
    await page.goto(`${gw.url}/approvals`);
    const row = page.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'Allow once' }) }).filter({ hasText: 'start-xxx' });
    const inRow = requestIn(row);
    await inRow.waitFor(WAIT);
    const rowText = await inRow.innerText();
    expect(rowText).toContain(`POST ${up.url}/items`);
    expect(rowText).toContain(VALUE_400.slice(0, 120));
    expect(rowText).not.toContain(VALUE_400);
    expect(rowText).toContain('… (truncated)');
    await expectOnScreen(row.getByRole('button', { name: 'Allow once' }), 'Allow once in the inbox');
    const pathRow = page.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'Allow once' }) }).filter({ hasText: 'Delete item' });
    expect(await requestIn(pathRow).innerText()).toContain(`DELETE ${up.url}/items/${LONG_ID}`);
    expect(await page.content()).not.toContain(PASSWORD);

    await page.goto(bodyApproval.approval_url);
    const onPage = requestIn(page);
    await onPage.waitFor(WAIT);
    expect(await onPage.isVisible()).toBe(true); // not folded away
    const pageText = await onPage.innerText();
    expect(pageText).toContain(`POST ${up.url}/items`);
    expect(pageText).toContain(VALUE_400);
    expect(pageText).toContain('"password": "[REDACTED]"');
    expect(pageText).not.toContain('(truncated)');
    expect(await page.content()).not.toContain(PASSWORD);
    await expectOnScreen(page.getByRole('button', { name: 'Allow once' }), 'Allow once on the approval page');
    await expectOnScreen(page.getByRole('button', { name: 'Allow & remember' }), 'Allow & remember on the approval page');
  });

  it('fits every page into 390 px with the long paths, bodies and names', async () => {
    const pages: [name: string, href: string, ready: () => Locator][] = [
      ['inbox', '/approvals', () => page.getByRole('listitem').filter({ hasText: 'start-xxx' })],
      ['approval-body', new URL(bodyApproval.approval_url).pathname, () => page.getByRole('button', { name: 'Allow once' })],
      ['approval-path', new URL(pathApproval.approval_url).pathname, () => page.getByRole('button', { name: 'Allow once' })],
      ['agents', `/agents?agent=${agentId}`, () => page.getByRole('heading', { name: LONG_AGENT })],
      ['audit', '/audit', () => page.getByRole('region', { name: 'Entries' }).getByRole('listitem').first()],
      ['secrets', '/secrets', () => page.getByText(LONG_SECRET, { exact: true })],
      ['services', '/services', () => page.getByRole('link', { name: 'widgets', exact: true })],
      ['service', '/services/widgets', () => page.getByText('get_item', { exact: true })],
      ['connections', '/connections', () => page.getByText(`acme-${'connection-'.repeat(8)}main`)],
      ['webhooks', '/webhooks', () => page.getByRole('button', { name: /^Redeliver/ }).first()],
      ['settings', '/settings', () => page.getByText(LONG_CLIENT, { exact: true })],
    ];
    for (const [name, href, ready] of pages) {
      await page.goto(`${gw.url}${href}`);
      await ready().waitFor(WAIT);
      // Opened parts too: the history of decisions, an audit entry, a secret's versions.
      if (name === 'inbox') {
        await page.getByRole('tab', { name: 'History' }).click();
        await page.getByRole('listitem').filter({ hasText: 'Read item' }).waitFor(WAIT);
        expect(await page.evaluate(pageWidth), 'inbox history').toBeLessThanOrEqual(390);
        await page.getByRole('tab', { name: /To decide/ }).click();
      }
      if (name === 'audit') await ready().getByRole('button').first().click();
      if (name === 'secrets') await page.getByRole('button', { name: `Versions of ${LONG_SECRET}` }).click();
      expect(await page.evaluate(pageWidth), href).toBeLessThanOrEqual(390);
      expect(await seriousViolations(page), `${href} at 390 px`).toEqual([]);
      await shot(name);
    }
  });

  it('opens the navigation from a menu button: every item is then on screen, and choosing one closes it', async () => {
    await page.goto(`${gw.url}/approvals`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const menu = page.getByRole('button', { name: /^Menu\b/ });
    await menu.waitFor(WAIT);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await shot('menu-open');
    for (const label of NAV_ITEMS) await expectOnScreen(nav.getByRole('link', { name: new RegExp(`^${label}`) }), label);
    expect(await seriousViolations(page), 'menu open').toEqual([]);
    await nav.getByRole('link', { name: 'Audit' }).click();
    await page.waitForURL(`${gw.url}/audit`, WAIT);
    await page.getByRole('heading', { name: 'Audit log' }).waitFor(WAIT);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    // Escape closes it too, and gives the focus back to the button.
    await menu.click();
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
  });

  it('shows the navigation items in the bar from 1280 px, where all of them fit, and behind the Menu button below', async () => {
    for (const width of [1024, 1280]) {
      const wide = await browser.newContext({ viewport: { width, height: 800 }, storageState: await context.storageState() });
      const p = await wide.newPage();
      await p.goto(`${gw.url}/approvals`);
      await p.getByRole('heading', { name: 'Approvals' }).waitFor(WAIT);
      const nav = p.getByRole('navigation', { name: 'Main' });
      const menu = p.getByRole('button', { name: /^Menu\b/ });
      if (width < 1280) await menu.click();
      else expect(await menu.count()).toBe(0);
      for (const label of NAV_ITEMS) expect(await onScreen(nav.getByRole('link', { name: new RegExp(`^${label}`) })), `${label} at ${width} px`).toBe('on screen');
      expect(await p.evaluate(pageWidth)).toBeLessThanOrEqual(width);
      await p.screenshot({ path: path.join(SHOTS, `nav-${width}.png`) });
      await wide.close();
    }
  });

  it('keeps every row action on screen: secrets, OAuth apps, connections, "Try it", webhook deliveries, OAuth clients', async () => {
    await page.goto(`${gw.url}/secrets`);
    for (const name of ['WIDGETS_KEY', LONG_SECRET]) {
      for (const action of [`Versions of ${name}`, `Rotate ${name}`, `Delete ${name}`]) await expectOnScreen(page.getByRole('button', { name: action }), action);
    }
    await page.getByRole('button', { name: `Versions of ${LONG_SECRET}` }).click();
    await page.getByRole('list', { name: `Versions of ${LONG_SECRET}` }).getByText('Version 1').waitFor(WAIT);

    await page.goto(`${gw.url}/connections`);
    await expectOnScreen(page.getByRole('button', { name: 'Edit OAuth app acme' }), 'Edit OAuth app');
    const connection = page.getByRole('listitem', { name: /^Connection acme-/ });
    for (const action of ['Authorize', 'Delete']) await expectOnScreen(connection.getByRole('button', { name: action }), `connection ${action}`);

    await page.goto(`${gw.url}/services/widgets`);
    const tryIt = page.getByRole('button', { name: /^Try it ?: get_item$/ });
    await expectOnScreen(tryIt, 'Try it');
    await tryIt.click();
    await page.getByRole('dialog').waitFor(WAIT);
    await page.keyboard.press('Escape');

    await page.goto(`${gw.url}/webhooks`);
    const redeliver = page.getByRole('button', { name: /^Redeliver .* event$/ });
    await redeliver.first().waitFor(WAIT);
    for (const r of await redeliver.all()) await expectOnScreen(r, 'Redeliver');
    const hookItem = page.getByRole('listitem', { name: /^Webhook / });
    for (const action of ['Delivery log', 'Send test event', 'Delete']) await expectOnScreen(hookItem.getByRole('button', { name: action }), `webhook ${action}`);

    await page.goto(`${gw.url}/settings`);
    await expectOnScreen(page.getByRole('button', { name: `Revoke ${LONG_CLIENT}` }), 'Revoke client');
  });

  it('reads the audit chain as person › agent › subagent and opens the agent that acted', async () => {
    await page.goto(`${gw.url}/audit?event=approval.raised&action=delete_item`);
    const entry = page.getByRole('region', { name: 'Entries' }).getByRole('listitem').first();
    await entry.getByRole('button').first().click();
    const detail = page.getByRole('region', { name: /^Audit entry \d+$/ });
    await detail.getByText(`${me.identity.name} › ${LONG_AGENT} › ${LONG_SUB}`).first().waitFor(WAIT);
    const open = detail.getByRole('link', { name: `Open agent ${LONG_SUB}` });
    expect(await open.getAttribute('href')).toBe(`/agents?agent=${subId}`);
    await open.click();
    await page.getByRole('heading', { name: LONG_SUB }).waitFor(WAIT);
  });
});
