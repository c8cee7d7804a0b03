/**
 * A JSON body giving one key twice was read as its last value (`{"plan": "trial", "plan":
 * "enterprise"}` is enterprise to JSON.parse, trial to a reader that keeps the first): a body
 * that says two things is a 400 naming the key now, as a query parameter given twice is, and
 * nothing changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repeatedKey } from '../../src/http/codec.js';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';

test('repeatedKey finds a key given twice in one object, at any depth, compared decoded', () => {
  assert.equal(repeatedKey('{"a":1,"b":2}'), null);
  assert.equal(repeatedKey('{"a":1,"a":2}'), 'a');
  assert.equal(repeatedKey('{"a":1,"\\u0061":2}'), 'a', 'an escaped spelling is the same key');
  assert.equal(repeatedKey('{"a":{"b":1},"c":{"b":2}}'), null, 'the same key in two objects');
  assert.equal(repeatedKey('[{"a":1},{"a":2}]'), null, 'objects in an array are each their own');
  assert.equal(repeatedKey('{"x":[{"a":1,"a":2}]}'), 'a');
  assert.equal(repeatedKey('{"a":"a","b":"a"}'), null, 'values are not keys');
  assert.equal(repeatedKey('{"a\\"b":1,"c":"\\"a\\"b\\":","a\\"b":2}'), 'a"b', 'quotes escaped in keys and values');
  assert.equal(repeatedKey('{"a":[1,2,{"b":[]}],"b":1,"a":2}'), 'a', 'after nested arrays the outer object is read on');
  assert.equal(repeatedKey('{}'), null);
  assert.equal(repeatedKey('"a"'), null);
});

test('a body giving a key twice is a 400 naming it, on a top-level key and a nested one; nothing changes', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'pro');
    const twice = await s.call('POST', '/v1/servers', { token, body: '{"name":"first","name":"second"}' });
    assert.deepEqual([twice.status, twice.body.error.code], [400, 'bad_request']);
    assert.match(twice.body.error.message, /"name" twice/);
    assert.deepEqual((await s.call('GET', '/v1/servers', { token })).body, [], 'nothing created');

    const tenant = await s.call('POST', '/v1/admin/tenants', { token: ADMIN_TOKEN, body: '{"name":"t","plan":"trial","plan":"enterprise"}' });
    assert.equal(tenant.status, 400);
    assert.match(tenant.body.error.message, /"plan" twice/);

    const w = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    const nested = await s.call('PATCH', `/v1/widgets/${w.body.id}`, { token, body: '{"agent":{"model":"a","model":"b"}}' });
    assert.equal(nested.status, 400);
    assert.match(nested.body.error.message, /"model" twice/);
    assert.equal((await s.call('GET', `/v1/widgets/${w.body.id}/settings`, { token })).body.agent.model, null);

    const ok = await s.call('POST', '/v1/servers', { token, body: '{"name":"one"}' });
    assert.equal(ok.status, 201);
  } finally {
    await s.stop();
  }
});
