// The admin's half of the dashboard in real Chromium against a real gateway (PostgreSQL,
// Temporal): secrets (create, rotate, timeline, restore, delete naming its users) with the
// plaintext searched for in every page's text and every network response; a connection to a real
// OAuth provider (oidc-provider on loopback) completed from the page; a webhook to a loopback
// receiver getting a signed test event, its delivery log, redelivery and a failing endpoint's
// next retry; settings and OAuth client revocation. axe-core on every page; screenshots.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../core/webhooks/signing.ts';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startOAuthProvider, type TestProvider } from '../support/oauth-provider.ts';
import { oauthClientToken } from '../support/oauth-token.ts';
import { pageWidth, PHONE } from '../support/phone.ts';
import { startReceiver } from '../support/receiver.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };
const PLAINTEXT_1 = 'sk_live_FIRST_plaintext_7c1e0b';
const PLAINTEXT_2 = 'sk_live_SECOND_plaintext_93ad44';

describe("the admin's dashboard", () => {
  let gw: TestGateway;
  let up: Upstream;
  let op: TestProvider;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: ReturnType<TestGateway['as']>;
  /** Every response body the browser received (event streams excepted: they never end). */
  const bodies: Promise<string>[] = [];

  const expectAccessible = async (where: string) => {
    expect(await seriousViolations(page), where).toEqual([]);
  };
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    up = await startUpstream();
    receiver = await startReceiver();
    gw = await startTestGateway({ realPublicUrl: true });
    op = await startOAuthProvider(`${gw.url}/v1/connections/callback`, 3600);
    admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    context.on('console', (m) => {
      if (m.type() === 'error' && !m.text().includes('status of 401')) console.error('browser console:', m.text());
    });
    context.on('response', (r) => {
      if ((r.headers()['content-type'] ?? '').includes('text/event-stream')) return;
      bodies.push(r.text().catch(() => ''));
    });
    await page.goto(`${gw.url}/secrets`);
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/secrets`, WAIT);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `dashboard-admin-failure-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await op?.stop();
    await receiver?.close();
    await up?.close();
  });

  it('creates, rotates and restores a secret; its value is never in a page, a response or a log line', async () => {
    await page.getByRole('heading', { name: 'Secrets' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'New secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'New secret' });
    await dialog.getByLabel('Name').fill('WIDGETS_KEY');
    await dialog.getByLabel('Value').fill(PLAINTEXT_1);
    expect(await dialog.getByLabel('Value').getAttribute('type')).toBe('password');
    await dialog.getByLabel('Description (optional)').fill('API key of the widgets service');
    await dialog.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Created WIDGETS_KEY.' }).waitFor(WAIT);
    const row = page.getByRole('row').filter({ has: page.getByText('WIDGETS_KEY', { exact: true }) });
    // Which services use it: the widgets template names WIDGETS_KEY as its default secret.
    await row.getByText('widgets', { exact: true }).waitFor(WAIT);

    await page.getByRole('button', { name: 'Rotate WIDGETS_KEY' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate WIDGETS_KEY' });
    await rotate.getByLabel('Value').fill(PLAINTEXT_2);
    await rotate.getByRole('button', { name: 'Rotate' }).click();
    await page.getByRole('status').filter({ hasText: 'Rotated WIDGETS_KEY to version 2.' }).waitFor(WAIT);
    await row.getByRole('cell', { name: '2', exact: true }).waitFor(WAIT);

    await page.getByRole('button', { name: 'Versions of WIDGETS_KEY' }).click();
    const timeline = page.getByRole('list', { name: 'Versions of WIDGETS_KEY' });
    await timeline.getByRole('listitem').filter({ hasText: 'Version 2' }).getByText('current').waitFor(WAIT);
    await expectAccessible('secrets with a version timeline');
    await shot('secrets');
    await page.getByRole('button', { name: 'Restore version 1 of WIDGETS_KEY' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored version 1 of WIDGETS_KEY as version 3.' }).waitFor(WAIT);
    await timeline.getByRole('listitem').filter({ hasText: 'Version 3' }).getByText('restored from version 1').waitFor(WAIT);
    const secrets = (await admin('GET', '/v1/secrets')).body.secrets;
    expect(secrets.find((s: { name: string }) => s.name === 'WIDGETS_KEY').current_version).toBe(3);

    // Search by a service that uses it, then by something nothing matches.
    await page.getByLabel('Search').fill('widg');
    await row.waitFor(WAIT);
    await page.getByLabel('Search').fill('nothing-like-this');
    await page.getByText('No secret matches').waitFor(WAIT);
    await page.getByLabel('Search').fill('');

    // Delete warns with the services that use it; cancelling keeps it.
    await page.getByRole('button', { name: 'Delete WIDGETS_KEY' }).click();
    const del = page.getByRole('dialog', { name: 'Delete WIDGETS_KEY?' });
    await del.getByText(/The service widgets uses WIDGETS_KEY/).waitFor(WAIT);
    await expectAccessible('delete warning');
    await shot('secrets-delete');
    await del.getByRole('button', { name: 'Cancel' }).click();
    await del.waitFor({ state: 'hidden', ...WAIT });
  });

  /** The provider's own sign-in and consent pages (oidc-provider's development interactions), until back on the page. */
  async function throughProvider() {
    await page.waitForURL((u) => u.origin === op.issuer, WAIT);
    for (let step = 0; step < 6; step++) {
      await page.waitForURL((u) => u.origin === op.issuer || u.pathname === '/connections', WAIT);
      if (new URL(page.url()).origin !== op.issuer) break;
      await page.waitForLoadState('domcontentloaded');
      const before = page.url();
      if (await page.locator('input[name="login"]').isVisible()) {
        await page.locator('input[name="login"]').fill('carol');
        await page.locator('input[name="password"]').fill('any');
        await page.getByRole('button', { name: /sign-in/i }).click();
      } else if (await page.getByRole('button', { name: /continue/i }).isVisible()) {
        await page.getByRole('button', { name: /continue/i }).click();
      }
      await page.waitForURL((u) => u.href !== before, WAIT);
    }
    await page.waitForURL((u) => u.origin === new URL(gw.url).origin && u.pathname === '/connections', WAIT);
  }

  it('completes a connection at a real OAuth provider from the page, adds a scope the same way, and shows its scopes', async () => {
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'Connections', exact: true }).waitFor(WAIT);
    await page.getByRole('button', { name: 'New OAuth app' }).click();
    const app = page.getByRole('dialog', { name: 'New OAuth app' });
    await app.getByLabel('Provider').fill('acme');
    await app.getByLabel('Client ID').fill(op.clientId);
    await app.getByLabel('Client secret').fill(op.clientSecret);
    await app.getByLabel('Authorization URL').fill(`${op.issuer}/auth`);
    await app.getByLabel('Token URL').fill(`${op.issuer}/token`);
    await app.getByRole('button', { name: 'Save OAuth app' }).click();
    await page.getByRole('row').filter({ hasText: op.clientId }).getByText('stored (never shown)').waitFor(WAIT);

    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    const connect = page.getByRole('dialog', { name: 'Connect' });
    await connect.getByLabel('Provider').fill('acme');
    await connect.getByLabel('Name (optional)').fill('acme-main');
    await connect.getByLabel('Scopes (space-separated)').fill('openid');
    await connect.getByRole('button', { name: 'Continue to provider' }).click();
    await throughProvider();
    // Back on the page with the result.
    await page.getByRole('status').filter({ hasText: 'Connected acme-main (acme) with scopes openid.' }).waitFor(WAIT);
    const item = page.getByRole('listitem', { name: 'Connection acme-main' });
    await item.getByText('active', { exact: true }).waitFor(WAIT);
    await item.getByTestId('granted-scopes').getByText('openid', { exact: true }).waitFor(WAIT);

    // Add a scope: the upgrade goes to the provider and back; the connection now holds both.
    await item.getByRole('button', { name: 'Add scopes' }).click();
    const more = page.getByRole('dialog', { name: 'Add scopes to acme-main' });
    await more.getByLabel('Scopes (space-separated)').fill('email');
    await more.getByRole('button', { name: 'Continue to provider' }).click();
    await throughProvider();
    await page.getByRole('status').filter({ hasText: 'Connected acme-main (acme) with scopes openid, email.' }).waitFor(WAIT);
    const conn = (await admin('GET', '/v1/connections')).body.connections.find((c: { name: string }) => c.name === 'acme-main');
    expect(conn).toMatchObject({ status: 'active', provider: 'acme' });
    expect([...conn.granted_scopes].sort()).toEqual(['email', 'openid']);
    for (const scope of conn.granted_scopes) await item.getByTestId('granted-scopes').getByText(scope, { exact: true }).waitFor(WAIT);

    await expectAccessible('connections');
    await shot('connections');

    const grantsBefore = op.success.get('refresh_token') ?? 0;
    await item.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('status').filter({ hasText: 'Refreshed acme-main.' }).waitFor(WAIT);
    expect(op.success.get('refresh_token') ?? 0).toBe(grantsBefore + 1);

    // The grant is revoked at the provider: the next refresh fails, the page says reauth
    // required and offers Reconnect, which goes through the provider again.
    const grantId = op.issued.filter((x) => x.grantType === 'authorization_code').at(-1)?.grantId;
    expect(grantId).toBeTruthy();
    await (await op.provider.Grant.find(grantId!))!.destroy();
    await item.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('alert').filter({ hasText: 'acme-main must be authorized again at acme' }).waitFor(WAIT);
    await item.getByText('reauth required', { exact: true }).waitFor(WAIT);
    await expectAccessible('connection needing reauthorization');
    await shot('connections-reauth');
    await item.getByRole('button', { name: 'Reconnect' }).click();
    await throughProvider();
    await page.getByRole('status').filter({ hasText: 'Connected acme-main (acme)' }).waitFor(WAIT);
    await item.getByText('active', { exact: true }).waitFor(WAIT);
    expect((await admin('GET', `/v1/connections/${conn.id}`)).body.connection.status).toBe('active');
  });

  it('sends a signed test event to a loopback receiver, logs it, redelivers it, and shows a failing endpoint retrying', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor(WAIT);
    await page.getByRole('button', { name: 'New webhook' }).click();
    const form = page.getByRole('dialog', { name: 'New webhook' });
    await form.getByLabel('Endpoint URL').fill(`${receiver.url}/ok`);
    await form.getByLabel('Description (optional)').fill('Ops alerts');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    const once = page.getByRole('dialog', { name: 'Signing secret' });
    const secret = await once.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expectAccessible('signing secret shown once');
    await shot('webhooks-secret-once');
    await once.getByRole('button', { name: 'I have stored it' }).click();
    await once.waitFor({ state: 'hidden', ...WAIT });

    const hook = page.getByRole('listitem', { name: `Webhook ${receiver.url}/ok` });
    await hook.getByRole('button', { name: 'Send test event' }).click();
    await until(async () => receiver.received.filter((r) => r.path === '/ok').length, (n) => n >= 1, 30_000);
    const first = receiver.received.find((r) => r.path === '/ok')!;
    expect(JSON.parse(first.body)).toMatchObject({ type: 'webhook.test' });
    expect(verify(first.headers as Record<string, string>, first.body, secret)).toBe(true);
    const log = page.getByRole('region', { name: 'Delivery log' }).or(page.locator('section[aria-labelledby="log-heading"]'));
    const logRow = log.getByRole('row').filter({ hasText: 'webhook.test' });
    await logRow.getByText('delivered').waitFor(WAIT);
    await logRow.getByText('HTTP 200').waitFor(WAIT);

    await logRow.getByRole('button', { name: 'Redeliver webhook.test event' }).click();
    await until(async () => receiver.received.filter((r) => r.path === '/ok').length, (n) => n >= 2, 30_000);
    const second = receiver.received.filter((r) => r.path === '/ok')[1]!;
    expect(second.body).toBe(first.body);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(verify(second.headers as Record<string, string>, second.body, secret)).toBe(true);
    await logRow.getByRole('cell', { name: '2', exact: true }).waitFor(WAIT);

    // An endpoint that answers 503: the log shows it retrying, with its next attempt.
    await page.getByRole('button', { name: 'New webhook' }).click();
    await form.getByLabel('Endpoint URL').fill(`${receiver.url}/fail`);
    await form.getByRole('button', { name: 'Create webhook' }).click();
    await once.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('listitem', { name: `Webhook ${receiver.url}/fail` }).getByRole('button', { name: 'Send test event' }).click();
    const failing = log.getByRole('row').filter({ hasText: 'webhook.test' });
    await failing.getByText('retrying').waitFor(WAIT);
    await failing.getByText('HTTP 503').waitFor(WAIT);
    await expectAccessible('webhooks with a delivery log');
    await shot('webhooks');
    const hooks = (await admin('GET', '/v1/webhooks')).body.webhooks as { id: string; url: string }[];
    const failingId = hooks.find((h) => h.url.endsWith('/fail'))!.id;
    const events = (await admin('GET', `/v1/webhooks/${failingId}/events`)).body.events;
    expect(events[0]).toMatchObject({ event_type: 'webhook.test', state: 'retrying', last_status_code: 503 });
    // Stop the retries: deleting it from the page.
    await page.getByRole('listitem', { name: `Webhook ${receiver.url}/fail` }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this webhook?' }).getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByRole('listitem', { name: `Webhook ${receiver.url}/fail` }).waitFor({ state: 'detached', ...WAIT });
  });

  it('changes the approval clocks, lists members (managed on People) and revokes an OAuth client', async () => {
    const mcp = await oauthClientToken(gw, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, 'Claude Desktop');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor(WAIT);
    await page.getByLabel('Approval expires after (minutes)').fill('30');
    await page.getByLabel('Bubble up undecided approvals').check();
    await page.getByLabel('Bubble up after (minutes)').fill('10');
    await page.getByLabel('Pending approvals per agent, at most').fill('7');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor(WAIT);
    expect((await admin('GET', '/v1/org/settings')).body).toMatchObject({
      approval_ttl_seconds: 1800,
      approval_auto_bubble_seconds: 600,
      max_pending_per_agent: 7,
      rate_limit_per_minute: gw.config.rateLimitPerMinute,
      pending_deduplication: true,
    });
    await page.getByText(`${gw.config.rateLimitPerMinute} calls per minute per identity`).waitFor(WAIT);
    const members = page.locator('section[aria-labelledby="members-heading"]');
    await members.getByRole('row').filter({ hasText: ADMIN_EMAIL }).getByText('admin', { exact: true }).waitFor(WAIT);
    // Managed on Settings → People (issue 29).
    await members.getByRole('link', { name: 'People' }).waitFor(WAIT);
    await expectAccessible('settings');
    await shot('settings');

    expect((await gw.as(mcp.access_token)('GET', '/v1/identities/me')).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke Claude Desktop' }).click();
    await page.getByRole('dialog', { name: 'Revoke Claude Desktop?' }).getByRole('button', { name: 'Revoke client' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked Claude Desktop.' }).waitFor(WAIT);
    expect((await gw.as(mcp.access_token)('GET', '/v1/identities/me')).status).toBe(401);
  });

  it('never showed or sent the secret values: every page text, every response, every log line', async () => {
    // Visit every page once more (the approver's too) and read the whole rendered text.
    for (const [href, heading] of [['/secrets', 'Secrets'], ['/connections', 'Connections'], ['/webhooks', 'Webhooks'], ['/settings', 'Settings'], ['/approvals', 'Approvals'], ['/agents', 'Agents']] as const) {
      await page.goto(`${gw.url}${href}`);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor(WAIT);
      await page.waitForLoadState('networkidle').catch(() => undefined);
      const html = await page.content();
      const text = await page.locator('body').innerText();
      for (const secret of [PLAINTEXT_1, PLAINTEXT_2]) {
        expect(html, href).not.toContain(secret);
        expect(text, href).not.toContain(secret);
      }
    }
    const all = await Promise.all(bodies);
    expect(all.length).toBeGreaterThan(20);
    for (const secret of [PLAINTEXT_1, PLAINTEXT_2, op.clientSecret]) {
      expect(all.filter((b) => b.includes(secret))).toEqual([]);
      expect(gw.logs.filter((l) => l.includes(secret))).toEqual([]);
    }
    // A phone: the pages fit 390 px (the navigation is behind a Menu button there).
    const phone = await browser.newContext({ ...PHONE, storageState: await context.storageState() });
    const p = await phone.newPage();
    for (const href of ['/secrets', '/connections', '/webhooks', '/settings']) {
      await p.goto(`${gw.url}${href}`);
      await p.getByRole('heading', { level: 1 }).waitFor(WAIT);
      await p.waitForLoadState('networkidle').catch(() => undefined);
      if (href === '/secrets') await p.screenshot({ path: path.join(SHOTS, 'secrets-mobile.png'), fullPage: true });
      expect(await p.evaluate(pageWidth), href).toBeLessThanOrEqual(390);
      expect(await seriousViolations(p), `${href} at 390px`).toEqual([]);
    }
    await phone.close();

    // The vault holds it: a call through the gateway injects the restored (first) value.
    expect((await admin('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: '1' } })).status).toBe(200);
    expect(up.requests.at(-1)?.headers['x-api-key']).toBe(PLAINTEXT_1);
  });
});
