import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startEmbedded, type Embedded } from '../../src/embedded/start.js';
import { launchChromium, openPage, skipWithoutChromium } from '../helpers/browser.js';
import { ADMIN_TOKEN } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';
import { freePort } from '../helpers/taken-port.js';

async function call(base: string, method: string, path: string, token: string | null, body?: unknown) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

let browser: Browser;
before(async () => {
  if (!skipWithoutChromium) browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

test(
  'the widget survives a server restart: its event stream reconnects, a reply sent meanwhile arrives once, the transcript is whole after a reload',
  { skip: skipWithoutChromium },
  async () => {
    const dir = tempDir();
    const port = await freePort();
    const options = { port, db: join(dir.path, 'r.db'), adminToken: ADMIN_TOKEN };
    let s: Embedded = await startEmbedded(options);
    const failures: string[] = [];
    try {
      const tenant = await call(s.url, 'POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: 'r', plan: 'pro' });
      await call(s.url, 'POST', `/v1/admin/tenants/${tenant.body.id}/users`, ADMIN_TOKEN, { email: 'r@r.test', password: 'correct horse battery' });
      const token = (await call(s.url, 'POST', '/v1/auth/login', null, { email: 'r@r.test', password: 'correct horse battery' })).body.token as string;
      const widget = (await call(s.url, 'POST', '/v1/widgets', token, { name: 'Helper' })).body;
      await call(s.url, 'PATCH', `/v1/widgets/${widget.id}`, token, { agent: { knowledge: 'Delivery takes two days.' } });

      // The demo page is on the server's own origin, which every widget admits.
      const page = await openPage(browser, { width: 1000, height: 800 }, failures);
      await page.goto(`${s.url}/demo/widget?widget=${widget.id}`);
      await page.getByRole('button', { name: 'Chat with Helper' }).click();
      const input = page.getByRole('textbox', { name: 'Message', exact: true });
      await input.fill('How long does delivery take?');
      await input.press('Enter');
      await page.getByText('Delivery takes two days.').waitFor();
      const cid = (await call(s.url, 'GET', `/v1/widgets/${widget.id}/conversations`, token)).body.data[0].id as string;

      await s.close();
      s = await startEmbedded(options);
      const reply = await call(s.url, 'POST', `/v1/widgets/${widget.id}/conversations/${cid}/reply`, token, { text: 'Sent after the restart.' });
      assert.equal(reply.status, 201);
      await page.getByText('Sent after the restart.').waitFor({ timeout: 30_000 });
      assert.equal(await page.getByText('Sent after the restart.').count(), 1);

      await page.reload();
      await page.getByRole('button', { name: 'Chat with Helper' }).click();
      for (const text of ['How long does delivery take?', 'Delivery takes two days.', 'Sent after the restart.']) await page.getByText(text).waitFor();
      assert.equal(await page.getByText('Sent after the restart.').count(), 1);
      const detail = await call(s.url, 'GET', `/v1/widgets/${widget.id}/conversations/${cid}`, token);
      assert.deepEqual(
        detail.body.messages.map((m: { role: string }) => m.role),
        ['visitor', 'agent', 'operator'],
      );
      assert.deepEqual(failures, []);
    } finally {
      await s.close();
      dir.dispose();
    }
  },
);
