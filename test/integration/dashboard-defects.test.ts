// Defects testers reported in the dashboard (items 8, 9 and 18), each shown in real Chromium
// against a real gateway (PostgreSQL, Temporal, a loopback upstream, an SMTP capture): refused
// notice forms name the field and why next to the control; an approval's target keeps its query
// string everywhere; People has its navigation entry; role changes are asked first and a refused
// one leaves nothing stale; a deactivated person is told so (only with the right password);
// "Bubble up" is offered only when someone is above; an edited allow's headline is what ran;
// removing a notice channel is asked first; email confirmation pages show times for people.
// axe-core on each page; screenshots.
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium } from '../support/chromium.ts';
import { runGatewayCli } from '../support/cli.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startSmtpCapture, type SmtpCapture } from '../support/smtp.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };
type As = ReturnType<TestGateway['as']>;

describe('dashboard defects (items 8, 9, 18)', () => {
  let gw: TestGateway;
  let up: Upstream;
  let smtp: SmtpCapture;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: As;
  let agent: { id: string; call: As };

  const shot = (p: Page, name: string) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const accessible = async (p: Page, where: string) => expect(await seriousViolations(p), where).toEqual([]);
  const makeAgent = async (as: As, body: Record<string, unknown>) => {
    const res = await as('POST', '/v1/identities/agents', body);
    expect(res.status, res.text).toBe(201);
    return { id: res.body.identity.id as string, call: gw.as(res.body.key.token) };
  };
  const raise = async (caller: As, body: Record<string, unknown>) => {
    const res = await caller('POST', '/v1/actions/call', body);
    expect(res.status, res.text).toBe(202);
    return res.body.approval_id as string;
  };
  /** Invites `email` as `role` and joins with a password. */
  const join = async (email: string, role: string) => {
    const inv = await admin('POST', '/v1/org/invitations', { email, role });
    expect(inv.status, inv.text).toBe(201);
    const name = email.split('@')[0]!.replace(/^./, (c) => c.toUpperCase());
    const password = `${name} has a long password`;
    const joined = await gw.request('POST', '/v1/invitations/accept', { body: { token: inv.body.token, name, password } });
    expect(joined.status, joined.text).toBe(200);
    return { id: joined.body.member.id as string, name, email, password, as: gw.as(joined.body.token) };
  };
  /** The vertical gap in px between two elements' boxes (0 when they overlap). */
  const gap = async (a: Locator, b: Locator) => {
    const [x, y] = [(await a.boundingBox())!, (await b.boundingBox())!];
    return Math.max(0, y.y - (x.y + x.height), x.y - (y.y + y.height));
  };
  /** A control's refusal is next to it: aria-invalid, and aria-describedby names the shown message. */
  const refusedAt = async (control: Locator, reason: RegExp) => {
    await until(() => control.getAttribute('aria-invalid'), (v) => v === 'true');
    const ids = (await control.getAttribute('aria-describedby'))!.split(' ');
    const texts = await Promise.all(ids.map((id) => page.locator(`#${id}`).innerText()));
    expect(texts.join(' ')).toMatch(reason);
    expect(await gap(control, page.locator(`#${ids[0]}`))).toBeLessThan(24);
  };

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    [up, smtp] = await Promise.all([startUpstream(), startSmtpCapture()]);
    gw = await startTestGateway({ realPublicUrl: true, env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_dashboard_defects' })).status).toBe(201);
    // The built-in Stripe template with its server at the loopback upstream (an amount to edit).
    const stripe = parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', 'services', 'stripe.yaml'), 'utf8')) as Record<string, unknown>;
    stripe.servers = [{ url: up.url }];
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: stripe })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'STRIPE_SECRET_KEY', value: 'sk_test_defects_4b2' })).status).toBe(201);
    agent = await makeAgent(admin, { name: 'ops-bot' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
    page = await context.newPage();
    await page.goto(`${gw.url}/settings`);
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${gw.url}/settings`, WAIT);
  }, 180_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `defects-failure-${ctx.task.name.slice(0, 30).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await Promise.all([up?.close(), smtp?.close()]);
  });

  it('8: a refused notice channel, rule or reminder names the field and why at its control, and sums it up by the button', async () => {
    await page.goto(`${gw.url}/settings`);
    const section = page.getByRole('region', { name: 'Approval notices' });
    const form = section.getByRole('form', { name: 'Add a channel' });
    await form.getByLabel('Channel name').fill('Team Slack');
    await form.getByLabel('Bot token').fill('not-a-token');
    await form.getByLabel('Signing secret').fill('zz');
    const add = form.getByRole('button', { name: 'Add channel' });
    await add.click();
    await refusedAt(form.getByLabel('Bot token'), /must be a Slack bot token \(xoxb-…\)/);
    await refusedAt(form.getByLabel('Signing secret'), /must be the app's signing secret \(hex\)/);
    expect(await form.getByLabel('Channel name').getAttribute('aria-invalid')).toBeNull();
    const summary = form.getByRole('alert').filter({ hasText: 'The channel was not added.' });
    expect(await summary.innerText()).toMatch(/Bot token: must be a Slack bot token.*Signing secret: must be the app's signing secret/s);
    expect(await gap(add, summary)).toBeLessThan(40);
    expect(await section.getByText('the request is not valid').count()).toBe(0);
    expect((await admin('GET', '/v1/notification-channels')).body.channels).toEqual([]);
    await accessible(page, 'channel form refused');
    await shot(page, 'settings-notices-refused');

    // A valid channel, then a rule whose service is too long, and a reminder that is no reminder.
    await form.getByLabel('Email (SMTP)').check();
    await form.getByLabel('Channel name').fill('Mail');
    await form.getByLabel('SMTP host').fill(smtp.host);
    await form.getByLabel('Port').fill(String(smtp.port));
    await form.getByLabel('Require STARTTLS').uncheck();
    await form.getByLabel(/SMTP user/).fill(smtp.user);
    await form.getByLabel('SMTP password').fill(smtp.password);
    await form.getByLabel('From address').fill('gateway@example.test');
    await add.click();
    await section.getByRole('status').filter({ hasText: 'Added email channel Mail.' }).waitFor(WAIT);
    expect(await form.getByLabel('Bot token').count()).toBe(0);
    expect(await form.getByRole('alert').count()).toBe(0);

    const rule = section.getByRole('form', { name: 'Add a rule' });
    await rule.getByLabel('Rule name').fill('widgets by mail');
    await rule.getByLabel(/^Service/).fill('w'.repeat(201));
    await rule.getByLabel('Send to channel').selectOption({ label: 'Mail' });
    await rule.getByRole('button', { name: 'Add rule' }).click();
    await refusedAt(rule.getByLabel(/^Service/), /200/);
    expect(await rule.getByRole('alert').innerText()).toMatch(/The rule was not added\. Service: /);
    expect((await admin('GET', '/v1/notification-rules')).body.rules).toEqual([]);

    await section.getByLabel('Remind the resolver at').fill('half, 2x');
    const save = section.getByRole('button', { name: 'Save reminders' });
    await save.click();
    await refusedAt(section.getByLabel('Remind the resolver at'), /"2x" must be "half"/);
    const remindersAlert = section.getByRole('alert').filter({ hasText: 'The reminders were not saved.' });
    expect(await remindersAlert.innerText()).toContain('Remind the resolver at: "2x" must be');
    expect(await gap(save, remindersAlert)).toBeLessThan(40);
    await accessible(page, 'rule and reminders refused');
  });

  it('8: `gateway notices` prints the field and the reason of a refusal', async () => {
    const home = path.join(os.tmpdir(), `gateway-defects-cli-${process.pid}`);
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), GATEWAY_URL: gw.url, GATEWAY_TOKEN: gw.adminToken };
    const slack = await runGatewayCli(['notices', 'add-slack', '--name', 'CLI Slack'], { env, stdin: 'not-a-token\nzz\n' });
    expect(slack.code).toBe(2);
    expect(slack.stderr).toContain('the request is not valid (invalid_request)');
    expect(slack.stderr).toMatch(/^ {2}slack\.bot_token: must be a Slack bot token \(xoxb-…\)$/m);
    expect(slack.stderr).toMatch(/^ {2}slack\.signing_secret: must be the app's signing secret \(hex\)$/m);
    expect(slack.stderr + slack.stdout).not.toContain('not-a-token');
    const reminders = await runGatewayCli(['notices', 'reminders', 'half', '2x'], { env });
    expect(reminders.code).toBe(2);
    expect(reminders.stderr).toMatch(/^ {2}reminders\.1: must be "half"/m);
    expect((await admin('GET', '/v1/notification-channels')).body.channels.some((c: { name: string }) => c.name === 'CLI Slack')).toBe(false);
  });

  it('9: the inbox row, the approval page and the history show the query string the call sends', async () => {
    const target = `${up.url}/live/4?x=1`;
    const id = await raise(agent.call, { service: 'http', method: 'GET', path: target });
    const view = await admin('GET', `/v1/approvals/${id}`);
    expect(view.body.action).toMatchObject({ description: `GET ${target}`, request: { method: 'GET', url: target, params: { x: '1' } } });

    await page.goto(`${gw.url}/approvals`);
    const row = page.locator(`[data-approval-id="${id}"]`);
    await row.getByRole('link', { name: `GET ${target}` }).waitFor(WAIT);
    expect(await row.getByRole('group', { name: 'Request to be sent' }).innerText()).toContain(`GET ${target}`);
    await accessible(page, 'inbox');
    await shot(page, 'approvals-query-string');
    await row.getByRole('link', { name: `GET ${target}` }).click();
    await page.getByRole('heading', { level: 1, name: `GET ${target}` }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Allow once' }).click();
    await page.getByRole('status').filter({ hasText: 'Allowed once.' }).waitFor(WAIT);
    const sent = await until(async () => up.requests.filter((r) => r.url.startsWith('/live/4')), (r) => r.length === 1);
    expect(sent[0]!.url).toBe('/live/4?x=1');

    await page.goto(`${gw.url}/approvals`);
    await page.getByRole('tab', { name: 'History' }).click();
    await page.locator(`[data-approval-id="${id}"]`).getByRole('link', { name: `GET ${target}` }).waitFor(WAIT);
  });

  it('18: People has its own navigation entry, current on the People page, and the bar still fits 1280 px', async () => {
    await raise(agent.call, { service: 'widgets', action: 'create_item', params: { name: 'badge-in-the-bar' } });
    await page.goto(`${gw.url}/approvals`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    // With the pending badge, the last entry ends before the live indicator and the identity menu begin.
    await nav.getByRole('link', { name: /^Approvals \d/ }).waitFor(WAIT);
    const settings = (await nav.getByRole('link', { name: 'Settings', exact: true }).boundingBox())!;
    const live = (await page.getByRole('status').filter({ hasText: 'Live' }).boundingBox())!;
    expect(settings.x + settings.width).toBeLessThanOrEqual(live.x);
    const identity = (await page.getByRole('button', { name: /Administrator/ }).boundingBox())!;
    expect(identity.x + identity.width).toBeLessThanOrEqual(1280);
    await nav.getByRole('link', { name: 'People', exact: true }).click();
    await page.waitForURL(`${gw.url}/settings/people`, WAIT);
    await page.getByRole('heading', { name: 'People', exact: true }).waitFor(WAIT);
    expect(await nav.getByRole('link', { name: 'People', exact: true }).getAttribute('aria-current')).toBe('page');
    expect(await nav.getByRole('link', { name: 'Settings', exact: true }).getAttribute('aria-current')).toBeNull();
    // A member sees the entry too (the list is read-only for them).
    const mia = await join('mia@example.test', 'member');
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await other.newPage();
    await p.goto(`${gw.url}/approvals`);
    await p.getByLabel('Email').fill(mia.email);
    await p.getByLabel('Password').fill(mia.password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.getByRole('navigation').getByRole('link', { name: 'People', exact: true }).click();
    await p.getByRole('region', { name: 'People table' }).getByText(mia.email).waitFor(WAIT);
    expect(await p.getByRole('navigation').getByRole('link', { name: 'Settings', exact: true }).count()).toBe(0);
    await other.close();
  });

  it('18: a role change is asked first; a refused one puts the dropdown back and leaves no stale success', async () => {
    const sam = await join('sam@example.test', 'member');
    await page.goto(`${gw.url}/settings/people`);
    const samRole = page.getByLabel(`Role of ${sam.name}`);
    await samRole.selectOption('approver');
    const ask = page.getByRole('dialog', { name: `Make ${sam.name} an approver?` });
    await ask.waitFor(WAIT);
    expect(await ask.innerText()).toContain('It applies at once.');
    await accessible(page, 'role change asked');
    await shot(page, 'people-role-confirm');
    // Asking changed nothing; Cancel leaves the role and the dropdown as they were.
    expect((await admin('GET', '/v1/org/members')).body.members.find((m: { id: string }) => m.id === sam.id).role).toBe('member');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'hidden' });
    expect(await samRole.inputValue()).toBe('member');

    await samRole.selectOption('approver');
    await ask.getByRole('button', { name: 'Change the role' }).click();
    await page.getByRole('status').filter({ hasText: `${sam.name}: role approver.` }).waitFor(WAIT);
    expect(await samRole.inputValue()).toBe('approver');

    // The only admin demoting themself: refused (last_admin), said in the dialog by its button.
    const me = (await admin('GET', '/v1/identities/me')).body.identity;
    const myRole = page.getByLabel(`Role of ${me.name}`);
    await myRole.selectOption('member');
    const demote = page.getByRole('dialog', { name: `Make ${me.name} a member?` });
    await demote.getByRole('button', { name: 'Change the role' }).click();
    await demote.getByRole('alert').filter({ hasText: 'last admin' }).waitFor(WAIT);
    expect(await page.getByRole('status').filter({ hasText: 'role approver' }).count()).toBe(0);
    await accessible(page, 'role change refused');
    await shot(page, 'people-role-refused');
    await demote.getByRole('button', { name: 'Cancel' }).click();
    await demote.waitFor({ state: 'hidden' });
    expect(await myRole.inputValue()).toBe('admin');
    expect((await admin('GET', '/v1/identities/me')).body.identity.role).toBe('admin');
    // Opened again, the dialog asks afresh (no refusal of before on show).
    await myRole.selectOption('approver');
    const again = page.getByRole('dialog', { name: `Make ${me.name} an approver?` });
    await again.waitFor(WAIT);
    expect(await again.getByRole('alert').count()).toBe(0);
    await again.getByRole('button', { name: 'Cancel' }).click();
    expect(await myRole.inputValue()).toBe('admin');
  });

  it('18: a deactivated person who gives the right password is told the account was deactivated; a wrong password says nothing of it', async () => {
    const dee = await join('dee@example.test', 'member');
    expect((await admin('POST', `/v1/org/members/${dee.id}/deactivate`)).status).toBe(200);
    const wrong = await gw.request('POST', '/v1/auth/login', { body: { email: dee.email, password: 'not the password at all' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toEqual({ code: 'unauthenticated', message: 'wrong email or password' });
    const right = await gw.request('POST', '/v1/auth/login', { body: { email: dee.email, password: dee.password } });
    expect(right.status).toBe(403);
    expect(right.body.error.code).toBe('account_deactivated');
    expect(right.headers.get('set-cookie')).toBeNull();

    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await other.newPage();
    await p.goto(`${gw.url}/signin`);
    await p.getByLabel('Email').fill(dee.email);
    await p.getByLabel('Password').fill(dee.password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.getByRole('alert').filter({ hasText: 'This account was deactivated by an admin of your organisation.' }).waitFor(WAIT);
    expect(await p.getByText('do not match').count()).toBe(0);
    await accessible(p, 'deactivated sign-in');
    await shot(p, 'signin-deactivated');
    await p.getByLabel('Password').fill('not the password at all');
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.getByRole('alert').filter({ hasText: 'That email and password do not match an account.' }).waitFor(WAIT);
    await other.close();
  });

  it('18: "Bubble up" is offered only when someone is above where the approval sits', async () => {
    // The only admin's own agent: the approval sits with them and nobody is above.
    const top = await raise(agent.call, { service: 'widgets', action: 'create_item', params: { name: 'top' } });
    expect((await admin('GET', `/v1/approvals/${top}`)).body.can_bubble).toBe(false);
    const refused = await admin('POST', `/v1/approvals/${top}/resolve`, { decision: 'bubble' });
    expect(refused.status).toBe(409);
    // A sub-agent's whose parent agent may create items: the parent decides first, the admin is above.
    const lead = await makeAgent(admin, { name: 'lead-bot' });
    expect((await admin('POST', `/v1/identities/${lead.id}/rules`, { effect: 'allow', pattern: 'widgets:create_item:*' })).status).toBe(201);
    const child = await makeAgent(admin, { name: 'lead-helper', parent_id: lead.id });
    const inChain = await raise(child.call, { service: 'widgets', action: 'create_item', params: { name: 'in-chain' } });
    expect((await admin('GET', `/v1/approvals/${inChain}`)).body).toMatchObject({ resolver_id: lead.id, can_bubble: true });
    // A member's agent: with the member, the org's admins are above.
    const kim = await join('kim@example.test', 'member');
    const kimAgent = await makeAgent(kim.as, { name: 'kim-bot' });
    const kims = await raise(kimAgent.call, { service: 'widgets', action: 'create_item', params: { name: 'kims' } });
    expect((await kim.as('GET', `/v1/approvals/${kims}`)).body.can_bubble).toBe(true);

    await page.goto(`${gw.url}/approvals/${top}`);
    await page.getByRole('button', { name: 'Allow once' }).waitFor(WAIT);
    expect(await page.getByRole('button', { name: 'Bubble up' }).count()).toBe(0);
    await page.goto(`${gw.url}/approvals/${inChain}`);
    await page.getByRole('button', { name: 'Bubble up' }).waitFor(WAIT);
    // Bubbled to the admin (the chain's top), nobody is above any more.
    await page.getByRole('button', { name: 'Bubble up' }).click();
    await page.getByRole('status').filter({ hasText: 'Bubbled up.' }).waitFor(WAIT);
    await until(async () => (await admin('GET', `/v1/approvals/${inChain}`)).body.can_bubble, (v) => v === false);
    await page.reload();
    await page.getByRole('button', { name: 'Allow once' }).waitFor(WAIT);
    expect(await page.getByRole('button', { name: 'Bubble up' }).count()).toBe(0);
    await accessible(page, 'approval without bubble up');
  });

  it('18: after an allow with an edited amount, the headline says what ran', async () => {
    const id = await raise(agent.call, { service: 'stripe', action: 'create_refund', params: { payment_intent: 'pi_123', amount: 5000 } });
    const resolved = await admin('POST', `/v1/approvals/${id}/resolve`, { decision: 'allow_once', params: { payment_intent: 'pi_123', amount: 50 } });
    expect(resolved.status, resolved.text).toBe(200);
    await page.goto(`${gw.url}/approvals/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Refund 50 of payment pi_123' }).waitFor(WAIT);
    expect(await page.title()).toContain('Refund 50 of payment pi_123');
    expect(await page.getByRole('region', { name: 'Allowed with changes' }).innerText()).toContain('The agent asked for: Refund 5000 of payment pi_123');
    await accessible(page, 'edited approval');
    await shot(page, 'approval-edited-headline');
    await page.goto(`${gw.url}/approvals`);
    await page.getByRole('tab', { name: 'History' }).click();
    await page.locator(`[data-approval-id="${id}"]`).getByRole('link', { name: 'Refund 50 of payment pi_123' }).waitFor(WAIT);
  });

  it('18: removing a notice channel is asked first; Cancel keeps it', async () => {
    const channel = await admin('POST', '/v1/notification-channels', {
      kind: 'email',
      name: 'Backup mail',
      email: { host: smtp.host, port: smtp.port, starttls: false, user: smtp.user, password: smtp.password, from: 'gateway@example.test' },
    });
    expect(channel.status, channel.text).toBe(201);
    await page.goto(`${gw.url}/settings`);
    const section = page.getByRole('region', { name: 'Approval notices' });
    await section.getByRole('button', { name: 'Remove Backup mail' }).click();
    const ask = page.getByRole('dialog', { name: 'Remove the channel Backup mail?' });
    await ask.waitFor(WAIT);
    await accessible(page, 'remove channel asked');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'hidden' });
    const stillThere = async () => (await admin('GET', '/v1/notification-channels')).body.channels.some((c: { id: string }) => c.id === channel.body.id);
    expect(await stillThere()).toBe(true);
    await section.getByRole('button', { name: 'Remove Backup mail' }).click();
    await ask.getByRole('button', { name: 'Remove' }).click();
    await section.getByRole('status').filter({ hasText: 'Channel Backup mail removed.' }).waitFor(WAIT);
    expect(await stillThere()).toBe(false);
  });

  it('18: the email confirmation page shows when the approval expires as a date and time for people', async () => {
    const channel = await admin('POST', '/v1/notification-channels', {
      kind: 'email',
      name: 'Confirmations',
      email: { host: smtp.host, port: smtp.port, starttls: false, user: smtp.user, password: smtp.password, from: 'gateway@example.test' },
    });
    expect(channel.status, channel.text).toBe(201);
    const id = await raise(agent.call, { service: 'widgets', action: 'create_item', params: { name: 'by-mail' } });
    const mail = await until(async () => smtp.messages.filter((m) => m.text.includes(`/approvals/${id}`)), (m) => m.length > 0);
    expect(mail[0]!.text).toMatch(/^Expires: \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/m);
    const review = /^Review and decide: (\S+)$/m.exec(mail[0]!.text)![1]!;
    // The page's CSP refuses inline scripts: axe-core is injected with it bypassed.
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const p = await other.newPage();
    await p.goto(review);
    await p.getByRole('button', { name: 'Allow once' }).waitFor(WAIT);
    const at = new Date((await admin('GET', `/v1/approvals/${id}`)).body.expires_at as string);
    const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][at.getUTCMonth()];
    const hhmm = `${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')}`;
    const expires = await p.getByRole('listitem').filter({ hasText: 'Expires:' }).innerText();
    expect(expires).toMatch(new RegExp(`^Expires: ${at.getUTCDate()} ${month} ${at.getUTCFullYear()}, ${hhmm} UTC \\(in \\d+ (minutes|hours)\\)$`));
    expect(await p.content()).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    await accessible(p, 'email confirmation page');
    await shot(p, 'email-confirmation');
    await other.close();
  });
});
