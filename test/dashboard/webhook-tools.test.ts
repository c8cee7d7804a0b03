import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

describe('dashboard: webhook payloads, answers, replay, the breaker banner and the event catalogue', { skip: skipWithoutChromium }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let token: string;
  let rx: Receiver;
  let gone: Receiver;
  let widgetId: string;
  let endpointId: string;
  const failures: string[] = [];

  before(async () => {
    buildDashboard();
    rx = await startReceiver(() => ({ status: 500, body: 'receiver says no' }));
    gone = await startReceiver(() => ({ status: 410, body: 'gone' }));
    s = await startTestServer({ allowPrivateWebhooks: true, webhooks: { dispatcher: { retryDelays: [] } } });
    const session = await tenantSession(s, 'agency');
    token = session.token;
    widgetId = (await s.call('POST', '/v1/widgets', { token, body: { name: 'Help desk' } })).body.id;
    endpointId = (await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: rx.url, events: ['conversation.started'] } })).body.id;
    await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: gone.url, events: ['conversation.started'] } });
    await s.call('POST', `/v1/widgets/${widgetId}/events`, { token, body: { event: 'conversation.started', data: { conversation_id: 'ses_dash1' } } });
    await rx.waitFor(1);
    await gone.waitFor(1);
    await s.webhooks.dispatcher.runDue();
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 900 }, failures);
    await logIn(page, s.url, session.email);
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
    await rx?.close();
    await gone?.close();
  });

  test('the widgets page shows the breaker banner for the endpoint that answered 410', async () => {
    await page.goto(`${s.url}/#/widgets`);
    const banner = page.locator('[data-disabled-banner]');
    await banner.waitFor();
    assert.match(await banner.innerText(), /410 Gone/);
    assert.match(await banner.innerText(), new RegExp(gone.url.replace(/[.?]/g, '\\$&')));
  });

  test("a delivery's details show the request body and the receiver's status and answer", async () => {
    await page.goto(`${s.url}/#/widgets/${widgetId}/settings/analytics/webhooks`);
    const item = page.locator(`[data-endpoint="${endpointId}"]`);
    await item.getByRole('button', { name: 'Details' }).first().click();
    const payload = item.locator('[data-payload]');
    await payload.waitFor();
    assert.deepEqual(JSON.parse(await payload.innerText()), { event: 'conversation.started', widget_id: widgetId, data: { conversation_id: 'ses_dash1' } });
    assert.equal(await item.locator('[data-response]').first().innerText(), 'receiver says no');
    assert.match(await item.locator('.attempts li').first().innerText(), /failed · 500/);
  });

  test('replay: count the failed deliveries since a time, then replay them', async () => {
    await page.goto(`${s.url}/#/widgets/${widgetId}/settings/analytics/webhooks`);
    const item = page.locator(`[data-endpoint="${endpointId}"]`);
    await item.getByLabel('Replay failed deliveries since').fill('2020-01-01T00:00');
    await item.getByRole('button', { name: 'Count failed' }).click();
    await item.locator('[data-replay-count="1"]').waitFor();
    rx.setResponder(() => ({ status: 200 }));
    await item.getByRole('button', { name: 'Replay 1' }).click();
    await item.getByText('1 delivery queued again.').waitFor();
    await rx.waitFor(2);
  });

  test('the event catalogue page lists the five event types with their schemas', async () => {
    await page.goto(`${s.url}/#/webhook-event-types`);
    await page.locator('[data-event-type="endpoint.disabled"]').waitFor();
    assert.equal(await page.locator('[data-event-type]').count(), 5);
    assert.deepEqual(failures, []);
  });
});
