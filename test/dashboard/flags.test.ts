import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';
import { serverWithKey } from '../controlplane/helpers.js';

describe('dashboard: game flags edited beside the bundle, with a preview of who gets what', { skip: skipWithoutChromium }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const failures: string[] = [];

  before(async () => {
    buildDashboard();
    s = await startTestServer();
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 900 }, failures);
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  test('add a flag, give it rules, read the preview, publish; a bad rule comes back at the flag', async () => {
    const { email, token } = await tenantSession(s, 'agency');
    const sc = await serverWithKey(s, token, 'Flag Island');
    await logIn(page, s.url, email);
    await page.goto(`${s.url}/#/servers/${sc.serverId}/config`);
    await page.getByText('No flags.').waitFor();
    await page.getByLabel('New flag key', { exact: true }).fill('double_xp');
    await page.getByRole('button', { name: 'Add flag' }).click();
    const field = page.getByLabel('Flag double_xp', { exact: true });
    await field.waitFor();
    await field.fill(
      JSON.stringify({
        type: 'boolean',
        value: false,
        rules: [
          { if: { map: ['chernarus'] }, value: true, variant: 'map' },
          { if: { percentage: 50 }, value: true },
        ],
      }),
    );
    // The preview: with no map set, the 50 % split decides per player id.
    const row = page.locator('[data-preview-flag="double_xp"]');
    await row.waitFor();
    assert.match(await row.innerText(), /SPLIT|DEFAULT/);
    await page.getByLabel('Map', { exact: true }).fill('chernarus');
    assert.equal((await row.innerText()).match(/rule-|map · TARGETING_MATCH/g)?.length, 3);

    // Half-typed JSON blocks the publish.
    await field.fill('{"type": "boolean", ');
    await page.getByText(/Not JSON yet/).waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText(/Fix the 1 highlighted field/).waitFor();

    // A rule of the wrong type: the server's 422 details show at the flag.
    await field.fill(JSON.stringify({ type: 'boolean', value: false, rules: [{ if: { map: ['x'] }, value: 'yes' }] }));
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText(/flags\.double_xp\.rules\[0\]\.value: must be a boolean/).waitFor();

    await field.fill(JSON.stringify({ type: 'boolean', value: false, rules: [{ if: { map: ['chernarus'] }, value: true }] }));
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Published version 2.').waitFor();
    const head = await s.call('GET', `/v1/servers/${sc.serverId}/config`, { token });
    assert.deepEqual(head.body.flags, { double_xp: { type: 'boolean', value: false, rules: [{ if: { map: ['chernarus'] }, value: true }] } });
    assert.deepEqual(failures, []);
  });
});
