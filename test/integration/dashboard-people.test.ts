// Teams in real Chromium (issue 29, "Must show"): the admin invites two people from the People
// page (an approver, a member); each opens the link in a fresh browser context and joins — the
// approver through single sign-on at a real OpenID provider on loopback, the member with a
// password. The member's agent raises an approval, the member bubbles it, the approver sees it
// arrive live (and why it is theirs) and allows it; the upstream receives one request. Then the
// admin deactivates the member: their open page loses its session, their agent's next call is
// 401, their pending approval is cancelled. axe-core on each new page; screenshots.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startOidcIdp, type TestIdp } from '../support/oidc-idp.ts';
import { pageWidth, PHONE } from '../support/phone.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-people-screenshots');
const WAIT = { timeout: 30_000 };
const SAM_PASSWORD = 'sam chooses a long password';

describe('teams in the dashboard', () => {
  let gw: TestGateway;
  let up: Upstream;
  let idp: TestIdp;
  let browser: Browser;
  let base: string;
  const contexts: BrowserContext[] = [];
  let adminPage: Page;
  let danaPage: Page;
  let samPage: Page;
  let links: { dana: string; sam: string };

  const newPage = async (opts: Parameters<Browser['newContext']>[0] = { viewport: { width: 1280, height: 860 } }) => {
    const context = await browser.newContext(opts);
    contexts.push(context);
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    return context.newPage();
  };
  const accessible = async (page: Page, where: string) => expect(await seriousViolations(page), where).toEqual([]);
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true });
    base = gw.config.publicUrl;
    idp = await startOidcIdp(`${base}/v1/auth/sso/callback`);
    const admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_people_test' })).status).toBe(201);
    browser = await launchChromium();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    for (const [name, p] of [['admin', adminPage], ['dana', danaPage], ['sam', samPage]] as const) {
      await p?.screenshot({ path: path.join(os.tmpdir(), `people-failure-${name}.png`), fullPage: true }).catch(() => undefined);
    }
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await idp?.stop();
    await up?.close();
  });

  /** Invites from the People page; answers the link the dialog shows once. */
  async function inviteFromPage(email: string, role: string, approver?: string): Promise<string> {
    await adminPage.getByLabel('Email').fill(email);
    await adminPage.getByLabel('Role', { exact: true }).selectOption({ label: role });
    if (approver) await adminPage.getByLabel('Approver', { exact: true }).selectOption({ label: approver });
    await adminPage.getByRole('button', { name: 'Invite', exact: true }).click();
    const dialog = adminPage.getByRole('dialog', { name: `Invitation link for ${email}` });
    await dialog.waitFor(WAIT);
    const link = await dialog.getByLabel('Invitation link').inputValue();
    expect(link).toMatch(new RegExp(`^${base}/invitation#token=gwi_`));
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    return link;
  }

  it('the admin configures single sign-on on the Settings page; the secret goes to the vault', async () => {
    adminPage = await newPage();
    await adminPage.goto(`${base}/settings`);
    await adminPage.getByLabel('Email').fill(ADMIN_EMAIL);
    await adminPage.getByLabel('Password').fill(ADMIN_PASSWORD);
    await adminPage.getByRole('button', { name: 'Sign in', exact: true }).click();
    await adminPage.getByRole('heading', { name: 'Single sign-on' }).waitFor(WAIT);
    await adminPage.getByLabel('Button name').fill('Corp SSO');
    await adminPage.getByLabel('Issuer URL').fill(idp.issuer);
    await adminPage.getByLabel('Client ID').fill(idp.clientId);
    await adminPage.getByLabel('Client secret').fill(idp.clientSecret);
    await adminPage.getByLabel('Allowed email domains').fill('corp.test, example.test');
    await adminPage.getByRole('button', { name: 'Save single sign-on' }).click();
    await adminPage.getByRole('status').filter({ hasText: 'Single sign-on saved.' }).waitFor(WAIT);
    await adminPage.getByText(`${base}/v1/auth/sso/callback`).waitFor(WAIT);
    // Not yet proven by a sign-in: password sign-in cannot be turned off.
    expect(await adminPage.getByLabel('Password sign-in stays on').isDisabled()).toBe(true);
    await accessible(adminPage, 'settings with single sign-on');
    expect(await adminPage.getByLabel('Client secret').inputValue()).toBe('');
    expect(await adminPage.content()).not.toContain(idp.clientSecret);
    const stored = await gw.as(gw.adminToken)('GET', '/v1/org/sso');
    expect(stored.body).toMatchObject({ issuer: idp.issuer, client_id: idp.clientId, allowed_domains: ['corp.test', 'example.test'], jit: false, display_name: 'Corp SSO' });
  });

  it('the sign-in page offers "Sign in with Corp SSO" (desktop and phone)', async () => {
    const page = await newPage();
    await page.goto(`${base}/signin`);
    await page.getByRole('button', { name: 'Sign in with Corp SSO' }).waitFor(WAIT);
    await accessible(page, 'sign-in with SSO');
    await shot(page, 'signin-sso');
    const phone = await newPage({ ...PHONE });
    await phone.goto(`${base}/signin`);
    await phone.getByRole('button', { name: 'Sign in with Corp SSO' }).waitFor(WAIT);
    expect(await phone.evaluate(pageWidth)).toBeLessThanOrEqual(390);
    await shot(phone, 'signin-sso-phone');
  });

  it('the admin invites an approver and a member from the People page; one joins through SSO, the other with a password', async () => {
    await adminPage.goto(`${base}/settings`);
    await adminPage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People' }).click();
    await adminPage.getByRole('heading', { name: 'People', exact: true }).waitFor(WAIT);
    await accessible(adminPage, 'people page');

    const dana = await inviteFromPage('dana@corp.test', 'Approver');
    // Dana joins through SSO, in a browser of her own.
    danaPage = await newPage();
    await danaPage.goto(dana);
    await danaPage.getByRole('heading', { name: /^Join / }).waitFor(WAIT);
    await expect.poll(() => danaPage.getByText('You are invited as approver with dana@corp.test.').count()).toBe(1);
    await accessible(danaPage, 'invitation page');
    await shot(danaPage, 'people-invitation');
    await danaPage.getByRole('button', { name: 'Join with Corp SSO' }).click();
    // The identity provider's own pages (oidc-provider's development sign-in and consent).
    await danaPage.locator('input[name="login"]').waitFor(WAIT);
    await danaPage.locator('input[name="login"]').fill('dana@corp.test');
    await danaPage.locator('input[name="password"]').fill('anything');
    await danaPage.locator('button[type="submit"]').click();
    // The provider asks for consent on a first authorization: continue.
    const consent = danaPage.getByRole('button', { name: /continue/i });
    await Promise.race([danaPage.waitForURL(`${base}/approvals`, WAIT), consent.waitFor(WAIT).then(() => consent.click())]);
    await danaPage.waitForURL(`${base}/approvals`, WAIT);
    await danaPage.getByRole('heading', { name: 'Approvals' }).waitFor(WAIT);

    await adminPage.reload();
    const sam = await inviteFromPage('sam@example.test', 'Member', 'Dana (dana@corp.test)');
    samPage = await newPage();
    await samPage.goto(sam);
    await samPage.getByLabel('Your name').fill('Sam');
    await samPage.getByLabel('Password').fill(SAM_PASSWORD);
    await samPage.getByRole('button', { name: 'Join with a password' }).click();
    await samPage.waitForURL(`${base}/approvals`, WAIT);
    links = { dana, sam };

    await adminPage.reload();
    const samRow = adminPage.locator('tr[data-member="sam@example.test"]');
    await samRow.waitFor(WAIT);
    await expect.poll(() => samRow.getByLabel('Approver of Sam').inputValue()).not.toBe('');
    await expect.poll(() => adminPage.locator('tr[data-member="dana@corp.test"]').getByLabel('Role of Dana').inputValue()).toBe('approver');
    await shot(adminPage, 'people');
    // The links work once.
    const reused = await newPage();
    await reused.goto(links.sam);
    await reused.getByRole('alert').filter({ hasText: 'already been used' }).waitFor(WAIT);
  });

  it("the member's agent raises an approval; the member bubbles it; the approver sees it live, why it is hers, and allows it", async () => {
    const asSam = gw.as(await gw.login('sam@example.test', SAM_PASSWORD));
    const agent = await asSam('POST', '/v1/identities/agents', { name: 'sam-bot' });
    expect(agent.status, agent.text).toBe(201);
    const call = await gw.as(agent.body.key.token)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'quarterly-report' } });
    expect(call.status, call.text).toBe(202);
    const id = call.body.approval_id as string;

    await samPage.goto(`${base}/approvals/${id}`);
    await samPage.getByRole('button', { name: 'Bubble up' }).click(WAIT);
    await expect.poll(() => samPage.getByTestId('approval-status').textContent(), WAIT).toBe('bubbled');

    // Dana's inbox was open all along: the approval arrives over her event stream.
    const row = danaPage.getByRole('list', { name: 'Approvals waiting for you' }).locator(`[data-approval-id="${id}"]`);
    await row.waitFor(WAIT);
    await expect.poll(() => row.getByTestId('why-yours').textContent()).toBe("bubbled from Sam: you are Sam's approver");
    await accessible(danaPage, "the approver's inbox");
    await shot(danaPage, 'people-approver-inbox');
    await row.getByRole('button', { name: 'Allow once' }).click();
    await until(async () => up.requests.filter((r) => JSON.stringify(r).includes('quarterly-report')).length, (n) => n >= 1, 30_000);
    // Exactly one: give a second request the time to show up if there were one.
    await new Promise((r) => setTimeout(r, 1000));
    expect(up.requests.filter((r) => JSON.stringify(r).includes('quarterly-report'))).toHaveLength(1);
  });

  it('the admin deactivates the member: their open page loses its session, their agent gets 401, their pending approval is cancelled', async () => {
    const asSam = gw.as(await gw.login('sam@example.test', SAM_PASSWORD));
    const agent = await asSam('POST', '/v1/identities/agents', { name: 'sam-bot-2' });
    const agentCall = gw.as(agent.body.key.token);
    const pending = await agentCall('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'left-pending' } });
    expect(pending.status).toBe(202);
    await samPage.goto(`${base}/approvals`);
    await samPage.getByRole('heading', { name: 'Approvals' }).waitFor(WAIT);

    await adminPage.reload();
    await adminPage.getByRole('button', { name: 'Deactivate Sam' }).click(WAIT);
    const confirm = adminPage.getByRole('dialog', { name: 'Deactivate Sam?' });
    await confirm.getByRole('button', { name: 'Deactivate' }).click();
    await adminPage.getByRole('status').filter({ hasText: 'Sam is deactivated.' }).waitFor(WAIT);

    await samPage.waitForURL(/\/signin/, WAIT);
    expect((await agentCall('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'after' } })).status).toBe(401);
    const admin = gw.as(gw.adminToken);
    const cancelled = await until(async () => (await admin('GET', `/v1/approvals/${pending.body.approval_id}`)).body, (a) => a.status === 'cancelled', 30_000);
    expect(cancelled.reason).toBe('Sam was deactivated');
    await expect.poll(() => adminPage.locator('tr[data-member="sam@example.test"]').getByText('deactivated').count()).toBe(1);

    const phone = await newPage({ ...PHONE });
    await phone.goto(`${base}/signin`);
    await phone.getByLabel('Email').fill(ADMIN_EMAIL);
    await phone.getByLabel('Password').fill(ADMIN_PASSWORD);
    await phone.getByRole('button', { name: 'Sign in', exact: true }).click();
    await phone.waitForURL(/\/approvals/, WAIT);
    await phone.goto(`${base}/settings/people`);
    await phone.getByRole('heading', { name: 'People', exact: true }).waitFor(WAIT);
    await phone.locator('tr[data-member="sam@example.test"]').waitFor(WAIT);
    expect(await phone.evaluate(pageWidth)).toBeLessThanOrEqual(390);
    await shot(phone, 'people-phone');
  });
});
