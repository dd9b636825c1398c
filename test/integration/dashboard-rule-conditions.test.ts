// Rules with conditions and budgets in the dashboard (issue 44), in real Chromium against a real
// gateway: the Agents page's rule editor refuses a bad condition at its field, saves a rule with a
// condition and a call budget and shows them in words; a call that fails the condition raises an
// approval whose page says which condition failed, and allowing it remembers a rule with a
// condition. A sum budget is made in the editor (refused at its field when wrong) and listed with
// what it used; an approval offers a tier derived from the call ("up to this amount") whose
// condition the remembered rule carries, and whose blast radius says past calls were counted by
// keys alone. Screenshots of the pages.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium, signedInDashboard } from '../support/chromium.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { paymentsDoc } from '../support/payments.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };

describe('dashboard: rules with conditions and budgets', () => {
  let gw: TestGateway;
  let up: Upstream;
  let browser: Browser;
  let page: Page;
  let agentId: string;
  let agent: ReturnType<TestGateway['as']>;

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true });
    const admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: paymentsDoc(up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'PAY_KEY', value: 'sk_pay_dashboard' })).status).toBe(201);
    const created = await admin('POST', '/v1/identities/agents', { name: 'refunder' });
    expect(created.status).toBe(201);
    agentId = created.body.identity.id;
    agent = gw.as(created.body.key.token);

    browser = await launchChromium();
    ({ page } = await signedInDashboard(browser, gw.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, '/approvals'));
  }, 180_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `rule-conditions-failure-${ctx.task.name.slice(0, 30).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await up?.close();
  });

  it('the rule editor refuses a bad condition at its field, then saves one with a budget and shows both in words', async () => {
    await page.goto(`${gw.url}/agents?agent=${agentId}`);
    await page.getByRole('heading', { name: 'refunder' }).waitFor(WAIT);
    await page.getByLabel('Pattern').fill('pay:create_refund:*');
    await page.getByLabel('Only when (CEL condition, optional)').fill('body.amount <=');
    await page.getByRole('button', { name: 'Add rule' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'invalid condition at position' });
    await refused.waitFor(WAIT);
    expect((await gw.as(gw.adminToken)('GET', `/v1/identities/${agentId}/rules`)).body.rules).toEqual([]);

    await page.getByLabel('Only when (CEL condition, optional)').fill('body.amount <= 50');
    await page.getByLabel('Budget', { exact: true }).selectOption('calls');
    await page.getByLabel('At most this many calls').fill('20');
    await page.getByLabel('per', { exact: true }).selectOption('1d');
    await page.getByRole('button', { name: 'Add rule' }).click();
    const rules = page.getByRole('region', { name: 'Rules' });
    await rules.getByText('at most 20 calls per day').waitFor(WAIT);
    expect(await rules.innerText()).toContain('only when body.amount <= 50');
    expect(await rules.innerText()).toContain('0 of 20 used');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'agent-rule-condition.png'), fullPage: true });
  });

  it('the approval page says which condition failed', async () => {
    const raised = await agent('POST', '/v1/actions/call', { service: 'pay', action: 'create_refund', params: { amount: 60 } });
    expect(raised.status, JSON.stringify(raised.body)).toBe(202);
    await page.goto(raised.body.approval_url);
    const reasons = page.getByTestId('gap-reasons');
    await reasons.waitFor(WAIT);
    expect(await reasons.innerText()).toContain('body.amount <= 50 was false: amount is 60');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Only when (CEL condition, optional)').fill('body.amount <= 100');
    await page.screenshot({ path: path.join(SHOTS, 'approval-failed-condition.png'), fullPage: true });

    // Allow & remember with the condition: the planted rule carries it.
    await page.getByRole('button', { name: 'Allow & remember' }).click();
    await page.getByRole('status').filter({ hasText: 'when body.amount <= 100' }).waitFor(WAIT);
    await expect
      .poll(async () => (await gw.as(gw.adminToken)('GET', `/v1/identities/${agentId}/rules`)).body.rules.find((r: { source: string }) => r.source === 'approval')?.condition, WAIT)
      .toBe('body.amount <= 100');
  });

  it('the rule editor makes a sum budget, refused at its field when the field is not a request field, and lists what it used', async () => {
    const admin = gw.as(gw.adminToken);
    const created = await admin('POST', '/v1/identities/agents', { name: 'summer' });
    expect(created.status).toBe(201);
    const summer = { id: created.body.identity.id as string, call: gw.as(created.body.key.token) };
    await page.goto(`${gw.url}/agents?agent=${summer.id}`);
    await page.getByRole('heading', { name: 'summer' }).waitFor(WAIT);
    await page.getByLabel('Pattern').fill('pay:create_refund:*');
    await page.getByLabel('Budget', { exact: true }).selectOption('sum');
    await page.getByLabel('Sum of field').fill('amount');
    await page.getByLabel('adding up to at most').fill('100');
    await page.getByLabel('per', { exact: true }).selectOption('1d');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('alert').filter({ hasText: 'sum must name a request field such as body.amount' }).waitFor(WAIT);
    expect(await page.getByLabel('Sum of field').getAttribute('aria-invalid')).toBe('true');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'agent-rule-sum-budget-refused.png'), fullPage: true });
    expect((await admin('GET', `/v1/identities/${summer.id}/rules`)).body.rules).toEqual([]);

    await page.getByLabel('Sum of field').fill('body.amount');
    await page.getByLabel('adding up to at most').fill('0');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('alert').filter({ hasText: 'max must be a number above 0' }).waitFor(WAIT);
    expect((await admin('GET', `/v1/identities/${summer.id}/rules`)).body.rules).toEqual([]);

    await page.getByLabel('adding up to at most').fill('100');
    await page.getByRole('button', { name: 'Add rule' }).click();
    const rules = page.getByRole('region', { name: 'Rules' });
    await rules.getByText('body.amount adding up to at most 100 per day').waitFor(WAIT);
    expect(await rules.innerText()).toContain('0 of 100 used');
    expect((await admin('GET', `/v1/identities/${summer.id}/rules`)).body.rules[0].budget).toEqual({ sum: 'body.amount', max: 100, per: '1d' });

    // A covered refund of 30 is charged; the page shows it.
    expect((await summer.call('POST', '/v1/actions/call', { service: 'pay', action: 'create_refund', params: { amount: 30 } })).body.status).toBe('called');
    await page.reload();
    await rules.getByText('30 of 100 used').waitFor(WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'agent-rule-sum-budget.png'), fullPage: true });
  });

  it('the approval page offers a tier derived from the call; choosing it remembers the rule with its condition', async () => {
    const admin = gw.as(gw.adminToken);
    const created = await admin('POST', '/v1/identities/agents', { name: 'tiered' });
    expect(created.status).toBe(201);
    const tieredId = created.body.identity.id as string;
    const raised = await gw.as(created.body.key.token)('POST', '/v1/actions/call', { service: 'pay', action: 'create_refund', params: { amount: 60 } });
    expect(raised.status, JSON.stringify(raised.body)).toBe(202);
    await page.goto(raised.body.approval_url);
    const derived = page.getByRole('radio', { name: /up to this amount: body\.amount <= 60/ });
    await derived.waitFor(WAIT);
    const when = page.getByLabel('Only when (CEL condition, optional)');
    expect(await when.inputValue()).toBe('');
    await derived.check();
    await expect.poll(() => when.inputValue()).toBe('body.amount <= 60');
    // Back to a key tier: the condition goes with it.
    await page.getByRole('radio', { name: /^Any create_refund on pay\s*narrowest/ }).check();
    await expect.poll(() => when.inputValue()).toBe('');
    await derived.check();
    await expect.poll(() => when.inputValue()).toBe('body.amount <= 60');
    // The blast radius says its past calls were counted by keys: their condition was not weighed.
    const radius = page.getByRole('region', { name: 'Blast radius of this choice' });
    await radius.getByText(/Past calls are counted by the tier's keys alone/).waitFor(WAIT);
    expect(await radius.getByText('body.amount <= 60', { exact: true }).count()).toBe(1);
    await page.getByRole('radio', { name: /^Any create_refund on pay\s*narrowest/ }).check();
    await radius.getByText(/Past calls are counted by the tier's keys alone/).waitFor({ state: 'detached', ...WAIT });
    await derived.check();
    await radius.getByText(/Past calls are counted by the tier's keys alone/).waitFor(WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'approval-derived-tier.png'), fullPage: true });

    await page.getByRole('button', { name: 'Allow & remember' }).click();
    await page.getByRole('status').filter({ hasText: 'when body.amount <= 60' }).waitFor(WAIT);
    await expect
      .poll(async () => (await admin('GET', `/v1/identities/${tieredId}/rules`)).body.rules.map((r: { pattern: string; condition: string | null }) => [r.pattern, r.condition]), WAIT)
      .toEqual([['pay:create_refund:*', 'body.amount <= 60']]);
  });
});
