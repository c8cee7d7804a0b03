import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startLinkedSidecar, type LinkedSidecar } from '../../src/sidecar/link/control-plane-link.js';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { serverWithKey } from '../controlplane/helpers.js';
import { fullTick, post } from '../sidecar/helpers.js';

const ARTIFACTS = join(repoRoot, 'test-artifacts', 'dashboard');

/** A tick that puts `agent` of `squad` at (x, z). */
function tickAt(agent: number, squad: string, x: number, z: number, time: number): Record<string, unknown> {
  const t = fullTick(agent) as { snapshot: Record<string, unknown> & { self_state: Record<string, unknown> }; profile: Record<string, unknown> };
  t.snapshot.self_state.pos = { x, y: 0, z };
  t.snapshot.time_s = time;
  t.snapshot.targets = [];
  t.snapshot.squad = squad;
  t.profile = { name: `Agent ${agent}` };
  return t;
}

describe("dashboard: the live map of a server's characters, from a real linked sidecar", { skip: skipWithoutChromium }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let email: string;
  let token: string;
  let linked: LinkedSidecar | null = null;
  const state = tempDir('dashboard-live-map-');
  const failures: string[] = [];
  const missing: string[] = [];

  before(async () => {
    buildDashboard();
    mkdirSync(ARTIFACTS, { recursive: true });
    s = await startTestServer();
    ({ email, token } = await tenantSession(s, 'agency'));
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 900 }, failures);
    page.on('response', (res) => {
      if (res.status() === 404) missing.push(res.url());
    });
    // A blocked inline style or script shows up as a console error, not a page error.
    page.on('console', (m) => {
      if (m.type() === 'error') failures.push(m.text());
    });
  });

  after(async () => {
    await linked?.sidecar.close();
    await browser?.close();
    await s?.stop();
    state.dispose();
  });

  test('characters appear where the sidecar has them, move with the next sample; select, path, panel, filters', async () => {
    const sc = await serverWithKey(s, token, 'Dust Valley');
    linked = await startLinkedSidecar(
      { url: s.url, serverId: String(sc.serverId), serverKey: sc.key, stateDir: state.path, telemetryMs: 1_000 },
      { host: '127.0.0.1', port: 0, workers: 0 },
    );
    const url = linked.sidecar.url;
    const agents: [number, string, number, number][] = [
      [1, 'alpha', 0, 0],
      [2, 'alpha', 40, 10],
      [3, 'beta', -60, 80],
    ];
    for (const [agent, squad, x, z] of agents) assert.equal((await post(url, tickAt(agent, squad, x, z, 10))).status, 200);

    await logIn(page, s.url, email);
    await page.goto(`${s.url}/#/servers/${sc.serverId}/map`);
    await page.getByRole('heading', { name: 'Live map' }).waitFor();
    // The sidecar sends a sample with a report at most every 5 s: wait for the one with all three.
    // (The page's CSP forbids evaluating strings, so no waitForFunction here: locators only.)
    for (const id of [1, 2, 3]) await page.locator(`g.map-char[data-id="${id}"]`).waitFor({ state: 'attached', timeout: 30_000 });
    await page.locator('[data-map-status]', { hasText: /^3 characters at / }).waitFor({ timeout: 30_000 });
    await page.locator('[data-map-status]').waitFor();
    assert.match((await page.locator('[data-map-status]').textContent())!, /^3 characters at /);

    // Characters are drawn relative to each other as the sidecar placed them (x east, z north).
    const at = async (id: number) => {
      const c = page.locator(`g.map-char[data-id="${id}"] circle`);
      return { x: Number(await c.getAttribute('cx')), y: Number(await c.getAttribute('cy')) };
    };
    const [a, b, c] = [await at(1), await at(2), await at(3)];
    assert.ok(b.x > a.x && b.y < a.y, 'agent 2 is east and north of agent 1');
    assert.ok(c.x < a.x && c.y < b.y, 'agent 3 is west and further north');

    await page.locator('g.map-char[data-id="1"] circle').click({ force: true });
    const panel = page.locator('.live-map-side section');
    await panel.getByRole('heading', { name: /Agent 1/ }).waitFor();
    assert.equal(await panel.locator('dd[data-field="squad"]').textContent(), 'alpha');
    assert.equal(await panel.locator('dd[data-field="position"]').textContent(), '0.0, 0.0');
    assert.match((await panel.locator('[data-field="why"]').textContent())!, /no explanation recorded/);
    assert.ok((await panel.locator('svg.map-strip rect[data-mode]').count()) >= 1);
    assert.equal(await page.locator('text.map-label.selected').count(), 1);

    // It moves; the next sample moves it on the map and in the panel, and its path appears.
    assert.equal((await post(url, tickAt(1, 'alpha', 25, -30, 20))).status, 200);
    await panel.locator('dd[data-field="position"]', { hasText: '25.0, -30.0' }).waitFor({ timeout: 30_000 });
    // One point per sample it was in (a sample may have come between the two positions).
    assert.ok(((await page.locator('polyline.map-path-all').getAttribute('points')) ?? '').split(' ').length >= 2);
    await page.screenshot({ path: join(ARTIFACTS, 'live-map.png') });

    // Filters: squad beta off hides agent 3.
    await page.locator('input[data-squad="beta"]').uncheck();
    assert.equal(await page.locator('g.map-char[data-id="3"]').getAttribute('display'), 'none');
    await page.locator('input[data-squad="beta"]').check();
    assert.equal(await page.locator('g.map-char[data-id="3"]').getAttribute('display'), null);

    // Zoom buttons work here too.
    const before = await at(3);
    await page.getByRole('button', { name: 'Zoom in (+)' }).click();
    assert.notDeepEqual(await at(3), before);

    assert.deepEqual(failures, []);
    assert.deepEqual(missing, []);
  });
});
