import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ADMIN_TOKEN, startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium } from '../helpers/browser.js';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { signRequest } from '../../src/signing/request.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(repoRoot, 'test-artifacts', 'dashboard');
const LAPTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

// The page code is compiled by its own tsconfig (DOM types); build it here so that `tsc -p .` alone suffices before the tests.
describe('dashboard static serving', () => {
  let s: TestServer;
  before(async () => {
    buildDashboard();
    s = await startTestServer();
  });
  after(async () => {
    await s.stop();
  });

  test('serves index, app code and allowlisted vendor files with types and ETags', async () => {
    const index = await fetch(`${s.url}/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type') ?? '', /^text\/html/);
    const html = await index.text();
    // Under the policy no inline script runs (an import map included): modules name their imports by path.
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
    // An icon of this origin (the policy admits it), so no page load asks for a missing /favicon.ico.
    assert.match(html, /<link rel="icon" type="image\/svg\+xml" href="\/app\/favicon.svg">/);
    assert.equal(index.headers.get('content-security-policy'), "default-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'");
    assert.equal(index.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(index.headers.get('x-content-type-options'), 'nosniff');
    const main = await (await fetch(`${s.url}/app/main.js`)).text();
    assert.match(main, /from '\/vendor\/preact.mjs'/);
    assert.doesNotMatch(main, /from 'preact'/);
    assert.match(await (await fetch(`${s.url}/vendor/preact-hooks.mjs`)).text(), /from"\/vendor\/preact.mjs"/);

    for (const [path, type] of [
      ['/app/main.js', /^text\/javascript/],
      ['/app/pages/config.js', /^text\/javascript/],
      ['/app/style.css', /^text\/css/],
      ['/vendor/preact.mjs', /^text\/javascript/],
      ['/vendor/preact-hooks.mjs', /^text\/javascript/],
      ['/vendor/htm.mjs', /^text\/javascript/],
      ['/vendor/uplot.mjs', /^text\/javascript/],
      ['/vendor/uplot.css', /^text\/css/],
      ['/app/favicon.svg', /^image\/svg\+xml/],
      ['/favicon.ico', /^image\/svg\+xml/],
    ] as const) {
      const res = await fetch(s.url + path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', type, path);
      const etag = res.headers.get('etag');
      assert.ok(etag, path);
      await res.arrayBuffer();
      const again = await fetch(s.url + path, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304, path);
    }
  });

  test('refuses anything outside the tables, traversal included', async () => {
    for (const path of [
      '/vendor/../package.json',
      '/vendor/%2e%2e/package.json',
      '/vendor/preact/package.json',
      '/app/../../package.json',
      '/app/..%2f..%2fpackage.json',
      '/app/%2e%2e/%2e%2e/package.json',
      '/app/api.ts',
      '/app/',
    ]) {
      const res = await fetch(s.url + path);
      assert.equal(res.status, 404, path);
      const body = (await res.json()) as { error: { code: string } };
      assert.equal(body.error.code, 'not_found', path);
    }
  });

  test('API routes still win', async () => {
    const res = await s.call('GET', '/v1/servers');
    assert.equal(res.status, 401);
  });
});

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.log(`# dashboard browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium; CI installs it via .ci/run)`);

describe('dashboard in a browser', { skip: haveChromium ? false : `${CHROMIUM} is missing` }, () => {
  let s: TestServer;
  let browser: Browser;
  let contextA: BrowserContext;
  let contextB: BrowserContext;
  let a: Page;
  let b: Page;
  let receiver: Receiver;
  let email: string;
  const photos = tempDir('dashboard-photos-');
  const failures: string[] = [];

  before(async () => {
    buildDashboard();
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await startReceiver();
    s = await startTestServer({
      allowPrivateWebhooks: true,
      video: { timings: { titleS: 1, photoS: 1.5, fadeS: 0.5, fps: 25 }, callbackPollMs: 50 },
    });
    ({ email } = await tenantSession(s, 'agency', 'operator@example.com'));
    browser = await launchChromium();
    contextA = await browser.newContext({ viewport: LAPTOP });
    contextB = await browser.newContext({ viewport: LAPTOP });
    a = await contextA.newPage();
    b = await contextB.newPage();
    for (const p of [a, b]) {
      p.on('dialog', (d) => void d.accept());
      p.on('pageerror', (e) => failures.push(e.message));
      // A refusal by the Content-Security-Policy is only a console error: it counts as a failure too.
      p.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) failures.push(m.text());
      });
      p.setDefaultTimeout(15_000);
    }
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    await s?.stop();
    photos.dispose();
  });

  /** A full-page screenshot at laptop and phone width. */
  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize(LAPTOP);
  }

  async function login(page: Page): Promise<void> {
    await page.goto(`${s.url}/#/login`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  }

  test('the whole operator flow', async () => {
    // Login.
    await a.goto(`${s.url}/`);
    await a.getByRole('heading', { name: 'Log in to brainstem' }).waitFor();
    await shot(a, 'login');
    await login(a);

    // Servers: create one, then feed it telemetry so that the read pages have something to show.
    await a.getByLabel('New server name').fill('Dust Valley');
    await a.getByRole('button', { name: 'Create server' }).click();
    await a.waitForURL(/#\/servers\/\d+\/overview$/);
    const serverId = Number(/servers\/(\d+)/.exec(a.url())![1]);
    const session = (await a.evaluate(() => JSON.parse((globalThis as any).sessionStorage.getItem('brainstem.session')))) as { token: string };
    const key = await s.call('POST', `/v1/servers/${serverId}/keys`, { token: session.token });
    for (const [i, lines] of [12, 30].entries()) {
      const body = JSON.stringify({
        serverId: String(serverId),
        ts: new Date().toISOString(),
        botCount: 3,
        playersOnline: 5,
        linesSpoken: lines,
        spendUsd: 0.02 * lines,
        events: [
          { kind: 'spoke', count: lines },
          { kind: 'spawn', count: 1 },
        ],
        reportId: `r${i}`,
        cacheHits: 4,
        llmTokens: 900,
        ttsCharacters: 1200,
        economy: { ttsUsd: 0.01 * lines, llmUsd: 0.008 * lines },
        latency: { p50: 1.2, p99: 4.8 },
        roster: [
          { agent: 1, name: 'Mara', alignment: 'friendly', goal: 'find water', state: 'walking' },
          { agent: 2, name: 'Ivo', alignment: 'hostile', goal: 'hold the bridge', state: 'guarding' },
        ],
      });
      const res = await fetch(`${s.url}/v1/telemetry`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...signRequest(key.body.key, { method: 'POST', target: '/v1/telemetry', body }) },
      });
      assert.equal(res.status, 202);
    }
    await a.goto(`${s.url}/#/servers`);
    await a.getByRole('link', { name: 'Dust Valley' }).waitFor();
    await shot(a, 'servers');
    await a.getByRole('link', { name: 'Dust Valley' }).click();
    await a.getByText('Lines this month').waitFor();
    await a.locator('.chart canvas').first().waitFor();
    await shot(a, 'server-overview');
    await a.getByRole('link', { name: 'Roster' }).click();
    await a.getByRole('cell', { name: 'hold the bridge' }).waitFor();
    await shot(a, 'server-roster');
    await a.getByRole('link', { name: 'Activity' }).click();
    await a.locator('.feed li').first().waitFor();
    await shot(a, 'server-activity');
    await a.getByRole('link', { name: 'Economy' }).click();
    await a.getByRole('rowheader', { name: 'Phrase cache' }).waitFor();
    await shot(a, 'server-economy');
    await a.getByRole('link', { name: 'Usage' }).click();
    await a.getByText('LLM tokens').waitFor();
    await shot(a, 'server-usage');

    // Configuration: a client-side error at the field, then a publish that raises the version.
    await a.goto(`${s.url}/#/servers/${serverId}/config`);
    const perDay = a.getByLabel('Lines per day');
    await perDay.fill('-1');
    await a.locator('[data-error-for="cfg-speech-limits-per_day"]').waitFor();
    await a.getByLabel('Themes per bot').fill('9');
    assert.match(await a.locator('[data-error-for="cfg-flavor-themes_per_bot"]').innerText(), /must not exceed the number of themes/i);
    await a.getByRole('button', { name: 'Publish' }).click();
    await a.getByText(/Fix the 2 highlighted field/).waitFor();
    await perDay.fill('300');
    await a.getByLabel('Themes per bot').fill('2');
    await a.getByRole('button', { name: 'Add theme' }).click();
    await a.getByLabel('Theme 6 text').fill('drought');
    // Sliders work from the keyboard.
    await a.getByLabel('Openness mean').focus();
    await a.keyboard.press('ArrowRight');
    await a.getByLabel('Note for this version (optional)').fill('more chatter');
    await a.getByRole('button', { name: 'Publish' }).click();
    await a.getByText('Published version 2.').waitFor();
    await a.locator('tr[data-version="2"]').getByText('more chatter').waitFor();
    await shot(a, 'config');

    // A second operator (browser context B) loads v2; A publishes v3 meanwhile; B's publish is a 409.
    await login(b);
    await b.goto(`${s.url}/#/servers/${serverId}/config`);
    await b.getByText('editing v2').waitFor();
    await a.getByLabel('Emotes').uncheck();
    await a.getByRole('button', { name: 'Publish' }).click();
    await a.getByText('Published version 3.').waitFor();
    await b.getByLabel('Squads').uncheck();
    await b.getByRole('button', { name: 'Publish' }).click();
    const conflict = b.locator('[data-conflict]');
    await conflict.waitFor();
    assert.match(await conflict.innerText(), /Version 3 by operator@example\.com/);
    await shot(b, 'config-conflict');
    await b.getByRole('button', { name: 'Reload the current head' }).click();
    await b.getByText('editing v3').waitFor();

    // Diff and rollback.
    await a.getByRole('button', { name: 'Compare version 1 with the head' }).click();
    await a.locator('.diff').getByText('speech.limits.per_day').waitFor();
    await a.getByRole('button', { name: 'Roll back to version 1' }).click();
    await a.getByText('Rolled back: version 4 is now the head.').waitFor();
    const head = await s.call('GET', `/v1/servers/${serverId}/config`, { token: session.token });
    assert.equal(head.body.version, 4);
    assert.equal(head.body.policy.emotes, true);

    // Server keys.
    await a.getByRole('link', { name: 'Server keys' }).click();
    await a.getByRole('button', { name: 'Issue a key' }).click();
    assert.match(await a.locator('[data-secret]').innerText(), /^bsk_/);
    await shot(a, 'server-keys');

    // Widgets → Settings → Analytics → Webhooks.
    await a.goto(`${s.url}/#/widgets`);
    await a.getByLabel('New widget name').fill('Front desk');
    await a.getByRole('button', { name: 'Create widget' }).click();
    await a.getByRole('link', { name: 'Webhooks' }).click();
    await a.locator('[data-empty-endpoints]').waitFor();
    await shot(a, 'webhooks-empty');
    await a.getByLabel('Endpoint URL').fill('ftp://example.com/hook');
    await a.getByRole('button', { name: 'Add endpoint' }).click();
    await a.locator('[data-error-for="ep-url"]').waitFor();
    await a.getByLabel('Endpoint URL').fill(receiver.url);
    await a.getByRole('button', { name: 'Add endpoint' }).click();
    await a.locator('[data-endpoint]').waitFor();
    assert.match(await a.locator('[data-secret]').innerText(), /^whsec_/);
    await a.getByRole('button', { name: 'Send test event' }).click();
    await a.getByText('Test event accepted: 1 delivery queued.').waitFor();
    await receiver.waitFor(1);
    await a.locator('[data-delivery]').getByText('succeeded').waitFor();
    await a.getByRole('button', { name: 'Details' }).click();
    await a.locator('.attempts li').first().waitFor();
    await a.locator('[data-payload]').waitFor();
    await shot(a, 'webhooks');

    // Properties: create, upload photos, request a video, watch it, play it.
    for (const n of [1, 2]) {
      const out = join(photos.path, `p${n}.jpg`);
      const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=1:duration=${n}`, '-frames:v', '1', out]);
      assert.equal(r.status, 0, String(r.stderr));
      assert.ok(readFileSync(out).length > 100);
    }
    await a.goto(`${s.url}/#/properties`);
    await a.getByLabel('Title').fill('Harbour loft');
    await a.getByLabel('Address').fill('1 Quay Street');
    await a.getByLabel('Price').fill('450000');
    await a.getByRole('button', { name: 'Create property' }).click();
    await a.waitForURL(/#\/properties\/\d+$/);
    await a.locator('#photo-input').setInputFiles([join(photos.path, 'p1.jpg'), join(photos.path, 'p2.jpg')]);
    await a.getByRole('heading', { name: 'Photos (2)' }).waitFor();
    // Thumbnails load from same-origin signed photo URLs (an <img> sends no credential).
    await a.waitForFunction(() => {
      const imgs = [...(globalThis as any).document.querySelectorAll('img.thumb')] as { complete: boolean; naturalWidth: number }[];
      return imgs.length === 2 && imgs.every((i) => i.complete && i.naturalWidth > 0);
    });
    assert.match((await a.locator('img.thumb').first().getAttribute('src')) ?? '', /^\/v1\/properties\/\d+\/photos\/\d+\/file\?expires=\d+&signature=[\w-]+$/);
    // At phone width a photo's room menu keeps its natural width (it was squeezed to read "no").
    await a.setViewportSize(PHONE);
    const squeezed = await a.locator('.photo-list select').evaluateAll(
      (menus) =>
        menus.filter((m) => {
          const free = m.cloneNode(true) as typeof m;
          free.style.position = 'absolute';
          free.style.width = 'auto';
          m.parentElement!.append(free);
          const natural = free.getBoundingClientRect().width;
          free.remove();
          return m.getBoundingClientRect().width < natural - 1;
        }).length,
    );
    assert.equal(squeezed, 0);
    await a.setViewportSize(LAPTOP);
    await a.getByLabel('16:9').uncheck();
    await a.getByLabel('1:1').check();
    await a.getByRole('button', { name: 'Request video' }).click();
    await a.locator('[data-status="completed"]').waitFor({ timeout: 60_000 });
    const video = a.locator('video[data-asset]');
    await video.waitFor();
    await a.waitForFunction(() => {
      const v = (globalThis as any).document.querySelector('video[data-asset]') as { readyState: number; duration: number } | null;
      return v !== null && v.readyState >= 1 && v.duration > 0;
    });
    // The video plays from a same-origin signed URL (no blob: under the policy); seeking uses Range requests.
    assert.match((await video.getAttribute('src')) ?? '', /^\/v1\/assets\/\d+\/file\?expires=\d+&signature=[\w-]+$/);
    const seeked = await a.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const v = (globalThis as any).document.querySelector('video[data-asset]') as {
            currentTime: number;
            addEventListener(e: string, f: () => void): void;
          };
          v.addEventListener('seeked', () => resolve(v.currentTime));
          v.currentTime = 2;
        }),
    );
    assert.ok(Math.abs(seeked - 2) < 0.5, `seeked to ${seeked}`);
    const download = a.locator('a[data-download]');
    assert.match((await download.getAttribute('download')) ?? '', /^tour-\d+\.mp4$/);
    const fetched = await a.evaluate(
      async (href) => {
        const res = await fetch(href!, { credentials: 'omit' });
        return { status: res.status, type: res.headers.get('content-type'), size: (await res.arrayBuffer()).byteLength };
      },
      await download.getAttribute('href'),
    );
    assert.deepEqual([fetched.status, fetched.type], [200, 'video/mp4'], 'the download link opens without a credential');
    assert.ok(fetched.size > 1000);
    await contextA.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
    await a.getByRole('button', { name: 'Share link' }).click();
    const shared = a.locator('[data-share]');
    await shared.getByText(/Link copied\. Anyone with the link can watch until /).waitFor();
    const link = await a.locator('input.share-url').inputValue();
    assert.match(link, new RegExp(`^${s.url}/v1/assets/\\d+/file\\?expires=\\d+&signature=`));
    assert.equal(await a.evaluate(() => (globalThis as any).navigator.clipboard.readText()), link);
    const expiresS = Number(new URL(link).searchParams.get('expires'));
    assert.ok(Math.abs(expiresS * 1000 - (Date.now() + 7 * 24 * 3600 * 1000)) < 120_000, 'a share link lasts seven days');
    const opened = await fetch(link);
    assert.equal(opened.status, 200);
    await opened.arrayBuffer();
    const keys = await s.call('GET', '/v1/api-keys', { token: session.token });
    assert.deepEqual(keys.body.data ?? keys.body, [], 'the page works with its session and mints no API key');
    await shot(a, 'property');
    await a.goto(`${s.url}/#/properties`);
    await a.getByRole('link', { name: 'Harbour loft' }).waitFor();
    await shot(a, 'properties');

    // Deletes: a photo (the finished video keeps playing), the video (its share link stops), the property.
    await a.getByRole('link', { name: 'Harbour loft' }).click();
    await a.locator('video[data-asset]').waitFor();
    await a.getByRole('button', { name: 'Delete photo p1.jpg' }).click();
    await a.getByRole('heading', { name: 'Photos (1)' }).waitFor();
    await a.getByRole('button', { name: 'Delete video' }).click();
    await a.getByText('No videos yet.').waitFor();
    assert.equal((await fetch(link)).status, 404, "a deleted video's share link is 404");
    await a.getByRole('button', { name: 'Delete property' }).click();
    await a.waitForURL(/#\/properties$/);
    await a.getByText('No properties yet.').waitFor();

    // Billing.
    await a.goto(`${s.url}/#/billing`);
    await a
      .getByRole('button', { name: /Check out Cloud/ })
      .first()
      .waitFor();
    await a.getByRole('heading', { name: /Current plan: / }).waitFor();
    assert.match(await a.locator('tr[data-limit="servers"]').innerText(), /Game servers\s+\d+\s+(\d+|unlimited)/);
    await shot(a, 'billing');

    // Admin: token, tenants, drill-down, suspend and resume.
    await a.goto(`${s.url}/#/admin`);
    await a.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await a.getByRole('button', { name: 'Open the admin console' }).click();
    await a.getByRole('heading', { name: 'Tenants' }).waitFor();
    await shot(a, 'admin');
    await a.getByRole('link', { name: /operator@example\.com/ }).click();
    await a.getByRole('cell', { name: 'v4' }).waitFor();
    await a.getByRole('button', { name: 'Suspend tenant' }).click();
    await a.locator('[data-tenant-status]').getByText('suspended').waitFor();
    await shot(a, 'admin-tenant');
    await a.getByRole('button', { name: 'Resume tenant' }).click();
    await a.locator('[data-tenant-status]').getByText('active').waitFor();

    // A dead session sends the page back to login with a reason.
    await b.evaluate(() =>
      (globalThis as any).sessionStorage.setItem('brainstem.session', JSON.stringify({ token: 'bss_not_a_session', email: 'x@example.com' })),
    );
    await b.goto(`${s.url}/#/properties`);
    await b
      .locator('[data-flash]')
      .getByText(/session expired/i)
      .waitFor();
    await shot(b, 'session-expired');
    // Logging in again leads back to the page the link named, not to the Servers list.
    await b.getByLabel('E-mail').fill(email);
    await b.getByLabel('Password').fill('correct horse battery');
    await b.getByRole('button', { name: 'Log in' }).click();
    await b.getByRole('heading', { name: 'Properties and videos', level: 1 }).waitFor();
    assert.match(b.url(), /#\/properties$/);

    assert.deepEqual(failures, []);
  });
});
