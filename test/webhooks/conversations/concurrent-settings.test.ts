import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PAGE, widgetServer } from './setup.js';

/**
 * PATCH /v1/widgets/{id} read the settings, applied the body (checking a model base_url waits on
 * DNS), and wrote every setting back: a PATCH of another field that landed meanwhile was undone,
 * although both were answered 200. Two PATCHes of different fields at once now both hold.
 */
test('two PATCHes of different widget settings at once both hold: one waiting on DNS does not undo the other', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let asked!: () => void;
  const resolving = new Promise<void>((resolve) => (asked = resolve));
  const resolve = async (host: string) => {
    if (host === 'slow.example') {
      asked();
      await held;
    }
    return [{ address: '93.184.216.34', family: 4 as const }];
  };
  const { s, token, widgetId } = await widgetServer({ allowPrivateWebhooks: false, webhooks: { resolve } });
  try {
    const path = `/v1/widgets/${widgetId}`;
    const slow = s.call('PATCH', path, { token, body: { agent: { base_url: 'https://slow.example/v1' } } });
    await resolving;
    const quick = await s.call('PATCH', path, { token, body: { greeting: 'Hello from B', color: '#112233' } });
    assert.equal(quick.status, 200, JSON.stringify(quick.body));
    release();
    const first = await slow;
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.greeting, 'Hello from B', 'the answer shows the settings as stored');
    const now = (await s.call('GET', `${path}/settings`, { token })).body;
    assert.equal(now.greeting, 'Hello from B');
    assert.equal(now.color, '#112233');
    assert.equal(now.agent.base_url, 'https://slow.example/v1');
    assert.deepEqual(now.allowed_origins, [PAGE]);
  } finally {
    release();
    await s.stop();
  }
});
