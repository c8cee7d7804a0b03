import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { cli } from '../helpers/paths.js';
import { serviceSignature } from '../../src/public/webhooks.js';
import { LEAD, webhookServer } from './setup.js';

test('webhooks listen verifies a real delivery (200) and refuses a forged one (400), printing JSON lines', async () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--secret', secret, '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
  const { s, addEndpoint, post, widgetId } = await webhookServer();
  try {
    const { listening } = await next();
    assert.match(listening, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const ep = await addEndpoint({ url: listening, events: ['lead.captured'], secret });
    await post('lead.captured', LEAD);
    const line = await next();
    assert.equal(line.valid, true);
    assert.equal(line.event, 'lead.captured');
    assert.match(line.id, /^dlv_/);
    assert.deepEqual(line.payload, { event: 'lead.captured', widget_id: widgetId, data: LEAD });
    await s.webhooks.dispatcher.runDue();
    const [d] = (await s.webhooks.service.store.listDeliveries(ep.id as never, { limit: 1, before: null })).data;
    assert.equal(d!.status, 'succeeded');
    assert.equal(d!.lastStatusCode, 200);

    const forged = await fetch(listening, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': `v1,${'A'.repeat(44)}` },
      body: '{"event":"lead.captured"}',
    });
    assert.equal(forged.status, 400);
    const refused = await next();
    assert.equal(refused.valid, false);
    assert.equal(refused.error, 'bad_signature');

    // issue 14: a delivery signed only with X-Service-Signature binds no timestamp (replayable): refused by default.
    const body = '{"event":"lead.captured"}';
    const untimestamped = await fetch(listening, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': serviceSignature(body, secret) }, body });
    assert.equal(untimestamped.status, 400);
    assert.equal((await next()).error, 'missing_signature');
  } finally {
    child.kill('SIGTERM');
    await s.stop();
  }
});

test('webhooks listen --allow-untimestamped accepts X-Service-Signature alone', async () => {
  const secret = 'plain shared secret';
  const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--secret', secret, '--port', '0', '--json', '--allow-untimestamped'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
  try {
    const { listening } = await next();
    const body = '{"event":"lead.captured"}';
    const res = await fetch(listening, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': serviceSignature(body, secret) }, body });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const line = await next();
    assert.equal(line.valid, true);
    assert.equal(line.scheme, 'x-service-signature');
  } finally {
    child.kill('SIGTERM');
  }
});
