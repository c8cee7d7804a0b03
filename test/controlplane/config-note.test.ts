/**
 * X-Config-Note lost text: a header carries bytes, and the HTTP server drops non-ASCII bytes at
 * either end of a value ("Réglages été" was stored as "Réglages ét"), while browsers and Node's
 * fetch refuse a character past U+00FF in a header at all (the dashboard's publish failed with a
 * note holding an emoji). A note that is not printable ASCII is sent as RFC 8187's
 * `UTF-8''<percent-encoded UTF-8>`, which the dashboard and `config publish` do; raw non-ASCII is
 * a 422 that says so instead of being stored altered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noteHeaderValue } from '../../src/controlplane/config-routes.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';

test("X-Config-Note: printable ASCII as is, other text as UTF-8''percent-encoding (what noteHeaderValue makes), stored as written", async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const server = await s.call('POST', '/v1/servers', { token, body: { name: 'alpha' } });
    const path = `/v1/servers/${server.body.id}`;
    const publish = async (note: string) => {
      const head = await s.call('GET', `${path}/config`, { token });
      return s.call('PUT', `${path}/config`, { token, body: head.body, headers: { 'x-config-note': note } });
    };
    const lastNote = async () => (await s.call('GET', `${path}/config/versions?limit=1`, { token })).body[0].note as string;

    assert.equal(noteHeaderValue('plain note'), 'plain note');
    for (const note of ['Réglages été', '日本語のメモ', 'emoji at the end 😀', 'é', '100% sure']) {
      const r = await publish(noteHeaderValue(note));
      assert.equal(r.status, 200, `${note}: ${JSON.stringify(r.body)}`);
      assert.equal(await lastNote(), note);
    }
    const most = await publish(noteHeaderValue('😀'.repeat(500)));
    assert.equal(most.status, 200, 'a limit of 500 characters counts an emoji once');
    const before = await lastNote();
    for (const [header, message] of [
      ['a\u00e9b', /printable ASCII, or UTF-8''/],
      ["UTF-8''%ZZ", /not percent-encoded UTF-8/],
      ["UTF-8''%E9", /not percent-encoded UTF-8/],
      ["UTF-8''a%00b", /U\+0000/],
      [noteHeaderValue('😀'.repeat(501)), /at most 500 characters, got 501/],
    ] as const) {
      const r = await publish(header);
      assert.equal(r.status, 422, header);
      assert.equal(r.body.error.details[0].path, 'X-Config-Note');
      assert.match(r.body.error.details[0].message, message);
    }
    assert.equal(await lastNote(), before, 'nothing published');
    const back = await s.call('POST', `${path}/config/rollback`, { token, body: { version: 1 }, headers: { 'x-config-note': noteHeaderValue('zurück') } });
    assert.equal(back.status, 200);
    assert.equal(await lastNote(), 'zurück');
  } finally {
    await s.stop();
  }
});
