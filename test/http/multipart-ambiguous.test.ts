import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mediaParameters } from '../../src/http/media-type.js';

const repeatedParameter = (value: string) => mediaParameters(value).repeated;
import { apiKey, createProperty, postPhotosBody, startVideoServer, storedFiles, testImage } from '../video/helpers.js';

/**
 * A multipart upload that says two things is refused rather than read one way: a Content-Type
 * naming `boundary` twice (the form parser took the first, silently), and a file name whose
 * bytes are not UTF-8 (stored with U+FFFD in their place, silently).
 */

test('mediaParameters reads quoted values and finds a parameter named twice, in any case, past quoted values', () => {
  assert.equal(repeatedParameter('multipart/form-data; boundary=a'), null);
  assert.equal(repeatedParameter('multipart/form-data'), null);
  assert.equal(repeatedParameter('multipart/form-data; boundary=a; boundary=b'), 'boundary');
  assert.equal(repeatedParameter('multipart/form-data; boundary=a;BOUNDARY="b"'), 'boundary');
  assert.equal(repeatedParameter('multipart/form-data; boundary="x;boundary=y"'), null);
  assert.equal(repeatedParameter('multipart/form-data; boundary="x\\";boundary=y"; charset=utf-8'), null);
  assert.equal(repeatedParameter('multipart/form-data; charset=utf-8; boundary=a; charset=latin1'), 'charset');
  assert.equal(repeatedParameter('multipart/form-data; flag; flag; boundary=a'), null);
  assert.equal(repeatedParameter('multipart/form-data; boundary="unterminated; boundary=b'), null);
  assert.equal(mediaParameters('multipart/form-data; Boundary="a\\"b;c" ; charset=utf-8').values.get('boundary'), 'a"b;c');
  assert.equal(mediaParameters('multipart/form-data; boundary= XX ').values.get('boundary'), 'XX');
});

function part(head: string, data: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from('--XX\r\nContent-Disposition: form-data; name="photos"; filename="', 'latin1'),
    Buffer.from(head, 'latin1'),
    Buffer.from('"\r\nContent-Type: image/png\r\n\r\n'),
    data,
    Buffer.from('\r\n'),
  ]);
}

test('a multipart upload with an ambiguous Content-Type or a file name that is not UTF-8 is refused, and stores nothing', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const png = testImage('png', '64x48');
    const send = (contentType: string, body: Buffer) => postPhotosBody(s, key, pid, contentType, body);
    const good = (name: string) => Buffer.concat([part(name, png), Buffer.from('--XX--\r\n')]);

    for (const type of [
      'multipart/form-data; boundary=XX; boundary=YY',
      'multipart/form-data; boundary=YY; Boundary=XX',
      'multipart/form-data; boundary=XX; boundary=XX',
    ]) {
      const r = await send(type, good('a.png'));
      assert.equal(r.status, 400, `${type}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'bad_request');
      assert.match(r.body.error.message, /parameter "boundary" twice/);
    }

    // Latin-1 `Façade.png` (0xE7), a cut sequence, and the replacement character itself.
    for (const name of ['Fa\xe7ade.png', 'x\xe2\x82.png', '\xef\xbf\xbd.png']) {
      const body = Buffer.concat([part('first.png', png), part(name, png), Buffer.from('--XX--\r\n')]);
      const r = await send('multipart/form-data; boundary=XX', body);
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'validation_failed');
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        ['photos[1].filename'],
      );
    }
    // A part busboy skips without a word: no Content-Disposition, one not form-data, one it cannot parse.
    for (const head of [
      'Content-Type: image/png',
      'Content-Disposition: attachment; name="photos"; filename="b.png"',
      'Content-Disposition: form-data; name="photos"; filename="unterminated.png',
    ]) {
      const odd = Buffer.concat([Buffer.from(`--XX\r\n${head}\r\n\r\n`), png, Buffer.from('\r\n')]);
      const r = await send('multipart/form-data; boundary=XX', Buffer.concat([part('first.png', png), odd, Buffer.from('--XX--\r\n')]));
      assert.equal(r.status, 400, `${head}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error.message, /Content-Disposition: form-data/);
    }
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 0, 'nothing was stored');
    assert.deepEqual(storedFiles(s), [], 'no file left behind');

    // A form's own text field beside the photo, a preamble and an epilogue are fine.
    const field = Buffer.from('--XX\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n');
    const ok = await send(
      'multipart/form-data; boundary="XX"',
      Buffer.concat([Buffer.from('preamble\r\n'), field, part(Buffer.from('Façade.png').toString('latin1'), png), Buffer.from('--XX--\r\nepilogue')]),
    );
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.data[0].filename, 'Façade.png');
  } finally {
    await s.stop();
  }
});
