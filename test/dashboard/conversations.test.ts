import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';

describe('dashboard: chat widget settings, conversations and analytics', { skip: skipWithoutChromium }, () => {
  let browser: Browser;
  let s: TestServer;
  let token: string;
  let email: string;
  let widgetId: string;

  before(async () => {
    buildDashboard();
    s = await startTestServer({ allowPrivateWebhooks: true });
    ({ token, email } = await tenantSession(s));
    widgetId = (await s.call('POST', '/v1/widgets', { token, body: { name: 'Support' } })).body.id;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  test('settings: the embed snippet, appearance, allowed origins and the agent are saved; a bad origin is shown at its field', async () => {
    const failures: string[] = [];
    const page = await openPage(browser, { width: 1280, height: 900 }, failures);
    await logIn(page, s.url, email);
    await page.goto(`${s.url}/#/widgets/${widgetId}/settings`);
    const snippet = await page.locator('[data-embed]').textContent();
    assert.equal(snippet, `<script src="${s.url}/widget.js" data-widget="${widgetId}" async></script>`);
    await page.getByLabel('Greeting').fill('Welcome!');
    await page.getByLabel('Allowed origins (one per line)').fill('https://shop.example\nnot an origin');
    await page.getByRole('button', { name: 'Save chat settings' }).click();
    await page.getByText('must be an origin').waitFor();
    await page.getByLabel('Allowed origins (one per line)').fill('https://shop.example');
    await page.getByLabel('Knowledge').fill('We ship in two days.');
    await page.getByRole('button', { name: 'Save chat settings' }).click();
    await page.getByText('Saved.').waitFor();
    const saved = await s.call('GET', `/v1/widgets/${widgetId}/settings`, { token });
    assert.equal(saved.body.greeting, 'Welcome!');
    assert.deepEqual(saved.body.allowed_origins, ['https://shop.example']);
    assert.equal(saved.body.agent.knowledge, 'We ship in two days.');
    assert.deepEqual(failures, []);
  });

  test('Conversations lists a live conversation with its transcript; close ends it; Analytics › Conversations shows the day', async () => {
    const failures: string[] = [];
    const c = await fetch(`${s.url}/v1/widgets/${widgetId}/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }).then((r) => r.json() as Promise<{ conversation_id: string; token: string }>);
    await fetch(`${s.url}/v1/conversations/${c.conversation_id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'When do you ship?' }),
    }).then((r) => r.text());
    const page = await openPage(browser, { width: 1280, height: 900 }, failures);
    await logIn(page, s.url, email);
    await page.goto(`${s.url}/#/widgets/${widgetId}/settings/conversations`);
    await page.getByRole('link', { name: c.conversation_id }).click();
    const transcript = page.getByRole('list', { name: 'Transcript' });
    await transcript.getByText('When do you ship?').waitFor();
    await transcript.getByText('We ship in two days.').waitFor();
    // htm drops whitespace that holds a line break, so the summary once read "·live ·handled".
    assert.match((await page.locator('.transcript .hint').first().textContent()) ?? '', / · live · handled by the agent/);
    await page.getByRole('button', { name: 'Close conversation' }).click();
    await page
      .getByText(/ended .*\(agent_closed\)/)
      .first()
      .waitFor();
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}/conversations/${c.conversation_id}`, { token })).body.ended_reason, 'agent_closed');

    await page.goto(`${s.url}/#/widgets/${widgetId}/settings/analytics/conversations`);
    const today = new Date().toISOString().slice(0, 10);
    const row = page.getByRole('table', { name: 'Conversations per day' }).getByRole('row').filter({ hasText: today });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', new RegExp(`${today}1`));
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('Analytics › Webhooks').waitFor();
    assert.deepEqual(failures, []);
  });
});
