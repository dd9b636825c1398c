// The approver's dashboard in real Chromium against a real gateway (PostgreSQL, Temporal, a
// loopback upstream): sign-in through a deep link, the live inbox, the approval page, blast
// radius, keyboard-only approval, agents and their one-time keys; axe-core on every page;
// screenshots into docs/screenshots/.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { oauthClientToken } from '../support/oauth-token.ts';
import { pageWidth, PHONE } from '../support/phone.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

/** Runs in the page: the id of the focused element. */
const activeId = () => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id ?? null;
interface ShownNotification {
  title: string;
  body: string | undefined;
  tag: string | undefined;
}
/**
 * Init script: wraps the browser's own Notification constructor so the page's notifications are
 * recorded (in `shownNotifications`) and then shown by the browser as usual. The permission and
 * requestPermission stay the browser's (inherited statics).
 */
type NotificationInit = { body?: string; tag?: string };
const recordNotifications = () => {
  const g = globalThis as unknown as { Notification: new (title: string, options?: NotificationInit) => object; shownNotifications: ShownNotification[] };
  const Browser = g.Notification;
  const shown: ShownNotification[] = [];
  g.shownNotifications = shown;
  g.Notification = class extends Browser {
    constructor(title: string, options?: NotificationInit) {
      shown.push({ title, body: options?.body, tag: options?.tag });
      super(title, options);
    }
  };
};
// Screenshots are always taken; SCREENSHOTS=1 writes them into docs/screenshots (the README's),
// otherwise into a temporary folder so a test run leaves the work tree clean.
const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };

