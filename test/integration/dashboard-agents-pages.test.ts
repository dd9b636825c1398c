// The agents page over the paged identities listing (issue 46), in real Chromium: an org of 150
// agents shows its first page, "Load more agents" adds the next (driven by next_cursor) until
// there is none, and an agent linked by `?agent=` opens even before its page is loaded.
// axe-core on the page; screenshots.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchChromium, signedInDashboard } from '../support/chromium.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { withPool } from '../support/seed.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const SHOTS = process.env.SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots') : path.join(os.tmpdir(), 'gateway-agents-pages-screenshots');
const WAIT = { timeout: 30_000 };
const AGENTS = 150;

describe('the agents page in pages', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page | undefined;
  let lastAgentId: string;

  const agentButton = (p: Page, n: number) => p.getByRole('navigation', { name: 'Agent tree' }).getByRole('button', { name: new RegExp(`^bulk agent ${n} agent`) });

  beforeAll(async () => {
    ensureDashboardBuilt();
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway({ realPublicUrl: true });
    const me = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body;
    // Straight into the database, after the admin, a second apart: agent n is the listing's (n + 1)th.
    lastAgentId = await withPool(gw.databaseUrl, async (pool) => {
      await pool.query(sql.unsafe`
        INSERT INTO identities (org_id, kind, parent_id, user_id, name, created_at)
        SELECT ${me.org.id}, 'agent', ${me.identity.id}, ${me.identity.id}, 'bulk agent ' || n, now() + make_interval(secs => n)
        FROM generate_series(1, ${AGENTS}::int) AS n`);
      return String(await pool.oneFirst(sql.unsafe`SELECT id FROM identities WHERE name = ${`bulk agent ${AGENTS}`}`));
    });
    browser = await launchChromium();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: path.join(os.tmpdir(), 'agents-pages-failure.png'), fullPage: true }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('shows the first page, then loads the next one with "Load more agents" until there is no more', async () => {
    ({ page } = await signedInDashboard(browser, gw.config.publicUrl, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, '/agents'));
    // The first page: the admin and the 99 oldest agents.
    await agentButton(page, 99).waitFor(WAIT);
    expect(await agentButton(page, 100).count()).toBe(0);
    const more = page.getByRole('button', { name: 'Load more agents' });
    await more.waitFor(WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await more.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, 'agents-first-page.png'), fullPage: false });

    await more.click();
    await agentButton(page, AGENTS).waitFor(WAIT);
    await more.waitFor({ state: 'detached', ...WAIT });
    await expect(page.getByRole('navigation', { name: 'Agent tree' }).getByRole('button', { name: /^bulk agent \d+ agent/ }).count()).resolves.toBe(AGENTS);
    await agentButton(page, AGENTS).click();
    await page.getByRole('heading', { name: `bulk agent ${AGENTS}`, level: 2 }).waitFor(WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('opens an agent linked by ?agent= that is not on the first page', async () => {
    ({ page } = await signedInDashboard(browser, gw.config.publicUrl, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, `/agents?agent=${lastAgentId}`));
    await page.getByRole('heading', { name: `bulk agent ${AGENTS}`, level: 2 }).waitFor(WAIT);
    expect(await agentButton(page, AGENTS).count()).toBe(0);
    await page.getByRole('button', { name: 'Load more agents' }).waitFor(WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'agents-linked-beyond-first-page.png'), fullPage: false });
    await page.context().close();
  });
});
