import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';

const VIEWPORT = { width: 1280, height: 860 };

describe('dashboard: billing page', { skip: skipWithoutChromium }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let email: string;
  const failures: string[] = [];

  before(async () => {
    buildDashboard();
    s = await startTestServer();
    ({ email } = await tenantSession(s, 'agency'));
    browser = await launchChromium();
    page = await openPage(browser, VIEWPORT, failures);
    await logIn(page, s.url, email);
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  test('after paying in the tab a checkout opened, the page shows the checkout complete and the new plan (it kept saying "open" and the old plan)', async () => {
    await page.goto(`${s.url}/#/billing`);
    await page.getByRole('heading', { name: 'Current plan: agency' }).waitFor();
    // The offline provider's payment page changes nothing as it opens: its button completes the checkout.
    const [paid] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('button', { name: 'Check out Cloud Small' }).click()]);
    await paid.waitForLoadState();
    await Promise.all([paid.waitForNavigation(), paid.getByRole('button', { name: 'Complete the checkout' }).click()]);
    assert.match(await paid.content(), /"status":"complete"/);
    await paid.close();
    await page.locator('[data-checkout="complete"]').waitFor();
    assert.match(await page.locator('[data-checkout]').innerText(), /complete \(cloud small\)/);
    await page.getByRole('heading', { name: 'Current plan: starter' }).waitFor();
    assert.deepEqual(failures, []);
  });
});