describe('the approver\'s dashboard', () => {
  let gw: TestGateway;
  let up: Upstream;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: { email: string; password: string };
  let human: ReturnType<TestGateway['as']>;
  let agent: { id: string; call: ReturnType<TestGateway['as']> };

  const create = (name: string, folder?: string) =>
    agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name, ...(folder ? { folder } : {}) } });
  const approvalStatus = async (id: string) => (await human('GET', `/v1/approvals/${id}`)).body.status as string;
  const expectAccessible = async (p: Page, where: string) => {
    expect(await seriousViolations(p), where).toEqual([]);
  };
  const shot = (p: Page, name: string) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    gw = await startTestGateway({ realPublicUrl: true });
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'dana@example.test' });
    owner = { email: m.email, password: m.password };
    human = gw.as(await gw.login(m.email, m.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_dashboard_test' })).status).toBe(201);
    const a = await human('POST', '/v1/identities/agents', { name: 'release-bot' });
    expect(a.status).toBe(201);
    agent = { id: a.body.identity.id, call: gw.as(a.body.key.token) };
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    // Browser-side errors are test output, not silence.
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    context.on('console', (m) => {
      // 401s are the sign-in redirects the tests drive on purpose.
      if (m.type() === 'error' && !m.text().includes('status of 401')) console.error('browser console:', m.text());
    });
  });
  afterEach(async (ctx) => {
    // What the page looked like when a scenario failed, for whoever reads the failure.
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `dashboard-failure-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await up?.close();
  });

  it('sends a deep link through sign-in and back; the sign-in page is accessible', async () => {
    const raised = await create('deep-link');
    expect(raised.status).toBe(202);
    expect(raised.body.approval_url).toBe(`${gw.url}/approvals/${raised.body.approval_id}`);
    await page.goto(raised.body.approval_url);
    await page.waitForURL(/\/signin\?next=/, WAIT);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    await expectAccessible(page, 'sign-in');
    await shot(page, 'signin');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'do not match' }).waitFor(WAIT);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/approvals/${raised.body.approval_id}`, WAIT);
    await page.getByRole('heading', { name: 'Create item "deep-link"' }).waitFor(WAIT);
    // Clean up: deny it so it does not crowd the later scenarios.
    expect((await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'deny' })).status).toBe(200);
  });

  it('shows a new approval live, then allow & remember from its approval_url runs it once and covers the next call', async () => {
    await page.goto(`${gw.url}/approvals`);
    await page.getByRole('heading', { name: 'Approvals' }).waitFor(WAIT);
    await page.getByText('Live', { exact: true }).waitFor(WAIT);
    const raised = await create('report', 'q3');
    expect(raised.status).toBe(202);
    // No reload: the event stream brings it in.
    const row = page.getByRole('listitem').filter({ hasText: 'Create item "report" in q3' });
    await row.waitFor(WAIT);
    await row.getByText('dana › release-bot').waitFor(WAIT);
    await row.getByText(/\d+:\d\d left/).waitFor(WAIT);
    await page.getByRole('link', { name: /Approvals.*1 waiting for you/ }).waitFor(WAIT);
    await expectAccessible(page, 'inbox');
    await shot(page, 'approvals');

    const requestsBefore = up.requests.length;
    await page.goto(raised.body.approval_url);
    await page.getByRole('heading', { name: 'Create item "report" in q3' }).waitFor(WAIT);
    await page.getByRole('radio', { name: /widgets:create_item:\*/ }).check();
    await page.getByRole('radio', { name: '7 days' }).check({ force: true });
    await page.getByText(/would have covered/).waitFor(WAIT);
    await expectAccessible(page, 'approval page');
    await shot(page, 'approval');
    await page.getByRole('button', { name: 'Allow & remember' }).click();
    await page.getByTestId('execution-status').filter({ hasText: 'executed' }).waitFor(WAIT);
    await page.getByTestId('execution-status').filter({ hasText: 'HTTP 200' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Result' }).or(page.getByText('Result', { exact: true })).first().click();
    await page.getByText('"ok": true').waitFor(WAIT);
    await shot(page, 'approval-executed');
    expect(up.requests.length).toBe(requestsBefore + 1);
    expect(up.requests.at(-1)).toMatchObject({ method: 'POST', url: '/items' });

    // The remembered tier covers the same call now: it runs at once.
    const again = await create('report', 'q3');
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('called');
    expect(up.requests.length).toBe(requestsBefore + 2);
    const rules = (await human('GET', `/v1/identities/${agent.id}/rules`)).body.rules;
    expect(rules).toEqual([expect.objectContaining({ pattern: 'widgets:create_item:*', source: 'approval', approval_id: raised.body.approval_id })]);
    const ttlMs = Date.parse(rules[0].expires_at) - Date.now();
    expect(ttlMs).toBeGreaterThan(6.9 * 86400_000);
    expect(ttlMs).toBeLessThan(7.1 * 86400_000);
  });

  it('shows disclosed fields (first one in the inbox) and the redacted request', async () => {
    const doc = {
      openapi: '3.1.0',
      info: { title: 'Notes', key: 'notes', version: '1' },
      servers: [{ url: up.url }],
      components: { securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: 'WIDGETS_KEY' } } },
      security: [{ api_key: [] }],
      paths: {
        '/notes': {
          post: {
            operationId: 'create_note',
            summary: 'Create note "{title}"',
            'x-gateway-redact': ['body.password'],
            'x-gateway-disclose': [
              { label: 'Title', filter: '.body.title' },
              { label: 'Text', filter: '.body.text', max_chars: 12 },
              { label: 'Broken', filter: 'error("no such thing")' },
            ],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, text: { type: 'string' }, password: { type: 'string' } } } } },
            },
            responses: { '201': { description: 'created' } },
          },
        },
      },
    };
    expect((await gw.as(gw.adminToken)('POST', '/v1/templates', { scope: 'org', document: doc })).status).toBe(201);
    const raised = await agent.call('POST', '/v1/actions/call', { service: 'notes', action: 'create_note', params: { title: 'Quarterly', text: 'Please file this under the numbers', password: 'hunter2-in-the-body' } });
    expect(raised.status).toBe(202);
    await page.goto(`${gw.url}/approvals`);
    const row = page.getByRole('listitem').filter({ hasText: 'Create note "Quarterly"' });
    await row.getByText('Title: Quarterly').waitFor(WAIT);
    // Beside "Allow once": what will be sent, as the server redacted it.
    const sent = `POST ${up.url}/notes`;
    // (Stored as jsonb, whose keys come back shortest first.)
    const body = ['{', '  "text": "Please file this under the numbers",', '  "title": "Quarterly",', '  "password": "[REDACTED]"', '}'].join('\n');
    const rowRequest = row.getByRole('group', { name: 'Request to be sent' });
    expect(await rowRequest.innerText()).toBe(`${sent}\n\n${body}`);
    await row.getByRole('button', { name: 'Allow once' }).waitFor(WAIT);
    expect(await page.content()).not.toContain('hunter2-in-the-body');
    await page.goto(raised.body.approval_url);
    await page.getByRole('heading', { name: 'Create note "Quarterly"' }).waitFor(WAIT);
    const fields = page.getByRole('region', { name: 'What the agent sends' });
    await fields.getByText('Please file…').waitFor(WAIT);
    await fields.getByText('extraction failed').waitFor(WAIT);
    // The request is shown as it is, not folded away behind a click.
    const pageRequest = fields.getByRole('group', { name: 'Request to be sent' });
    expect(await pageRequest.isVisible()).toBe(true);
    expect(await pageRequest.innerText()).toBe(`${sent}\n\n${body}`);
    expect(await page.content()).not.toContain('hunter2-in-the-body');
    await expectAccessible(page, 'approval page with disclosed fields');
    await shot(page, 'approval-disclosed');
    expect((await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'deny', reason: 'cleanup' })).status).toBe(200);
  });

  it('denies with a reason: the agent\'s resume gets denied with that reason', async () => {
    const raised = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'w-17' } });
    expect(raised.status).toBe(202);
    await page.goto(raised.body.approval_url);
    await page.getByRole('heading', { name: 'Delete item w-17' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Deny this request?' });
    await dialog.waitFor(WAIT);
    await expectAccessible(page, 'deny dialog');
    await dialog.getByLabel('Reason').fill('w-17 is the production widget');
    await dialog.getByRole('button', { name: 'Deny with this reason' }).click();
    await page.getByTestId('approval-status').filter({ hasText: 'denied' }).waitFor(WAIT);
    const resume = await agent.call('POST', '/v1/actions/call', { approval_id: raised.body.approval_id });
    expect(resume.status).toBe(200);
    expect(resume.body).toEqual({ status: 'denied', reason: 'w-17 is the production widget', call_id: expect.any(String) });
  });

  it('approves from the inbox with the keyboard alone', async () => {
    const first = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'k-1' } });
    const second = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'k-2' } });
    expect([first.status, second.status]).toEqual([202, 202]);
    await page.goto(`${gw.url}/approvals`);
    await page.getByRole('listitem').filter({ hasText: 'Delete item k-1' }).waitFor(WAIT);
    await page.getByRole('listitem').filter({ hasText: 'Delete item k-2' }).waitFor(WAIT);
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor(WAIT);
    await expectAccessible(page, 'shortcuts help');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached', ...WAIT });
    // Newest first: k-2 is on top. j moves down to k-1; a allows it once.
    await page.keyboard.press('j');
    await page.keyboard.press('a');
    await until(() => approvalStatus(first.body.approval_id), (s) => s === 'allowed', 30_000);
    await page.getByRole('listitem').filter({ hasText: 'Delete item k-1' }).waitFor({ state: 'detached', ...WAIT });
    expect(await approvalStatus(second.body.approval_id)).toBe('pending');
    // d asks for a reason; Enter in the dialog denies.
    await page.keyboard.press('d');
    const dialog = page.getByRole('dialog', { name: 'Deny this request?' });
    await dialog.waitFor(WAIT);
    // A person waits for the dialog to take focus before typing; so does the test.
    await until(() => page.evaluate(activeId), (id) => id === 'deny-reason', 30_000);
    await page.keyboard.type('not today');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await until(() => approvalStatus(second.body.approval_id), (s) => s === 'denied', 30_000);
    expect((await human('GET', `/v1/approvals/${second.body.approval_id}`)).body.reason).toBe('not today');
  });

  it('names the other pending approval a broad tier would cover, and resolves both', async () => {
    const scout = await human('POST', '/v1/identities/agents', { name: 'scout' });
    const call = gw.as(scout.body.key.token);
    const one = await call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'b-1' } });
    const two = await call('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'b-2' } });
    expect([one.status, two.status]).toEqual([202, 202]);
    await page.goto(one.body.approval_url);
    await page.getByRole('heading', { name: 'Create item "b-1"' }).waitFor(WAIT);
    // The narrowest tier (this very name) covers nothing else.
    await page.getByText('It covers no other pending approval.').waitFor(WAIT);
    await page.getByRole('radio', { name: /widgets:create_item:\*/ }).check();
    const list = page.getByRole('list', { name: 'Other pending approvals this tier covers' });
    await list.waitFor(WAIT);
    const other = list.getByRole('checkbox', { name: /Create item "b-2"/ });
    await other.waitFor(WAIT);
    expect(await list.getByRole('listitem').count()).toBe(1);
    await shot(page, 'approval-blast-radius');
    await other.check();
    await page.getByRole('radio', { name: '1 hour' }).check({ force: true });
    await page.getByRole('button', { name: 'Allow & remember' }).click();
    await page.getByText(/1 other approval allowed too/).waitFor(WAIT);
    await until(() => Promise.all([approvalStatus(one.body.approval_id), approvalStatus(two.body.approval_id)]), (s) => s.every((x) => x === 'allowed'), 30_000);
    await until(
      async () => up.requests.filter((r) => r.method === 'POST' && /"name":"b-[12]"/.test(r.body)).length,
      (n) => n === 2,
      30_000,
    );
  });

  it('bubbles an approval up to the person when an agent above could decide it, and offers to bubble it on', async () => {
    // lead may delete items; its own subagent may not: the gap is the subagent, lead the resolver.
    const lead = await human('POST', '/v1/identities/agents', { name: 'lead' });
    expect((await human('POST', `/v1/identities/${lead.body.identity.id}/rules`, { effect: 'allow', pattern: 'widgets:delete_item:*' })).status).toBe(201);
    const helper = await human('POST', '/v1/identities/agents', { name: 'helper', parent_id: lead.body.identity.id });
    const raised = await gw.as(helper.body.key.token)('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'h-1' } });
    expect(raised.status).toBe(202);
    expect((await human('GET', `/v1/approvals/${raised.body.approval_id}`)).body.resolver_id).toBe(lead.body.identity.id);
    await page.goto(raised.body.approval_url);
    await page.getByText('dana › lead › helper').waitFor(WAIT);
    await page.getByRole('button', { name: 'Bubble up' }).click();
    await page.getByTestId('approval-status').filter({ hasText: 'bubbled' }).waitFor(WAIT);
    expect((await human('GET', `/v1/approvals/${raised.body.approval_id}`)).body.resolver_id).not.toBe(lead.body.identity.id);
    await page.getByRole('button', { name: 'Allow once' }).waitFor(WAIT);
    // Past the person it still goes on (issue 29): to their approver, else the org's admins.
    expect(await page.getByRole('button', { name: 'Bubble up' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    await page.getByRole('dialog', { name: 'Deny this request?' }).getByRole('button', { name: 'Deny with this reason' }).click();
    await page.getByTestId('approval-status').filter({ hasText: 'denied' }).waitFor(WAIT);
  });

  it('creates an agent and shows its key once; a reload never shows it again', async () => {
    await page.goto(`${gw.url}/agents`);
    await page.getByRole('heading', { name: 'Agents' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'release-bot agent' }).click();
    await page.getByRole('heading', { name: 'Rules' }).waitFor(WAIT);
    await page.getByText('widgets:create_item:*').waitFor(WAIT);
    await expectAccessible(page, 'agents');
    await shot(page, 'agents');

    await page.getByRole('button', { name: 'New agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'New agent' });
    await dialog.getByLabel('Name').fill('triage-bot');
    await expectAccessible(page, 'new agent dialog');
    await dialog.getByRole('button', { name: 'Create agent' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Key for triage-bot' });
    await keyDialog.waitFor(WAIT);
    const token = await keyDialog.getByLabel('Agent key').inputValue();
    expect(token).toMatch(/^osk_/);
    await expectAccessible(page, 'key shown once');
    await shot(page, 'agents-key-once');
    // The key works.
    const who = await gw.as(token)('GET', '/v1/identities/me');
    expect(who.body.identity.name).toBe('triage-bot');
    await keyDialog.getByRole('button', { name: 'I have stored it' }).click();
    await page.reload();
    await page.getByRole('button', { name: 'triage-bot agent' }).click();
    await page.getByRole('heading', { name: 'Keys' }).waitFor(WAIT);
    await page.getByText(`${token.slice(0, 8)}`).first().waitFor(WAIT).catch(() => undefined);
    expect(await page.content()).not.toContain(token);

    // Revoke goes through a styled confirmation that says what stops working.
    await page.getByRole('button', { name: 'Revoke', exact: true }).first().click();
    const confirm = page.getByRole('dialog', { name: 'Revoke triage-bot?' });
    await confirm.getByText(/every key stops working/).waitFor(WAIT);
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await until(async () => (await gw.as(token)('GET', '/v1/identities/me')).status, (s) => s === 401, 30_000);
  });

  it('lists the MCP clients bound to an agent with last use, the self-approval switch and disconnect', async () => {
    const mcp = await oauthClientToken(gw, owner, 'Claude Desktop', agent.id);
    expect((await gw.as(mcp.access_token)('GET', '/v1/identities/me')).body.identity.name).toBe('release-bot');
    await page.goto(`${gw.url}/agents`);
    await page.getByRole('button', { name: 'release-bot agent' }).click();
    const section = page.getByRole('region', { name: 'MCP clients' });
    await section.getByText('Claude Desktop').waitFor(WAIT);
    await section.getByText(/last used .*ago|last used now/).waitFor(WAIT);
    const toggle = section.getByRole('switch', { name: 'Let it approve its own requests' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    await toggle.click();
    const binding = async () => (await human('GET', '/v1/oauth/bindings')).body.bindings.find((b: any) => b.client_id === mcp.clientId);
    await until(binding, (b) => b.self_approve_enabled === true, 30_000);
    await expectAccessible(page, 'agents with an MCP client');
    await shot(page, 'agents-mcp');
    await section.getByRole('button', { name: 'Disconnect' }).click();
    const confirm = page.getByRole('dialog', { name: 'Disconnect Claude Desktop?' });
    await confirm.getByText(/tokens stop working/).waitFor(WAIT);
    await confirm.getByRole('button', { name: 'Disconnect' }).click();
    await section.getByText('No MCP client is connected').waitFor(WAIT);
    expect((await gw.as(mcp.access_token)('GET', '/v1/identities/me')).status).toBe(401);
  });

  it('History names who decided, the reason given and what became of the call', async () => {
    const denied = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'hist-denied' } });
    const allowed = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'hist-allowed' } });
    expect([denied.status, allowed.status]).toEqual([202, 202]);
    expect((await human('POST', `/v1/approvals/${denied.body.approval_id}/resolve`, { decision: 'deny', reason: 'hist-denied is still in use' })).status).toBe(200);
    expect((await human('POST', `/v1/approvals/${allowed.body.approval_id}/resolve`, { decision: 'allow_once', reason: 'stale test data' })).status).toBe(200);
    await until(async () => (await human('GET', `/v1/approvals/${allowed.body.approval_id}`)).body.execution?.status, (s) => s === 'executed', 30_000);
    await page.goto(`${gw.url}/approvals`);
    await page.getByRole('tab', { name: 'History' }).click();
    const deniedRow = page.getByRole('listitem').filter({ hasText: 'Delete item hist-denied' });
    await deniedRow.getByText(/Decision: denied by dana, /).waitFor(WAIT);
    await deniedRow.getByText('Reason: hist-denied is still in use').waitFor(WAIT);
    expect(await deniedRow.getByText(/^Result:/).count()).toBe(0); // a denied call never ran
    const allowedRow = page.getByRole('listitem').filter({ hasText: 'Delete item hist-allowed' });
    await allowedRow.getByText(/Decision: allowed once by dana, /).waitFor(WAIT);
    await allowedRow.getByText('Reason: stale test data').waitFor(WAIT);
    await allowedRow.getByText('Result: executed, HTTP 200').waitFor(WAIT);
    await expectAccessible(page, 'history');
    await shot(page, 'approvals-history');
  });

  it('refuses a name one of the person\'s agents has, at the name field (creating and renaming); a bad rule pattern shows at its field', async () => {
    /** The message an input points at with aria-describedby (an assertion, not an interaction). */
    const description = async (input: ReturnType<Page['getByLabel']>) => page.locator(`[id="${await input.getAttribute('aria-describedby')}"]`).innerText();
    await page.goto(`${gw.url}/agents`);
    await page.getByRole('button', { name: 'New agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'New agent' });
    const name = dialog.getByLabel('Name');
    await name.fill('Release-Bot');
    await dialog.getByRole('button', { name: 'Create agent' }).click();
    const taken = 'dana already has an agent named "release-bot": choose another name';
    await dialog.getByText(taken).waitFor(WAIT);
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await description(name)).toBe(taken);
    await expectAccessible(page, 'new agent dialog with a name taken');
    await shot(page, 'agents-name-taken');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'scout agent' }).click();
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    const form = page.getByRole('form', { name: 'Rename scout' });
    const field = form.getByLabel('Name');
    await field.fill('LEAD');
    await form.getByRole('button', { name: 'Save name' }).click();
    await form.getByText('dana already has an agent named "lead": choose another name').waitFor(WAIT);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await description(field)).toBe('dana already has an agent named "lead": choose another name');
    await field.fill('scout-renamed');
    await form.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('heading', { name: 'scout-renamed' }).waitFor(WAIT);
    const identities = (await human('GET', '/v1/identities')).body.identities as { name: string }[];
    expect(identities.map((i) => i.name)).toContain('scout-renamed');
    expect(identities.map((i) => i.name)).not.toContain('scout');

    const pattern = page.getByLabel('Pattern');
    await pattern.fill('not a pattern');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByText(/^invalid pattern:/).waitFor(WAIT);
    expect(await pattern.getAttribute('aria-invalid')).toBe('true');
    expect(await description(pattern)).toMatch(/^invalid pattern:/);
    await expectAccessible(page, 'rule pattern refused');
    await pattern.fill('widgets:get_item:*');
    expect(await pattern.getAttribute('aria-invalid')).toBeNull();
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('region', { name: 'Rules' }).getByText('widgets:get_item:*').waitFor(WAIT);
  });

  it('shows a browser notification for a new approval only after the person opts in', async () => {
    // The browser grants the permission (as a person clicking "Allow" would); what the page hands
    // to the browser's own Notification constructor is recorded in the page.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 }, storageState: await context.storageState() });
    await ctx.grantPermissions(['notifications'], { origin: gw.url });
    await ctx.addInitScript(recordNotifications);
    const p = await ctx.newPage();
    const shown = () => p.evaluate(() => (globalThis as unknown as { shownNotifications: ShownNotification[] }).shownNotifications);
    await p.goto(`${gw.url}/approvals`);
    await p.getByText('Live', { exact: true }).waitFor(WAIT);
    const optIn = p.getByRole('button', { name: 'Notify me of new approvals' });
    expect(await optIn.getAttribute('aria-pressed')).toBe('false');

    // Not opted in: the approval arrives live, and no notification is shown.
    const quiet = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'n-quiet' } });
    expect(quiet.status).toBe(202);
    await p.getByRole('listitem').filter({ hasText: 'Delete item n-quiet' }).waitFor(WAIT);
    expect(await shown()).toEqual([]);

    await optIn.click();
    await p.getByRole('button', { name: 'Notifications on' }).and(p.locator('[aria-pressed="true"]')).waitFor(WAIT);
    const loud = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'n-loud' } });
    expect(loud.status).toBe(202);
    await p.getByRole('listitem').filter({ hasText: 'Delete item n-loud' }).waitFor(WAIT);
    const list = await until(shown, (n) => n.length > 0, 30_000);
    expect(list).toEqual([{ title: 'Approval needed', body: 'Delete item n-loud', tag: `/approvals/${loud.body.approval_id}` }]);

    for (const a of [quiet, loud]) expect((await human('POST', `/v1/approvals/${a.body.approval_id}/resolve`, { decision: 'deny', reason: 'cleanup' })).status).toBe(200);
    await ctx.close();
  });

  it('falls back to polling while the event stream is down, and says so', async () => {
    const cut = await browser.newContext({ viewport: { width: 1280, height: 860 }, storageState: await context.storageState() });
    // The stream cannot connect at all (a proxy that drops it, say); the REST API still answers.
    await cut.route('**/v1/events**', (r) => r.abort());
    const p = await cut.newPage();
    await p.goto(`${gw.url}/approvals`);
    await p.getByRole('status').filter({ hasText: 'Offline' }).waitFor(WAIT);
    const raised = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'poll-1' } });
    expect(raised.status).toBe(202);
    await p.getByRole('listitem').filter({ hasText: 'Delete item poll-1' }).waitFor(WAIT);
    expect((await human('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'deny', reason: 'cleanup' })).status).toBe(200);
    await p.getByRole('listitem').filter({ hasText: 'Delete item poll-1' }).waitFor({ state: 'detached', ...WAIT });
    await cut.close();
  });

  it('fits a 390 px wide phone (inbox and approval page) and follows a dark system theme', async () => {
    const gated = await agent.call('POST', '/v1/actions/call', { service: 'widgets', action: 'delete_item', params: { id: 'm-1' } });
    expect(gated.status).toBe(202);
    const phone = await browser.newContext({ ...PHONE, storageState: await context.storageState() });
    const p = await phone.newPage();
    await p.goto(`${gw.url}/approvals`);
    await p.getByRole('listitem').filter({ hasText: 'Delete item m-1' }).waitFor(WAIT);
    expect(await p.evaluate(pageWidth)).toBeLessThanOrEqual(390);
    await expectAccessible(p, 'inbox at 390px');
    await shot(p, 'approvals-mobile');
    await p.goto(gated.body.approval_url);
    await p.getByRole('button', { name: 'Allow once' }).waitFor(WAIT);
    expect(await p.evaluate(pageWidth)).toBeLessThanOrEqual(390);
    await expectAccessible(p, 'approval page at 390px');
    await shot(p, 'approval-mobile');
    await phone.close();

    const dark = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'dark', storageState: await context.storageState() });
    const d = await dark.newPage();
    await d.goto(gated.body.approval_url);
    await d.getByRole('button', { name: 'Allow once' }).waitFor(WAIT);
    await expectAccessible(d, 'approval page, dark');
    await shot(d, 'approval-dark');
    await d.getByRole('button', { name: 'Allow once' }).click();
    await d.getByTestId('execution-status').filter({ hasText: 'executed' }).waitFor(WAIT);
    await dark.close();
  });
});
