import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, startVideoServer, testImage } from './helpers.js';

/** A JSON upload whose data_base64 is a data URL (as FileReader.readAsDataURL gives) was a 422 "not valid base64". */
test('JSON photo upload takes data_base64 as plain base64 or as a data URL', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const png = testImage('png').toString('base64');
    const r = await s.call('POST', `/v1/properties/${pid}/photos`, {
      token: key,
      body: {
        photos: [
          { filename: 'a.png', data_base64: `data:image/png;base64,${png}` },
          { filename: 'b.png', data_base64: png },
        ],
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.data.map((p: { content_type: string }) => p.content_type),
      ['image/png', 'image/png'],
    );
    const bad = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ data_base64: 'data:image/png;base64,@@@' }] } });
    assert.equal(bad.status, 422);
  } finally {
    await s.stop();
  }
});
