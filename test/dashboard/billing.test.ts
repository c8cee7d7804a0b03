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

describe('dashboard: billing page', { skip: haveChromium ? false : `${CHROMIUM} is missing (apt-get install chromium; CI installs it via .ci/run)` }, () => {
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

  test('after paying in the tab a checkout opened, the page shows the checkout complete and the new plan (it kept saying "open" and the old plan)', async () => {
    await page.goto(`${s.url}/#/billing`);
    await page.getByRole('heading', { name: 'Current plan: agency' }).waitFor();
    // The offline provider's payment page completes the checkout as it opens.
    const [paid] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('button', { name: 'Check out Cloud Small' }).click()]);
    await paid.waitForLoadState();
    assert.match(await paid.content(), /"status":"complete"/);
    await paid.close();
    await page.locator('[data-checkout="complete"]').waitFor();
    assert.match(await page.locator('[data-checkout]').innerText(), /complete \(cloud small\)/);
    await page.getByRole('heading', { name: 'Current plan: starter' }).waitFor();
    assert.deepEqual(failures, []);
  });
});
