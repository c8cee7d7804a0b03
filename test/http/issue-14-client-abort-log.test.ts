import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { Logger } from '../../src/log.js';
import { waitFor } from '../stack/helpers.js';
import { apiKey, createProperty, startVideoServer, storedFiles, testImage } from '../video/helpers.js';

// Every client abort was logged at error level.

test('issue 14: a client that goes away mid-upload is logged at debug level, never as an error', async () => {
  const logs: { level: string; message: string }[] = [];
  const logger: Logger = {
    info: () => {},
    warn: (message) => void logs.push({ level: 'warn', message }),
    error: (message) => void logs.push({ level: 'error', message }),
    debug: (message) => void logs.push({ level: 'debug', message }),
  };
  const s = await startVideoServer({ logger });
  try {
    const { key } = await apiKey(s);
    const id = await createProperty(s, key);
    const part = Buffer.concat([
      Buffer.from('--x\r\nContent-Disposition: form-data; name="photos"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n'),
      testImage('jpg').subarray(0, 1000),
    ]);
    for (let i = 0; i < 2; i++) {
      const staged = storedFiles(s).length;
      const socket = connect(s.port, '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((resolve) => socket.on('connect', resolve));
      socket.write(
        `POST /v1/properties/${id}/photos HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: multipart/form-data; boundary=x\r\ncontent-length: 10000000\r\n\r\n`,
      );
      // Sent and read by the server (its first chunk reaches the upload), then the client resets.
      await new Promise<void>((resolve) => socket.write(part, () => resolve()));
      await waitFor('the upload to be staged', async () => (storedFiles(s).length > staged ? true : undefined));
      socket.resetAndDestroy();
      await waitFor(`abort ${i + 1} to be noticed`, async () => (logs.filter((l) => l.level === 'debug').length > i ? true : undefined));
    }
    assert.deepEqual(
      logs.filter((l) => l.level === 'error'),
      [],
    );
    assert.ok(logs.some((l) => l.level === 'debug' && l.message === 'client went away'));
    // And the server goes on.
    assert.equal((await fetch(`${s.url}/health`)).status, 200);
  } finally {
    await s.stop();
  }
});
