import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startLinkedSidecar, type LinkedSidecar } from '../../src/sidecar/link/control-plane-link.js';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium } from '../helpers/browser.js';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { serverWithKey } from '../controlplane/helpers.js';
import { fullTick, post } from '../sidecar/helpers.js';
import { CONNECTED_WITHIN_MS } from '../../src/controlplane/connections.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(repoRoot, 'test-artifacts', 'dashboard');
const haveChromium = existsSync(CHROMIUM);

describe(
  'dashboard: the sidecar connection line on the Servers page',
  { skip: haveChromium ? false : `${CHROMIUM} is missing (apt-get install chromium; CI installs it via .ci/run)` },
  () => {
    let s: TestServer;
    let browser: Browser;
    let page: Page;
    let email: string;
    let token: string;
    let linked: LinkedSidecar | null = null;
    const state = tempDir('dashboard-connection-');
    const failures: string[] = [];
    const missing: string[] = [];
    /** The server's clock runs this far ahead: how the test lets time pass. */
    let offset = 0;

    before(async () => {
      buildDashboard();
      mkdirSync(ARTIFACTS, { recursive: true });
      s = await startTestServer({ now: () => Date.now() + offset });
      ({ email, token } = await tenantSession(s, 'agency'));
      browser = await launchChromium();
      page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
      page.on('pageerror', (e) => failures.push(e.message));
      // No request of the page may 404 (the favicon included).
      page.on('response', (res) => {
        if (res.status() === 404) missing.push(res.url());
      });
      page.setDefaultTimeout(15_000);
    });

    after(async () => {
      await linked?.sidecar.close();
      await browser?.close();
      await s?.stop();
      state.dispose();
    });

    test('never connected, then connected within seconds of a sidecar starting, with its version, applied bundle and tick latency', async () => {
      const sc = await serverWithKey(s, token, 'Dust Valley');
      await page.goto(`${s.url}/#/login`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
      const row = page.getByRole('row', { name: /Dust Valley/ });
      await row.locator('[data-connection="never"]').waitFor();
      assert.match(await row.innerText(), /never connected/);

      // A sidecar starts: its first pull and its first report come at once, and the page (which
      // refreshes by itself) shows it connected without a reload.
      linked = await startLinkedSidecar(
        { url: s.url, serverId: String(sc.serverId), serverKey: sc.key, stateDir: state.path, telemetryMs: 3_600_000 },
        { host: '127.0.0.1', port: 0, workers: 0 },
      );
      await row.locator('[data-connection="connected"]').waitFor();
      // Its push stream is open: publishes reach it at once, and the line says so.
      await row.locator('[data-path="live"]').waitFor();
      let line = await row.innerText();
      assert.match(line, /connected/);
      assert.match(line, /runs v1/);
      // Regression: the line read "pulled1 s ago" (the template's line break ate the space).
      assert.match(line, /pulled \d+ s ago, runs v1/);
      assert.match(line, /brainstem-sidecar\//);

      // Ticks, then a report: its latency appears on the line.
      for (let i = 0; i < 5; i++) await post(linked.sidecar.url, fullTick(i + 1));
      await linked.pusher.report();
      await linked.pusher.flush();
      await row.getByText(/tick p50 [\d.]+ ms \/ p99 [\d.]+ ms/).waitFor();
      line = await row.innerText();
      await page.screenshot({ path: join(ARTIFACTS, 'servers-connection.png'), fullPage: true });

      await row.getByRole('link', { name: 'Dust Valley' }).click();
      await page.locator('.connection-line [data-connection="connected"]').waitFor();
      await page.getByRole('link', { name: 'Roster' }).click();
      await page.getByRole('rowheader').first().waitFor();
      assert.equal(await page.getByText(/states are not current/).count(), 0);

      // The sidecar stops; 150 s later its link reads as not seen lately, and the roster it left
      // says its states are not current instead of showing them as live.
      await linked.sidecar.close();
      linked = null;
      offset += CONNECTED_WITHIN_MS + 1_000;
      await page.reload();
      await page.getByText(/states are not current/).waitFor();
      assert.match(await page.locator('tbody tr').first().innerText(), /unknown: last reported/);
      await page.locator('.connection-line [data-connection="stale"]').waitFor();
      await page.screenshot({ path: join(ARTIFACTS, 'server-roster-stale.png'), fullPage: true });
      assert.deepEqual(failures, []);
      assert.deepEqual(missing, []);
    });

    test('a server named with 200 characters and no space wraps in the Servers table instead of pushing the other columns out of view', async () => {
      await serverWithKey(s, token, 'X'.repeat(200));
      await page.goto(`${s.url}/#/servers`);
      await page.getByRole('link', { name: 'X'.repeat(200) }).waitFor();
      const [scroll, client] = await page.evaluate<[number, number]>(
        "[document.querySelector('.table-wrap').scrollWidth, document.querySelector('.table-wrap').clientWidth]",
      );
      assert.ok(scroll <= client, `the table fits its box (${scroll} > ${client})`);
      assert.deepEqual(failures, []);
    });
  },
);
