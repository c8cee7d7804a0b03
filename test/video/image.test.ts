import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectImage, sniff } from '../../src/video/image.js';
import { tempDir } from '../helpers/paths.js';

function make(args: string[], ext: string): Buffer {
  const dir = tempDir();
  try {
    const out = join(dir.path, `img.${ext}`);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=123x45:rate=1', '-frames:v', '1', ...args, out]);
    return readFileSync(out);
  } finally {
    dir.dispose();
  }
}

/** The extended (VP8X) form of a simple WebP: a VP8X chunk with the canvas size before the image chunk. */
function extended(simple: Buffer): Buffer {
  const vp8x = Buffer.alloc(18);
  vp8x.write('VP8X', 0, 'latin1');
  vp8x.writeUInt32LE(10, 4);
  vp8x.writeUIntLE(123 - 1, 12, 3);
  vp8x.writeUIntLE(45 - 1, 15, 3);
  const out = Buffer.concat([simple.subarray(0, 12), vp8x, simple.subarray(12)]);
  out.writeUInt32LE(out.length - 8, 4);
  return out;
}

const whole = (b: Buffer) => inspectImage(b);

test('image headers: JPEG SOF, PNG IHDR, WebP VP8 / VP8L / VP8X sizes', () => {
  const cases: [Buffer, string][] = [
    [make([], 'jpg'), 'image/jpeg'],
    [make([], 'png'), 'image/png'],
    [make([], 'webp'), 'image/webp'],
    [make(['-lossless', '1'], 'webp'), 'image/webp'],
    [extended(make([], 'webp')), 'image/webp'],
  ];
  const chunks = cases.map(([b]) => b.subarray(12, 16).toString('latin1'));
  assert.ok(chunks.includes('VP8 ') && chunks.includes('VP8L') && chunks.includes('VP8X'), chunks.join());
  for (const [buf, type] of cases) assert.deepEqual(whole(buf), { ok: true, contentType: type, width: 123, height: 45 });
});

test('image headers: a JPEG whose SOF follows a large APP segment is still read', () => {
  const jpg = make([], 'jpg');
  const app = Buffer.alloc(60_000 + 4);
  app.writeUInt16BE(0xffe1, 0);
  app.writeUInt16BE(60_002, 2);
  const padded = Buffer.concat([jpg.subarray(0, 2), app, jpg.subarray(2)]);
  assert.deepEqual(whole(padded), { ok: true, contentType: 'image/jpeg', width: 123, height: 45 });
});

test('image headers: the declared type is ignored; non-images and truncated files are refused', () => {
  assert.equal(sniff(Buffer.from('GIF89a')), null);
  assert.equal(whole(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')).ok, false);
  for (const ext of ['jpg', 'png', 'webp']) {
    const b = make([], ext);
    const cut = b.subarray(0, b.length - 10);
    const r = inspectImage(cut);
    assert.equal(r.ok, false, ext);
    assert.equal(whole(b.subarray(0, 20)).ok, false, `${ext} header only`);
  }
});
