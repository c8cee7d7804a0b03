import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { ByteBudget } from '../../src/http/byte-budget.js';
import { JSON_UPLOAD_BUDGET_BYTES, UPLOAD_LIMITS } from '../../src/video/index.js';
import { apiKey, createProperty, startVideoServer, storedFiles, testImage } from './helpers.js';

/** `{photos: [one small JPEG]}` padded with whitespace to exactly `size` bytes. */
function jsonBody(size: number): Buffer {
  const core = JSON.stringify({ photos: [{ filename: 'p.jpg', data_base64: testImage('jpg').toString('base64') }] });
  return Buffer.concat([Buffer.from(core), Buffer.alloc(size - core.length, 0x20)]);
}

async function post(url: string, key: string, body: Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

test('a JSON photo body is at most 25 MiB: one byte more is 413 payload_too_large, exactly 25 MiB is read', async () => {
  assert.equal(UPLOAD_LIMITS.maxJsonBytes, 25 * 1024 * 1024);
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const url = `${s.url}/v1/properties/${pid}/photos`;
    const over = await post(url, key, jsonBody(UPLOAD_LIMITS.maxJsonBytes + 1));
    assert.equal(over.status, 413);
    assert.equal(over.body.error.code, 'payload_too_large');
    assert.match(over.body.error.message, /multipart/);
    const at = await post(url, key, jsonBody(UPLOAD_LIMITS.maxJsonBytes));
    assert.equal(at.status, 201, JSON.stringify(at.body));
  } finally {
    await s.stop();
  }
});

test('JSON uploads share one memory budget: over it the answer is 503 unavailable with Retry-After, and the bytes come back', async () => {
  assert.equal(JSON_UPLOAD_BUDGET_BYTES, 128 * 1024 * 1024);
  const budget = new ByteBudget(1024 * 1024);
  const s = await startVideoServer({ video: { jsonUploadBudget: budget } });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const path = `/v1/properties/${pid}/photos`;
    const first = jsonBody(700_000);
    // The first upload declares its length and sends half: the server holds its bytes while it waits.
    const held = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(
        `${s.url}${path}`,
        { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(first.length) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
        },
      );
      req.on('error', reject);
      req.write(first.subarray(0, 350_000));
      const finish = setInterval(() => {
        if (budget.held === 0) return;
        clearInterval(finish);
        void post(`${s.url}${path}`, key, jsonBody(700_000)).then((second) => {
          refused = second;
          req.end(first.subarray(350_000));
        }, reject);
      }, 5);
    });
    let refused: Awaited<ReturnType<typeof post>> | null = null;
    const done = await held;
    assert.equal(refused!.status, 503);
    assert.equal(refused!.body.error.code, 'unavailable');
    assert.equal(refused!.headers.get('retry-after'), '1');
    assert.ok(refused!.headers.get('x-ratelimit-limit'));
    assert.equal(done.status, 201, JSON.stringify(done.body));
    assert.equal(budget.held, 0);
    assert.equal((await post(`${s.url}${path}`, key, jsonBody(700_000))).status, 201);

    // Without a Content-Length the bytes are taken as they arrive.
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(jsonBody(1_500_000));
        c.close();
      },
    });
    const res = await fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as any).error.code, 'unavailable');
    assert.equal(budget.held, 0);
    assert.equal(storedFiles(s).filter((f) => f.startsWith('photos/')).length, 2);
  } finally {
    await s.stop();
  }
});
