// Deciding several approvals at once in the inbox (issue 44 item 3), in real Chromium against a
// real gateway (PostgreSQL, Temporal, a loopback upstream): `x` selects the focused row, a row's
// checkbox does too, `a` asks to allow the selection and the confirm allows each once (the
// upstream receives one request per approval); "Select all" and "Deny selected" deny with a
// reason. axe-core with the toolbar and the confirm open; screenshots into docs/screenshots/.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium, signedInDashboard } from '../support/chromium.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };

describe('dashboard: deciding several approvals at once', () => {
  let gw: TestGateway;
  let up: Upstream;
  let browser: Browser;
  let page: Page;
  let human: ReturnType<TestGateway['as']>;
  let agent: ReturnType<TestGateway['as']>;

  const raise = async (name: string): Promise<string> => {
    const res = await agent('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.approval_id as string;
  };
  const row = (name: string) => page.getByRole('listitem').filter({ hasText: `Create item "${name}"` });
  const checkbox = (name: string) => page.getByRole('checkbox', { name: `Select: Create item "${name}"` });
  const toolbar = () => page.getByRole('toolbar', { name: 'Selected approvals' });
  const sent = (name: string) => up.requests.filter((r) => r.method === 'POST' && r.url === '/items' && (JSON.parse(r.body) as { name: string }).name === name).length;
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true });
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'batch-dana@example.test' });
    human = gw.as(await gw.login(m.email, m.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_dashboard_batch' })).status).toBe(201);
    const a = await human('POST', '/v1/identities/agents', { name: 'release-bot' });
    expect(a.status).toBe(201);
    agent = gw.as(a.body.key.token);

    browser = await launchChromium();
    ({ page } = await signedInDashboard(browser, gw.url, m, '/approvals'));
  }, 180_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `dashboard-batch-failure-${ctx.task.name.slice(0, 30).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await up?.close();
  });

  it('x selects the focused row, a checkbox another; a asks, the confirm allows each once; Select all and Deny selected deny with a reason', async () => {
    const names = ['report-q1', 'report-q2', 'report-q3', 'report-q4'];
    const ids: string[] = [];
    for (const n of names) ids.push(await raise(n));
    await page.reload();
    for (const n of names) await row(n).waitFor(WAIT);
    // Newest first: report-q4 is the top row, focused with j then k.
    await expect.poll(() => toolbar().textContent(), WAIT).toContain('0 selected');
    expect(await toolbar().getByRole('button', { name: 'Allow selected' }).isDisabled()).toBe(true);

    await page.keyboard.press('j');
    await page.keyboard.press('k');
    await page.keyboard.press('x');
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    expect(await checkbox('report-q4').isChecked()).toBe(true);
    expect(await checkbox('report-q3').isChecked()).toBe(true);
    await checkbox('report-q1').check();
    // x again on the focused row takes it out; x once more puts it back.
    await page.keyboard.press('k');
    await page.keyboard.press('x');
    expect(await checkbox('report-q4').isChecked()).toBe(false);
    await page.keyboard.press('x');
    await expect.poll(() => toolbar().textContent(), WAIT).toContain('3 selected');
    expect(await checkbox('report-q2').isChecked()).toBe(false);
    expect(await seriousViolations(page), 'inbox with a selection').toEqual([]);
    await shot('approvals-batch-selected');

    // a with a selection asks first, naming each; nothing is decided before the confirm.
    await page.keyboard.press('a');
    const dialog = page.getByRole('dialog', { name: 'Allow 3 requests once?' });
    await dialog.waitFor(WAIT);
    expect(await dialog.getByRole('list', { name: 'Selected requests' }).getByRole('listitem').allTextContents()).toEqual([
      'Create item "report-q4"',
      'Create item "report-q3"',
      'Create item "report-q1"',
    ]);
    expect(await seriousViolations(page), 'batch confirm').toEqual([]);
    await shot('approvals-batch-confirm');
    expect(sent('report-q4') + sent('report-q3') + sent('report-q1')).toBe(0);
    await dialog.getByRole('button', { name: 'Allow 3 requests' }).click();

    await page.getByRole('status').filter({ hasText: 'Allowed 3 requests.' }).waitFor(WAIT);
    await row('report-q4').waitFor({ state: 'detached', ...WAIT });
    await row('report-q1').waitFor({ state: 'detached', ...WAIT });
    await row('report-q2').waitFor(WAIT);
    await shot('approvals-batch-done');
    for (const [i, n] of names.entries()) {
      if (n === 'report-q2') continue;
      await until(() => human('GET', `/v1/approvals/${ids[i]}`), (r) => r.body.execution?.status === 'executed', 60_000);
      expect(sent(n), n).toBe(1);
    }
    expect(sent('report-q2')).toBe(0);

    // Select all, then Deny selected: the reason goes to each agent.
    await toolbar().getByRole('checkbox', { name: 'Select all' }).check();
    await expect.poll(() => toolbar().textContent(), WAIT).toContain('1 selected');
    await toolbar().getByRole('button', { name: 'Deny selected' }).click();
    const deny = page.getByRole('dialog', { name: 'Deny 1 request?' });
    await deny.getByLabel('Reason').fill('one report is enough');
    await deny.getByRole('button', { name: 'Deny 1 request' }).click();
    await page.getByRole('status').filter({ hasText: 'Denied 1 request.' }).waitFor(WAIT);
    expect((await human('GET', `/v1/approvals/${ids[1]}`)).body).toMatchObject({ status: 'denied', reason: 'one report is enough' });
    expect(sent('report-q2')).toBe(0);
  });
});
