// "Edit before allowing" on the approval page (issue 31), in real Chromium against a real gateway
// (PostgreSQL, Temporal, a loopback upstream): the agent's raw POST /transfer of 5000 is edited to
// 50, the diff shows live, a widening edit is refused in place, and the upstream receives exactly
// one request, for 50; the agent's resume and the audit row say so. A built-in template's service
// action (Stripe's create_refund, its servers pointed at the loopback upstream) is edited the same
// way from the form its parameter schema makes. axe-core on the page; screenshots desktop and 390 px.
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { pageWidth, PHONE } from '../support/phone.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };
const STRIPE_KEY = 'sk_test_edit_before_approve_9d1';

describe('dashboard: edit before allowing', () => {
  let gw: TestGateway;
  let up: Upstream;
  let browser: Browser;
  let page: Page;
  let agent: ReturnType<TestGateway['as']>;

  const hits = (prefix: string) => up.requests.filter((r) => r.url.startsWith(prefix));
  const raise = async (body: Record<string, unknown>) => {
    const res = await agent('POST', '/v1/actions/call', body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { approval_id: string; approval_url: string };
  };
  const signIn = async (p: Page) => {
    await p.goto(`${gw.url}/approvals`);
    await p.getByLabel('Email').fill(ADMIN_EMAIL);
    await p.getByLabel('Password').fill(ADMIN_PASSWORD);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(`${gw.url}/approvals`, WAIT);
  };
  const changes = (p: Page) => p.getByRole('table', { name: 'Changes' });
  /** The auto-run execution has finished (a resume before that would find it in flight). */
  const executed = (approvalId: string) => until(() => gw.as(gw.adminToken)('GET', `/v1/approvals/${approvalId}`), (r) => r.body.execution?.status === 'executed', 30_000);

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true, env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    const admin = gw.as(gw.adminToken);
    // The built-in Stripe template, as shipped, with its server at the loopback upstream (an org
    // template of the same key takes precedence over the built-in one).
    const stripe = parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', 'services', 'stripe.yaml'), 'utf8')) as Record<string, unknown>;
    stripe.servers = [{ url: up.url }];
    const tpl = await admin('POST', '/v1/templates', { scope: 'org', document: stripe });
    expect(tpl.status, tpl.text).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'STRIPE_SECRET_KEY', value: STRIPE_KEY })).status).toBe(201);
    const created = await admin('POST', '/v1/identities/agents', { name: 'treasurer' });
    expect(created.status).toBe(201);
    agent = gw.as(created.body.key.token);

    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    await signIn(page);
  }, 180_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `approval-edit-failure-${ctx.task.name.slice(0, 30).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await up?.close();
  });

  it('edits a raw POST /transfer from 5000 to 50: the diff live, a widening edit refused in place, one request upstream for 50, the resume and the audit row say so', async () => {
    const raised = await raise({ service: 'http', method: 'POST', path: `${up.url}/transfer`, body: { amount: 5000, to: 'acct-9' } });
    await page.goto(raised.approval_url);
    await page.getByRole('button', { name: 'Edit before allowing' }).click();
    const bodyEditor = page.getByLabel('Body (JSON)');
    await bodyEditor.waitFor(WAIT);
    expect(JSON.parse(await bodyEditor.inputValue())).toEqual({ amount: 5000, to: 'acct-9' });

    // A widening edit (another path) is refused where it is made, naming the key; nothing to allow.
    const url = page.getByLabel('URL');
    await url.fill(`${up.url}/transfer-all`);
    const refused = page.getByRole('alert').filter({ hasText: 'widens the request' });
    await refused.waitFor(WAIT);
    expect(await refused.innerText()).toContain(`http:POST:127.0.0.1:${up.port}/transfer-all`);
    expect(await page.getByRole('button', { name: 'Allow once with changes' }).isDisabled()).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'approval-edit-refused.png'), fullPage: true });
    await url.fill(`${up.url}/transfer`);

    await bodyEditor.fill(JSON.stringify({ amount: 50, to: 'acct-9' }, null, 2));
    const diff = changes(page);
    await diff.getByRole('row').filter({ hasText: 'body.amount' }).waitFor(WAIT);
    expect((await diff.getByRole('row').filter({ hasText: 'body.amount' }).innerText()).replace(/\s+/g, ' ')).toBe('body.amount 5000 50');
    expect(await page.getByTestId('edit-description').innerText()).toBe(`POST ${up.url}/transfer`);
    expect(await page.getByRole('list', { name: 'Re-derived permission keys' }).innerText()).toContain(`http:POST:127.0.0.1:${up.port}/transfer`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'approval-edit.png'), fullPage: true });

    await page.getByRole('button', { name: 'Allow once with changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Allowed once, with your changes.' }).waitFor(WAIT);
    await executed(raised.approval_id);
    expect(hits('/transfer').map((r) => JSON.parse(r.body))).toEqual([{ amount: 50, to: 'acct-9' }]);

    const resumed = await agent('POST', '/v1/actions/call', { approval_id: raised.approval_id });
    expect(resumed.body).toMatchObject({ status: 'called', modified_by_approver: true, diff: [{ field: 'body.amount', before: 5000, after: 50 }] });
    // The page, reloaded by the decision, shows what ran.
    await page.getByRole('heading', { name: 'Allowed with changes' }).waitFor(WAIT);

    // The audit log: the decision's row says "with changes" and opens to the diff.
    await page.goto(`${gw.url}/audit`);
    const row = page.getByRole('button').filter({ hasText: 'approval.resolved' }).filter({ hasText: 'with changes' });
    await row.first().click();
    const region = page.getByRole('region', { name: /Audit entry/ });
    await region.getByRole('heading', { name: 'Allowed with changes' }).waitFor(WAIT);
    expect(await region.innerText()).toContain('body.amount: 5000 → 50');
    expect(hits('/transfer')).toHaveLength(1);
  });

  it('edits a built-in template\'s service action from the form its parameter schema makes (Stripe create_refund: amount 5000 → 50), at 390 px too', async () => {
    const raised = await raise({ service: 'stripe', action: 'create_refund', params: { payment_intent: 'pi_123', amount: 5000 } });
    await page.goto(raised.approval_url);
    await page.getByRole('button', { name: 'Edit before allowing' }).click();
    const amount = page.getByLabel('amount', { exact: true });
    await amount.waitFor(WAIT);
    expect(await amount.inputValue()).toBe('5000');
    expect(await page.getByLabel('reason', { exact: true }).evaluate((el) => el.tagName)).toBe('SELECT');
    // The scope parameter moves the key: refused in place.
    await page.getByLabel('payment_intent (required)').fill('pi_999');
    await page.getByRole('alert').filter({ hasText: 'stripe:create_refund:pi_999' }).waitFor(WAIT);
    await page.getByLabel('payment_intent (required)').fill('pi_123');
    await amount.fill('50');
    await changes(page).getByRole('row').filter({ hasText: 'body.amount' }).waitFor(WAIT);
    expect((await changes(page).getByRole('row').filter({ hasText: 'body.amount' }).innerText()).replace(/\s+/g, ' ')).toBe('body.amount 5000 50');
    expect(await page.getByTestId('edit-description').innerText()).toBe('Refund 50 of payment pi_123');
    expect(await seriousViolations(page)).toEqual([]);

    // The same editor on a phone: it fits the width.
    const phone = await browser.newContext(PHONE);
    const small = await phone.newPage();
    await signIn(small);
    await small.goto(raised.approval_url);
    await small.getByRole('button', { name: 'Edit before allowing' }).click();
    await small.getByLabel('amount', { exact: true }).fill('50');
    await changes(small).getByRole('row').filter({ hasText: 'body.amount' }).waitFor(WAIT);
    expect(await small.evaluate(pageWidth)).toBeLessThanOrEqual(390);
    expect(await seriousViolations(small)).toEqual([]);
    await small.screenshot({ path: path.join(SHOTS, 'approval-edit-phone.png'), fullPage: true });
    await phone.close();

    await page.getByRole('button', { name: 'Allow once with changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Allowed once, with your changes.' }).waitFor(WAIT);
    await executed(raised.approval_id);
    expect(hits('/v1/refunds')).toHaveLength(1);
    // Stripe reads a form body: the edited request leaves form-encoded.
    expect(hits('/v1/refunds')[0]!.url).toBe('/v1/refunds');
    expect(hits('/v1/refunds')[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(hits('/v1/refunds')[0]!.body).toBe('payment_intent=pi_123&amount=50');
    expect(hits('/v1/refunds')[0]!.headers.authorization).toBe(`Bearer ${STRIPE_KEY}`);
    const resumed = await agent('POST', '/v1/actions/call', { approval_id: raised.approval_id });
    expect(resumed.body).toMatchObject({ status: 'called', modified_by_approver: true, diff: [{ field: 'body.amount', before: 5000, after: 50 }], action_description: 'Refund 50 of payment pi_123' });
    expect(await page.content()).not.toContain(STRIPE_KEY);
  });
});
