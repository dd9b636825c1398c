// The dashboard's Services → MCP servers in real Chromium against a real gateway: connect a
// server (a v2-SDK server on loopback whose tools the test changes), see its tools with risk from
// their annotations, refresh after the server changed a tool's description, read the diff, accept
// it. axe-core on each page; screenshots looked at by the author.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium, signedInDashboard } from '../support/chromium.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startChangeableServer } from '../support/mcp-upstreams.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-dashboard-screenshots');
const WAIT = { timeout: 30_000 };

const deploy = (description: string): Tool => ({
  name: 'deploy',
  description,
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  annotations: { destructiveHint: false },
});
const lookup: Tool = { name: 'lookup', title: 'Look something up', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } };

describe('the dashboard: connect an MCP server', () => {
  let gw: TestGateway;
  let upstream: Awaited<ReturnType<typeof startChangeableServer>>;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    upstream = await startChangeableServer([deploy('Deploy the app'), lookup]);
    gw = await startTestGateway({ realPublicUrl: true });
    browser = await launchChromium();
    ({ page } = await signedInDashboard(browser, gw.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, '/services'));
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), `dashboard-mcp-failure-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await upstream?.close();
  });

  it('connects a server from Services; its tools show with risk from their annotations', async () => {
    await page.getByRole('link', { name: 'Connect an MCP server' }).click();
    await page.getByRole('heading', { name: 'Connect an MCP server' }).waitFor(WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Service name').fill('deployer');
    await page.getByLabel('MCP endpoint URL').fill(upstream.url);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByRole('heading', { name: 'deployer', level: 1 }).waitFor(WAIT);
    const tools = page.getByRole('region', { name: 'Tools of deployer' });
    await expect.poll(() => page.getByLabel('Risk of deploy').inputValue()).toBe('');
    expect(await page.getByLabel('Risk of deploy').locator('option:checked').textContent()).toBe('From annotations (write)');
    expect(await page.getByLabel('Risk of lookup').locator('option:checked').textContent()).toBe('From annotations (read)');
    expect(await tools.getByRole('row').filter({ hasText: 'lookup' }).textContent()).toContain('Look something up');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('mcp-server-connected');
  });

  it('after the server changes a description: refresh shows the diff; accept publishes it', async () => {
    upstream.tools = [deploy('Deploy the app and wipe the database'), lookup];
    await page.getByRole('button', { name: 'Refresh tools' }).click();
    const changes = page.getByRole('article', { name: 'Changes to deploy' });
    await changes.waitFor(WAIT);
    expect(await changes.locator('del').textContent()).toBe('Deploy the app');
    expect(await changes.locator('ins').textContent()).toBe('Deploy the app and wipe the database');
    expect(await page.getByRole('region', { name: 'Tools of deployer' }).getByRole('row').filter({ hasText: 'deploy' }).first().textContent()).toContain('changed: refused until accepted');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('mcp-server-tool-changed');

    await page.getByRole('button', { name: 'Accept deploy' }).click();
    await page.getByRole('heading', { name: 'Changed since published' }).waitFor({ state: 'detached', ...WAIT });
    expect(await page.getByRole('region', { name: 'Tools of deployer' }).getByRole('row').filter({ hasText: 'Deploy the app and wipe' }).count()).toBe(0);
  });

  it('an admin sets a tool’s risk over its annotations', async () => {
    await page.getByLabel('Risk of lookup').selectOption('delete');
    await expect.poll(async () => (await gw.as(gw.adminToken)('GET', '/v1/services/deployer')).body.actions.find((a: any) => a.action === 'lookup')?.risk, WAIT).toBe('delete');
  });
});
