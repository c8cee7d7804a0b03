import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, startVideoServer, storedFiles, testImage } from './helpers.js';

/**
 * A property deleted while photos were being uploaded to it: the upload's insert failed on the
 * foreign key and the client got a 500. It is a 404 now, and the uploaded files are removed.
 */
test('a property deleted during a photo upload: the upload is 404 and stores nothing', async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const boundary = 'brainstem-test-boundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
    const image = testImage('png');
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    let finish!: () => void;
    const deleted = new Promise<void>((resolve) => (finish = resolve));
    let sentFirstHalf!: () => void;
    const firstHalfSent = new Promise<void>((resolve) => (sentFirstHalf = resolve));
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(Buffer.concat([head, image.subarray(0, 100)]));
        sentFirstHalf();
        await deleted;
        controller.enqueue(Buffer.concat([image.subarray(100), tail]));
        controller.close();
      },
    });
    const upload = fetch(`${s.url}/v1/properties/${pid}/photos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    await firstHalfSent;
    // The upload's handler has looked the property up once its first bytes arrived; wait until the server holds its staged file.
    while (storedFiles(s).length === 0) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: key })).status, 204);
    finish();
    const res = await upload;
    const answer = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(res.status, 404, JSON.stringify(answer));
    assert.equal(answer.error.code, 'not_found');
    assert.match(answer.error.message, /deleted while this request was under way/);
    assert.deepEqual(storedFiles(s), [], 'neither the staged nor the stored photo is left');
  } finally {
    await s.stop();
  }
});
