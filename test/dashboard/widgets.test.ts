import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { repoRoot } from '../helpers/paths.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
const VIEWPORT = { width: 1280, height: 860 };

describe('dashboard: widgets pages', { skip: haveChromium ? false : `${CHROMIUM} is missing (apt-get install chromium; CI installs it via .ci/run)` }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let email: string;
  const failures: string[] = [];

  before(async () => {
    const r = spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(repoRoot, 'dashboard')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tsc -p dashboard failed:\n${r.stdout}${r.stderr}`);
    s = await startTestServer();
    ({ email } = await tenantSession(s, 'agency'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-quic',
        '--no-first-run',
      ],
    });
    page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
    page.on('dialog', (d) => void d.accept());
    page.on('pageerror', (e) => failures.push(e.message));
    page.setDefaultTimeout(15_000);
    await page.goto(`${s.url}/#/login`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  const pageWidth = () => page.evaluate<number>('document.documentElement.scrollWidth');

  test('a widget named with 200 characters and no space wraps instead of making the page scroll sideways', async () => {
    const name = 'W'.repeat(200);
    await page.goto(`${s.url}/#/widgets`);
    await page.getByLabel('New widget name').fill(name);
    await page.getByRole('button', { name: 'Create widget' }).click();
    await page.getByRole('heading', { name, level: 2 }).waitFor();
    assert.ok((await pageWidth()) <= VIEWPORT.width, 'the widgets list fits the viewport');
    await page.getByRole('link', { name: 'Settings' }).first().click();
    await page.getByRole('heading', { name: `${name} settings`, level: 1 }).waitFor();
    assert.ok((await pageWidth()) <= VIEWPORT.width, 'the widget settings page fits the viewport');
    assert.deepEqual(failures, []);
  });
});
