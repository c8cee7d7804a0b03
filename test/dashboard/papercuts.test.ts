import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';
import { BURST_LIMITS, report, serverWithKey, signed, type Sidecar } from '../controlplane/helpers.js';

// The dashboard where it looked dead instead of informing (issue #29, tried as a new user):
// charts drawn as flat lines on a fixed 0–100 axis, money as `$0.0000`, dates in two formats,
// `snap × 1` for what happened, a 7-day chart under "this month", "—" for the tick latency
// until the very last report carried one, and the admin console under the user's navigation
// with "Log in" beside it.

const DATE_TIME = /\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \S+/;

describe('dashboard papercuts (issue #29): axes, money, dates, activity, periods, latency, admin console', { skip: skipWithoutChromium }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let email: string;
  let token: string;
  let sc: Sidecar;
  const failures: string[] = [];
  let n = 0;
  const send = async (extra: Record<string, unknown>) => {
    const res = await signed(s, sc.key, 'POST', '/v1/telemetry', {
      body: report(sc.serverId, { reportId: `r${n++}`, ts: new Date().toISOString(), ...extra }),
    });
    assert.equal(res.status, 202, res.text);
  };

  before(async () => {
    buildDashboard();
    s = await startTestServer({ limits: BURST_LIMITS });
    ({ email, token } = await tenantSession(s, 'agency'));
    sc = await serverWithKey(s, token, 'Papercut Valley');
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 900 }, failures);
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  test('a server with no activity: axes scaled to the data (not 0–100), money as $0.00, one date format, no latency with the reason', async () => {
    await send({ linesSpoken: 0, spendUsd: 0, events: [] });
    await logIn(page, s.url, email);
    await page.goto(`${s.url}/#/servers/${sc.serverId}/overview`);
    const chart = page.locator('.chart [data-y-max]').first();
    await chart.waitFor();
    assert.equal(await chart.getAttribute('data-y-max'), '1');
    const kpis = await page.locator('.kpis').innerText();
    assert.match(kpis, /Spend today\s+\$0\.00\b/);
    assert.doesNotMatch(kpis, /\$0\.0000/);
    assert.match(kpis, /Tick p50 \/ p99\s+—\s+no ticks in recent reports/);
    const hint = await page.locator('p.hint', { hasText: 'Last report' }).innerText();
    assert.match(hint, DATE_TIME);
    assert.doesNotMatch(hint, /\b(AM|PM)\b|\d+\/\d+\/\d{4}/);
    // A month's period by its first and last day, not the next month's first.
    assert.match(hint, /this month is \d{4}-\d{2}-01 – \d{4}-\d{2}-(28|29|30|31)\b/);
  });

  test('a busy day: the axis tops the largest value, spend in cents, the last known latency with its age after a quiet report', async () => {
    await send({ linesSpoken: 37, spendUsd: 0.0125, latency: { p50: 1.5, p99: 6 }, events: [{ kind: 'snap', count: 3 }] });
    await send({ linesSpoken: 0, spendUsd: 0, events: [{ kind: 'spawn', count: 1 }] });
    await page.goto(`${s.url}/#/servers/${sc.serverId}/roster`);
    await page.goto(`${s.url}/#/servers/${sc.serverId}/overview`);
    await page.locator('.chart [data-y-max="50"]').waitFor();
    const kpis = await page.locator('.kpis').innerText();
    assert.match(kpis, /Spend today\s+\$0\.0125\b/);
    assert.match(kpis, /Tick p50 \/ p99\s+1\.50 ms \/ 6\.00 ms\s+reported \d+ s ago/);
  });

  test('activity reads as what happened, with ISO-like local times', async () => {
    await page.goto(`${s.url}/#/servers/${sc.serverId}/activity`);
    const feed = page.locator('ol.feed');
    await feed.locator('[data-kind="snap"]').waitFor();
    const text = await feed.innerText();
    assert.match(text, /3 hostiles spotted/);
    assert.match(text, /1 character appeared/);
    assert.doesNotMatch(text, /snap × |spawn × /);
    assert.match(text, DATE_TIME);
  });

  test('economy: the 7-day chart says 7 days, the month table says this month; counts and money formatted', async () => {
    await page.goto(`${s.url}/#/servers/${sc.serverId}/economy`);
    await page.getByRole('heading', { name: 'Economy', exact: true }).waitFor();
    assert.match(await page.locator('.chart figcaption').innerText(), /last 7 days/);
    assert.doesNotMatch(await page.getByRole('heading', { name: 'Economy', exact: true }).innerText(), /month/);
    const caption = await page.locator('table caption', { hasText: 'Spend by source' }).innerText();
    assert.match(caption, /this month \(\d{4}-\d{2}-01 – \d{4}-\d{2}-\d{2}, UTC\)/);
    assert.match(await page.locator('table', { hasText: 'Spend by source' }).innerText(), /Total\s+\$0\.0125/);
  });

  test('billing prices in the catalogue currency with two decimals', async () => {
    await page.goto(`${s.url}/#/billing`);
    await page.getByRole('heading', { name: /Current plan/ }).waitFor();
    const text = await page.locator('main').innerText();
    assert.match(text, /\$29\.00 \/ month/);
    assert.match(text, /this period \d{4}-\d{2}-\d{2} – \d{4}-\d{2}-\d{2} \(UTC\)/);
  });

  test('the LLM dialogue switch says whether the sidecar has a model behind it', async () => {
    await page.goto(`${s.url}/#/servers/${sc.serverId}/config`);
    const status = page.locator('#dialogue-status');
    // No report has said yet.
    await page.locator('#dialogue-status[data-dialogue="unknown"]').waitFor();
    await send({ dialogue: { source: 'none' } });
    await page.goto(`${s.url}/#/servers/${sc.serverId}/overview`);
    await page.goto(`${s.url}/#/servers/${sc.serverId}/config`);
    await page.locator('#dialogue-status[data-dialogue="none"]').waitFor();
    assert.match(await status.innerText(), /No model on the sidecar: with LLM dialogue on, characters stay silent\..*SERVICE_LLM_BASE_URL/);
    await send({ dialogue: { source: 'model', model: 'gpt-4o-mini' } });
    await page.goto(`${s.url}/#/servers/${sc.serverId}/overview`);
    await page.goto(`${s.url}/#/servers/${sc.serverId}/config`);
    await page.locator('#dialogue-status[data-dialogue="model"]').waitFor();
    assert.match(await status.innerText(), /from a model \(gpt-4o-mini\)/);
  });

  test('the admin console stands on its own: no user navigation, no "Log in" beside it', async () => {
    const fresh = await openPage(browser, { width: 1280, height: 900 }, failures);
    await fresh.goto(`${s.url}/#/admin`);
    await fresh.getByRole('button', { name: 'Open the admin console' }).waitFor();
    const header = await fresh.locator('header').innerText();
    assert.match(header, /admin console/);
    assert.equal(await fresh.getByRole('navigation', { name: 'Main' }).count(), 0);
    assert.equal(await fresh.getByRole('link', { name: 'Log in' }).count(), 0);
    // A signed-in user who opens it gets a way back instead.
    await page.goto(`${s.url}/#/admin`);
    await page.getByRole('link', { name: 'Back to the dashboard' }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 0);
    await fresh.close();
    assert.deepEqual(failures, []);
  });
});
