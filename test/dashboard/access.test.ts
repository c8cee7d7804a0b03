import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium } from '../helpers/browser.js';
import { repoRoot } from '../helpers/paths.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(repoRoot, 'test-artifacts', 'dashboard');
const haveChromium = existsSync(CHROMIUM);

describe(
  'dashboard: keys and tokens page',
  { skip: haveChromium ? false : `${CHROMIUM} is missing (apt-get install chromium; CI installs it via .ci/run)` },
  () => {
    let s: TestServer;
    let browser: Browser;
    let page: Page;
    let email: string;
    const failures: string[] = [];

    before(async () => {
      buildDashboard();
      mkdirSync(ARTIFACTS, { recursive: true });
      s = await startTestServer();
      ({ email } = await tenantSession(s, 'agency'));
      browser = await launchChromium();
      page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
      page.on('dialog', (d) => void d.accept());
      page.on('pageerror', (e) => failures.push(e.message));
      page.setDefaultTimeout(15_000);
    });

    after(async () => {
      await browser?.close();
      await s?.stop();
    });

    test('creates an API key and a scoped personal token (each shown once), lists them by preview, revokes them', async () => {
      await page.goto(`${s.url}/#/login`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();

      await page.getByRole('link', { name: 'Keys' }).click();
      await page.getByRole('heading', { name: 'Keys and tokens', level: 1 }).waitFor();

      await page.getByLabel('API key name').fill('platform');
      await page.getByRole('button', { name: 'Create API key' }).click();
      const apiKey = await page.locator('[data-secret]').first().innerText();
      assert.match(apiKey, /^bpk_/);
      await page.getByRole('rowheader', { name: 'platform' }).waitFor();

      await page.getByLabel('Token name').fill('ci');
      await page.getByLabel(/^config:read/).check();
      await page.locator('#token-days').fill('30');
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByText('New personal access token').waitFor();
      const token = await page.locator('[data-secret]').last().innerText();
      assert.match(token, /^bsu_/);
      await page.getByRole('rowheader', { name: 'ci' }).waitFor();
      const listed = await s.call('GET', '/v1/tokens', { token });
      assert.equal(listed.status, 403, 'a token cannot manage tokens');
      const servers = await s.call('GET', '/v1/servers', { token });
      assert.equal(servers.status, 200);
      await page.screenshot({ path: join(ARTIFACTS, 'access.png'), fullPage: true });

      await page.getByRole('button', { name: 'Revoke token ci' }).click();
      await page
        .getByText(/^revoked /)
        .first()
        .waitFor();
      assert.equal((await s.call('GET', '/v1/servers', { token })).status, 401);
      await page.getByRole('button', { name: 'Revoke API key platform' }).click();
      await page
        .getByText(/^revoked /)
        .nth(1)
        .waitFor();
      assert.deepEqual(failures, []);
    });
  },
);
