import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Frame as PwFrame, Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../../bench/fake-openai.js';
import { buildDashboard, launchChromium, logIn, openPage, skipWithoutChromium } from '../helpers/browser.js';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { repoRoot } from '../helpers/paths.js';
import { startReceiver } from '../webhooks/receiver.js';
import { testClock } from '../webhooks/setup.js';
import type { Logger } from '../../src/log.js';

/** A third-party site: one page that embeds the widget with the documented tag, on its own origin. */
async function thirdPartySite(scriptUrl: string, widgetId: string) {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A shop</title>
<style>button{all:unset;color:red} *{font-size:40px !important}</style></head>
<body><main><h1>A shop that embeds the chat</h1><p>Products and prices.</p></main>
<script src="${scriptUrl}" data-widget="${widgetId}" async></script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const widgetRoot = (page: Page | PwFrame) => page.locator('[data-brainstem-widget]');

describe('the chat widget in a real browser, on a third-party page', { skip: skipWithoutChromium }, () => {
  let browser: Browser;
  let fake: FakeOpenAI;
  before(async () => {
    buildDashboard();
    browser = await launchChromium();
    fake = await startFakeOpenAI();
  });
  after(async () => {
    await browser?.close();
    await fake?.close();
  });

  test('chat with a model that calls tools, the lead form, a person asked for, an operator takes over and replies, the idle end; four signed deliveries in order and no personal data anywhere; axe finds no WCAG A/AA violation', async () => {
    const logs: string[] = [];
    const capture = (level: string) => (message: string, fields?: Record<string, unknown>) =>
      void logs.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
    const logger: Logger = { info: capture('info'), warn: capture('warn'), error: capture('error'), debug: capture('debug') };
    const clock = testClock();
    const rx = await startReceiver();
    const s: TestServer = await startTestServer({
      allowPrivateWebhooks: true,
      logger,
      now: clock.now,
      conversations: { idleMs: 10 * 60_000, sweepMs: 3_600_000 },
    });
    const failures: string[] = [];
    let site: Awaited<ReturnType<typeof thirdPartySite>> | null = null;
    let other: Awaited<ReturnType<typeof thirdPartySite>> | null = null;
    try {
      const { token, email } = await tenantSession(s);
      const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'Shop' } })).body as { id: string };
      const ep = (
        await s.call('POST', `/v1/widgets/${widget.id}/webhooks`, {
          token,
          body: { url: rx.url, events: ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'] },
        })
      ).body as { secret: string };
      site = await thirdPartySite(`${s.url}/widget.js`, widget.id);
      other = await thirdPartySite(`${s.url}/widget.js`, widget.id);
      const siteOrigin = `http://127.0.0.1:${site.port}`;
      const patched = await s.call('PATCH', `/v1/widgets/${widget.id}`, {
        token,
        body: {
          name: 'Shop helper',
          color: '#7a2e0e',
          greeting: 'Welcome to the shop!',
          allowed_origins: [siteOrigin],
          agent: { base_url: fake.baseUrl, model: 'fake-model', api_key: 'sk-test', knowledge: 'Parcels ship within two days.' },
        },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      fake.reply = (body) => {
        const last = String(body.messages.at(-1).content);
        if (/quote/i.test(last)) return 'Happy to prepare a quote.';
        if (/person/i.test(last)) return 'I am asking a colleague to join.';
        return 'Parcels ship within two days.';
      };
      fake.toolCalls = (body) => {
        const last = String(body.messages.at(-1).content);
        if (/quote/i.test(last)) return [{ name: 'show_lead_form', arguments: '{"reason":"wants a quote"}' }];
        if (/person/i.test(last)) return [{ name: 'escalate_to_human', arguments: '{"reason":"asked for a person"}' }];
        return [];
      };

      // A page from an origin the widget does not list: the widget does not appear, and no conversation starts.
      const refused = await openPage(browser, { width: 1200, height: 800 }, failures);
      const refusedConsole: string[] = [];
      refused.on('console', (m) => refusedConsole.push(m.text()));
      await refused.goto(`http://localhost:${other.port}/`);
      await refused.waitForFunction(() => performance.getEntriesByType('resource').some((e) => e.name.includes('/config')));
      await refused.waitForTimeout(200);
      assert.equal(await widgetRoot(refused).count(), 0);
      await refused.context().close();

      const page = await openPage(browser, { width: 390, height: 760 }, failures);
      await page.goto(`${siteOrigin}/`);
      const launcher = page.getByRole('button', { name: 'Chat with Shop helper' });
      await launcher.click();
      const dialog = page.getByRole('dialog', { name: 'Shop helper' });
      await dialog.waitFor();
      assert.ok(await page.getByText('Welcome to the shop!').isVisible());
      // Mobile width: the panel fits the viewport.
      const box = await dialog.boundingBox();
      assert.ok(box && box.width <= 390 && box.x >= 0, JSON.stringify(box));
      // The host page's CSS (button{all:unset}, 40px fonts) does not reach into the shadow root.
      assert.equal(
        await page
          .getByRole('button', { name: 'Send', exact: true })
          .evaluate((b) => (globalThis as unknown as { getComputedStyle(e: unknown): { fontSize: string } }).getComputedStyle(b).fontSize),
        '15px',
      );

      // axe-core, injected into the page, on the open widget: here, and again once the log holds
      // the visitor's, the agent's and a person's messages (a label on the visitor's coloured
      // bubble once had a contrast of 1.27:1).
      await page.addScriptTag({ path: join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js') });
      const axeViolations = () =>
        page.evaluate(async () => {
          const axe = (
            globalThis as unknown as {
              axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: { id: string; help: string; nodes: unknown[] }[] }> };
            }
          ).axe;
          const r = await axe.run(
            { include: [['[data-brainstem-widget]']] },
            { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } },
          );
          return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
        });
      assert.deepEqual(await axeViolations(), []);

      // Every agent bubble is counted at every change of the widget: a reply the event stream
      // delivers while the same reply is still streaming in must take over that bubble, never
      // stand beside it (the server tells the event stream before the reply's own stream ends).
      await page.evaluate(() => {
        const g = globalThis as unknown as { document: any; MutationObserver: any; mostAgentCopies: number };
        const root = g.document.querySelector('[data-brainstem-widget]').shadowRoot;
        g.mostAgentCopies = 0;
        new g.MutationObserver(() => {
          const counts = new Map<string, number>();
          for (const b of root.querySelectorAll('.msg.agent')) counts.set(b.textContent, (counts.get(b.textContent) ?? 0) + 1);
          for (const n of counts.values()) g.mostAgentCopies = Math.max(g.mostAgentCopies, n);
        }).observe(root, { subtree: true, childList: true, characterData: true });
      });

      // Keyboard: type and press Enter; the reply streams in.
      const input = page.getByRole('textbox', { name: 'Message', exact: true });
      await input.fill('When will my parcel ship?');
      await input.press('Enter');
      await page.getByText('Parcels ship within two days.').waitFor();

      // This reply's own stream is held back until the event stream has shown the stored reply:
      // the streamed copy that follows must not add a second bubble.
      await page.route(
        '**/v1/conversations/*/messages',
        async (route) => {
          const answer = await route.fetch();
          await page.getByText('Happy to prepare a quote.').waitFor();
          await route.fulfill({ response: answer });
        },
        { times: 1 },
      );
      await input.fill('Can I get a quote?');
      await input.press('Enter');
      const leadForm = page.getByRole('form', { name: 'Leave your details' });
      await leadForm.waitFor();
      await page.getByLabel('Name').fill('Ann Example');
      await page.getByLabel('E-mail').fill('ann@example.com');
      await page.getByLabel('Phone').fill('+44 20 7946 0958');
      await page.getByRole('button', { name: 'Send details' }).click();
      await page.getByText('Thank you! We will be in touch.').waitFor();
      await page.getByText('Happy to prepare a quote.').waitFor();
      await page.waitForFunction(() => !(globalThis as any).document.querySelector('[data-brainstem-widget]').shadowRoot.querySelector('[aria-busy]'));
      assert.equal(await page.evaluate(() => (globalThis as unknown as { mostAgentCopies: number }).mostAgentCopies), 1, 'no agent reply was ever shown twice');

      await input.fill('Can I talk to a person?');
      await input.press('Enter');
      await page.getByText('A person from our team has been asked to join.').first().waitFor();

      // The operator, in a second page: the Conversations page, take over, reply as a person.
      const list = await s.call('GET', `/v1/widgets/${widget.id}/conversations`, { token });
      const conversationId = list.body.data[0].id as string;
      const operator = await openPage(browser, { width: 1280, height: 900 }, failures);
      await logIn(operator, s.url, email);
      await operator.goto(`${s.url}/#/widgets/${widget.id}/settings/conversations/${conversationId}`);
      await operator.getByRole('list', { name: 'Transcript' }).getByText('Can I talk to a person?').waitFor();
      await operator.getByText('ann@example.com').waitFor();
      await operator.getByRole('button', { name: 'Hand back to the agent' }).waitFor();
      await operator.getByRole('textbox', { name: 'Reply as a person' }).fill('Hi Ann, Bo here. How can I help?');
      await operator.getByRole('button', { name: 'Send reply' }).click();
      // Delivered live to the widget.
      await page.getByText('Hi Ann, Bo here. How can I help?').waitFor();
      assert.ok(await page.getByText('Team member').isVisible());
      assert.deepEqual(await axeViolations(), []);

      // The idle end: the clock moves past the idle time and the sweep ends it; the widget is told.
      clock.advance(10 * 60_000 + 1_000);
      assert.equal(await s.conversations.sweep(), 1);
      await page.getByText('This conversation has ended.').waitFor();

      await rx.waitFor(4);
      await s.webhooks.dispatcher.runDue();
      assert.equal(rx.received.length, 4);
      assert.deepEqual(
        rx.received.map((r) => JSON.parse(r.body).event),
        ['conversation.started', 'lead.captured', 'escalation.triggered', 'conversation.ended'],
      );
      for (const r of rx.received) {
        assert.equal(r.headers['x-service-signature'], `v1=${createHmac('sha256', ep.secret).update(r.body).digest('hex')}`);
        assert.equal(JSON.parse(r.body).data.conversation_id, conversationId);
      }
      const pii = /ann@example\.com|7946|0958|\+44/;
      for (const r of rx.received) assert.ok(!pii.test(r.body), r.body);
      for (const line of logs) assert.ok(!pii.test(line), line);
      assert.deepEqual(failures, []);
    } finally {
      await s.stop();
      await rx.close();
      await site?.close();
      await other?.close();
    }
  });
});
