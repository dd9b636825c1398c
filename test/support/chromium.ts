// Real Chromium (Debian's `chromium`) driven by playwright-core, for the tests that must see what a
// person's browser sends: Origin headers, cookies, referrer policies, form submission.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/**
 * A page of the dashboard signed in as `who`, as a person does it: open `path` (the app sends a
 * visitor to its sign-in page), fill the form by its labels, and land back on `path`. Page errors
 * are printed, so a test failing on a broken page says why.
 */
export async function signedInDashboard(browser: Browser, baseUrl: string, who: { email: string; password: string }, path: string, viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  context.on('weberror', (e) => console.error('page error:', e.error().stack ?? e.error().message));
  const page = await context.newPage();
  await page.goto(`${baseUrl}${path}`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}${path}`, { timeout: 60_000 });
  return { context, page };
}
