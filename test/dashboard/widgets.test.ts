import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';

const VIEWPORT = { width: 1280, height: 860 };

describe('dashboard: widgets pages', { skip: skipWithoutChromium }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let email: string;
  let token: string;
  const failures: string[] = [];

  before(async () => {
    buildDashboard();
    s = await startTestServer({ allowPrivateWebhooks: true });
    ({ email, token } = await tenantSession(s, 'agency'));
    browser = await launchChromium();
    page = await openPage(browser, VIEWPORT, failures);
    await logIn(page, s.url, email);
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

  test('an endpoint can be edited (URL and events): the page had no way to change either', async () => {
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'Support' } })).body as { id: string };
    const created = await s.call('POST', `/v1/widgets/${widget.id}/webhooks`, {
      token,
      body: { url: 'http://127.0.0.1:9/old', events: ['conversation.started', 'lead.captured'] },
    });
    assert.equal(created.status, 201);
    const ep = created.body as { id: string };
    await page.goto(`${s.url}/#/widgets/${widget.id}/settings/analytics/webhooks`);
    const item = page.locator(`[data-endpoint="${ep.id}"]`);
    await item.getByRole('button', { name: 'Edit' }).click();

    // A URL the server refuses: its 422 shows at the field and nothing changes.
    await item.getByLabel('Endpoint URL').fill('ftp://127.0.0.1/hook');
    await item.getByRole('button', { name: 'Save endpoint' }).click();
    await item.locator(`[data-error-for="edit-${ep.id}-url"]`).waitFor();
    assert.equal(((await s.call('GET', `/v1/widgets/${widget.id}/webhooks/${ep.id}`, { token })).body as { url: string }).url, 'http://127.0.0.1:9/old');

    // By keyboard: the new URL, lead.captured off, Enter saves.
    await item.getByLabel('lead.captured').uncheck();
    await item.getByLabel('conversation.ended').check();
    await item.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/new');
    await item.getByLabel('Endpoint URL').press('Enter');
    await item.getByRole('heading', { name: 'http://127.0.0.1:9/new' }).waitFor();
    await item.getByText('conversation.started, conversation.ended').waitFor();
    const saved = (await s.call('GET', `/v1/widgets/${widget.id}/webhooks/${ep.id}`, { token })).body as { url: string; events: string[] };
    assert.equal(saved.url, 'http://127.0.0.1:9/new');
    assert.deepEqual(saved.events, ['conversation.started', 'conversation.ended']);
    assert.equal(await item.getByRole('button', { name: 'Save endpoint' }).count(), 0, 'the form closes after saving');
    assert.deepEqual(failures, []);
  });
});
