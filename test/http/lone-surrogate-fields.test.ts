/**
 * Regression: a string field holding a lone surrogate (`"\ud800"` in JSON) was accepted and
 * echoed as sent, but stored as U+FFFD, so the record read back other than the 201 that created
 * it (a property title, a server or widget name, a telemetry event kind). Such a string is now 422 on its field, and
 * nothing is created.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fields } from '../../src/http/validate.js';
import { tenantSession } from '../helpers/embedded.js';
import { report, serverWithKey, signed } from '../controlplane/helpers.js';
import { apiKey, startVideoServer } from '../video/helpers.js';

test('Fields.string refuses a lone surrogate and takes a surrogate pair', () => {
  const f = new Fields({ a: 'x\ud800', b: '\udc00y', c: '🔑' });
  assert.equal(f.string('a'), undefined);
  assert.equal(f.string('b'), undefined);
  assert.equal(f.string('c'), '🔑');
  assert.deepEqual(
    f.details.map((d) => d.path),
    ['a', 'b'],
  );
  assert.match(f.details[0]!.message, /well-formed Unicode/);
});

test('a property title, a server name and a widget name with a lone surrogate are 422 and create nothing', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const { token } = await tenantSession(s, 'agency');
    for (const [credential, path, body, list] of [
      [key, '/v1/properties', { title: 'Loft\ud800', address: '1 Quay' }, '/v1/properties'],
      [token, '/v1/servers', { name: 'EU\udc00' }, '/v1/servers'],
      [token, '/v1/widgets', { name: '\ud83dsite' }, '/v1/widgets'],
    ] as const) {
      const before = (await s.call('GET', list, { token: credential })).body;
      const r = await s.call('POST', path, { token: credential, body });
      assert.equal(r.status, 422, path);
      assert.equal(r.body.error.code, 'validation_failed');
      assert.equal(r.body.error.details.length, 1, path);
      assert.deepEqual((await s.call('GET', list, { token: credential })).body, before, path);
    }
  } finally {
    await s.stop();
  }
});

test('a telemetry report with a lone surrogate in an event kind or a roster name is 422 and stores nothing', async () => {
  const s = await startVideoServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    for (const [i, extra] of [
      { events: [{ kind: 'spoke\ud800', count: 1 }] },
      { roster: [{ agent: 1, name: '\udc00', alignment: 'neutral', goal: 'loot', state: 'idle' }] },
    ].entries()) {
      const r = await signed(s, a.key, 'POST', `/v1/telemetry?n=${i}`, { body: report(a.serverId, extra) });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.error.details.length, 1);
    }
    assert.deepEqual((await s.call('GET', `/v1/servers/${a.serverId}/activity`, { token })).body, []);
  } finally {
    await s.stop();
  }
});
