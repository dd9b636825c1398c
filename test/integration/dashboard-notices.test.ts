// The dashboard's approval notices (issue 30) in real Chromium: an admin adds a Slack and an email
// channel, a routing rule and reminders on the settings page; an approval's page shows where it
// was announced. axe-core scans each, screenshots are taken.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { PHONE, pageWidth } from '../support/phone.ts';
import { startSmtpCapture, type SmtpCapture } from '../support/smtp.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };

describe('approval notices in the dashboard', () => {
  let gw: TestGateway;
  let up: Upstream;
  let slack: FakeSlack;
  let smtp: SmtpCapture;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: ReturnType<TestGateway['as']>;
  const bodies: Promise<string>[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    [up, slack, smtp] = await Promise.all([startUpstream(), startFakeSlack(), startSmtpCapture()]);
    gw = await startTestGateway({ realPublicUrl: true, env: { GATEWAY_SLACK_API_URL: slack.apiUrl } });
    admin = gw.as(gw.adminToken);
    slack.addUser(ADMIN_EMAIL);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_dashboard_notices' })).status).toBe(201);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    context.on('response', (r) => {
      if ((r.headers()['content-type'] ?? '').includes('text/event-stream')) return;
      bodies.push(r.text().catch(() => ''));
    });
    await page.goto(`${gw.url}/settings`);
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/settings`, WAIT);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await Promise.all([up?.close(), slack?.close(), smtp?.close()]);
  });

  it('adds channels, a rule and reminders on the settings page; an approval page shows where it was announced', async () => {
    const section = page.getByRole('region', { name: 'Approval notices' });
    await section.getByText('No channel yet').waitFor(WAIT);
    const form = section.getByRole('form', { name: 'Add a channel' });
    await form.getByLabel('Channel name').fill('Team Slack');
    await form.getByLabel(/Slack channel to post in/).fill('C0TEAM');
    await form.getByLabel('Bot token').fill(slack.botToken);
    await form.getByLabel('Signing secret').fill(slack.signingSecret);
    await form.getByRole('button', { name: 'Add channel' }).click();
    await section.getByRole('status').filter({ hasText: 'Added Slack channel Team Slack.' }).waitFor(WAIT);
    await form.getByLabel('Email (SMTP)').check();
    await form.getByLabel('Channel name').fill('Mail');
    await form.getByLabel('SMTP host').fill(smtp.host);
    await form.getByLabel('Port').fill(String(smtp.port));
    await form.getByLabel('Require STARTTLS').uncheck();
    await form.getByLabel(/SMTP user/).fill(smtp.user);
    await form.getByLabel('SMTP password').fill(smtp.password);
    await form.getByLabel('From address').fill('gateway@example.test');
    await form.getByRole('button', { name: 'Add channel' }).click();
    await section.getByRole('status').filter({ hasText: 'Added email channel Mail.' }).waitFor(WAIT);
    const table = section.getByRole('region', { name: 'Notification channels table' });
    await table.getByRole('row').filter({ hasText: 'posts in C0TEAM, DMs the resolver' }).waitFor(WAIT);

    const rule = section.getByRole('form', { name: 'Add a rule' });
    await rule.getByLabel('Rule name').fill('everything by mail');
    await rule.getByLabel('Send to channel').selectOption({ label: 'Mail' });
    await rule.getByRole('button', { name: 'Add rule' }).click();
    await section.getByRole('list', { name: 'Routing rules' }).getByText('everything (default route) → Mail (resolver)').waitFor(WAIT);
    await section.getByLabel('Remind the resolver at').fill('half');
    await section.getByRole('button', { name: 'Save reminders' }).click();
    await section.getByRole('status').filter({ hasText: 'Reminders saved.' }).waitFor(WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'settings-notices.png'), fullPage: true });
    expect((await admin('GET', '/v1/notification-reminders')).body.reminders).toEqual(['half']);
    expect((await admin('GET', '/v1/notification-rules')).body.rules).toHaveLength(1);

    // An approval raised now goes by email only (the rule), and its page says so.
    const agent = await admin('POST', '/v1/identities/agents', { name: 'notice-bot' });
    const raised = await gw.as(agent.body.key.token)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'announced' } });
    expect(raised.status).toBe(202);
    await until(async () => smtp.messages.length, (n) => n === 1);
    await page.goto(`${gw.url}/approvals/${raised.body.approval_id}`);
    const announced = page.getByRole('region', { name: 'Announced' });
    await announced.getByRole('listitem').filter({ hasText: 'Mail' }).getByText('delivered').waitFor(WAIT);
    expect(await announced.getByRole('listitem').count()).toBe(1);
    expect(slack.messages).toHaveLength(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'approval-announced.png'), fullPage: true });

    // On a phone both pages fit 390 px, and pass axe there too.
    const phone = await browser.newContext({ ...PHONE, storageState: await context.storageState() });
    const p = await phone.newPage();
    for (const href of ['/settings', `/approvals/${raised.body.approval_id}`]) {
      await p.goto(`${gw.url}${href}`);
      if (href === '/settings') {
        const notices = p.getByRole('region', { name: 'Approval notices' });
        await notices.getByRole('cell', { name: 'Team Slack', exact: true }).waitFor(WAIT);
        await notices.getByLabel('Email (SMTP)').check();
        await notices.getByLabel('SMTP host').waitFor(WAIT);
      } else await p.getByRole('region', { name: 'Announced' }).getByText('delivered').waitFor(WAIT);
      expect(await p.evaluate(pageWidth), href).toBeLessThanOrEqual(390);
      expect(await seriousViolations(p), `${href} at 390px`).toEqual([]);
    }
    await phone.close();

    // The secrets typed in never came back to the browser.
    const seen = (await Promise.all(bodies)).join('\n');
    for (const secret of [slack.botToken, slack.signingSecret, smtp.password]) expect(seen).not.toContain(secret);
  });
});
