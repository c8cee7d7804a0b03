import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from './paths.js';
import { askServices } from './services.js';

export const CHROMIUM = '/usr/bin/chromium';
/** The `skip` option of a browser suite: the reason when Debian's Chromium is not installed. */
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing (apt-get install chromium; CI installs it via .ci/run)`;

/**
 * Compiles the page's TypeScript so the server serves what the test drives (scripts/run-tests.mjs
 * compiles it once for the run, or finds the build current, and says so in BRAINSTEM_TEST_DASHBOARD_BUILT).
 */
export function buildDashboard(): void {
  if (process.env.BRAINSTEM_TEST_DASHBOARD_BUILT === '1') return;
  const r = spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(repoRoot, 'dashboard')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tsc -p dashboard failed:\n${r.stdout}${r.stderr}`);
}

/**
 * Headless Chromium without its background traffic (updates, sync), which a test must not wait on:
 * a connection to the one scripts/test-services.mjs launches (test/helpers/services.ts; under
 * scripts/run-tests.mjs one for the whole run), whose `close()` closes only this connection's
 * contexts.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.connect((await askServices<{ wsEndpoint: string }>('/chromium')).wsEndpoint);
}

/**
 * A page of a fresh context that accepts every confirmation and records page errors into
 * `failures` (a test ends by asserting it is empty).
 */
export async function openPage(browser: Browser, viewport: { width: number; height: number }, failures: string[]): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  page.on('dialog', (d) => void d.accept());
  page.on('pageerror', (e) => failures.push(e.message));
  // A wait is for an event, not a deadline: 15 s ran out filling the login form on a host at
  // load 20, while a page that never shows what is awaited still fails well within the test's limit.
  page.setDefaultTimeout(45_000);
  return page;
}

/** Logs in through the login form and waits for the Servers page. */
export async function logIn(page: Page, url: string, email: string, password = 'correct horse battery'): Promise<void> {
  await page.goto(`${url}/#/login`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
}
