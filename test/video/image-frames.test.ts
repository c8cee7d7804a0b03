import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImageChecker, MAX_PIXELS, MAX_SIDE, inspectImage } from '../../src/video/image.js';
import { testImage } from './helpers.js';

/** A JPEG segment: marker, big-endian length, payload. */
function segment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0xff00 | marker, 0);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/** A baseline SOF0 payload of the given size with three components. */
function sof(width: number, height: number): Buffer {
  const b = Buffer.from([8, 0, 0, 0, 0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  b.writeUInt16BE(height, 1);
  b.writeUInt16BE(width, 3);
  return b;
}

/** A copy of a JPEG with its (first) SOF0 size rewritten. */
function resizedJpeg(jpg: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(jpg);
  const at = out.indexOf(Buffer.from([0xff, 0xc0]));
  out.writeUInt16BE(height, at + 5);
  out.writeUInt16BE(width, at + 7);
  return out;
}

/** A copy of a PNG with its IHDR size rewritten (the CRC is not what the checker judges). */
function resizedPng(png: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(png);
  out.writeUInt32BE(width, 16);
  out.writeUInt32BE(height, 20);
  return out;
}

test('a decoy 100x100 SOF before the real 30000x2000 frame is refused (every JPEG SOFn is checked)', () => {
  const jpg = testImage('jpg', '64x48');
  const real = resizedJpeg(jpg, 30000, 2000);
  const decoyed = Buffer.concat([real.subarray(0, 2), segment(0xc0, sof(100, 100)), real.subarray(2)]);
  const r = inspectImage(decoyed);
  assert.equal(r.ok, false);
  assert.match(r.ok ? '' : r.reason, /30000x2000/);
  // The untouched file is fine, and its size is the first frame's.
  assert.deepEqual(inspectImage(jpg), { ok: true, contentType: 'image/jpeg', width: 64, height: 48 });
});

test('a frame header after the entropy-coded data (a second scan or a second image) is checked', () => {
  const jpg = testImage('jpg', '64x48');
  const eoi = jpg.length - 2;
  // A frame header placed after the scan, before the end-of-image marker.
  const late = Buffer.concat([jpg.subarray(0, eoi), segment(0xc2, sof(20000, 20000)), jpg.subarray(eoi)]);
  assert.equal(inspectImage(late).ok, false);
  // An MPO-style second image after the first one's end marker.
  const second = Buffer.concat([jpg, resizedJpeg(jpg, 13000, 10)]);
  assert.equal(inspectImage(second).ok, false);
  assert.equal(inspectImage(Buffer.concat([jpg, jpg])).ok, true);
});

test('a 16000x16000 PNG header is refused; the side and pixel caps hold at their edges', () => {
  const png = testImage('png', '64x48');
  const huge = inspectImage(resizedPng(png, 16000, 16000));
  assert.equal(huge.ok, false);
  assert.match(huge.ok ? '' : huge.reason, /16000x16000/);
  assert.equal(MAX_SIDE, 12_000);
  assert.equal(MAX_PIXELS, 40_000_000);
  const jpg = testImage('jpg', '64x48');
  for (const [w, h, ok] of [
    [MAX_SIDE, 3333, true],
    [MAX_SIDE, 3334, false],
    [MAX_SIDE + 1, 1, false],
    [1, MAX_SIDE + 1, false],
    [MAX_SIDE, 1, true],
    [0, 10, false],
  ] as const) {
    assert.equal(inspectImage(resizedPng(png, w, h)).ok, ok, `png ${w}x${h}`);
    assert.equal(inspectImage(resizedJpeg(jpg, w, h)).ok, ok, `jpeg ${w}x${h}`);
  }
});

test('an animated PNG frame (fcTL) and a WebP animation frame (ANMF) are checked', () => {
  const png = testImage('png', '64x48');
  const fctl = Buffer.alloc(12 + 26);
  fctl.writeUInt32BE(26, 0);
  fctl.write('fcTL', 4, 'latin1');
  fctl.writeUInt32BE(0, 8);
  fctl.writeUInt32BE(20000, 12);
  fctl.writeUInt32BE(20000, 16);
  const apng = Buffer.concat([png.subarray(0, 33), fctl, png.subarray(33)]);
  assert.equal(inspectImage(apng).ok, false);

  const webp = testImage('webp', '64x48');
  const anmf = Buffer.alloc(8 + 16);
  anmf.write('ANMF', 0, 'latin1');
  anmf.writeUInt32LE(16, 4);
  anmf.writeUIntLE(15000 - 1, 8 + 6, 3);
  anmf.writeUIntLE(100 - 1, 8 + 9, 3);
  const animated = Buffer.concat([webp, anmf]);
  animated.writeUInt32LE(animated.length - 8, 4);
  const r = inspectImage(animated);
  assert.equal(r.ok, false);
  assert.match(r.ok ? '' : r.reason, /15000x100/);
});

test('the checker gives the same verdict whatever the chunking of the stream', () => {
  const jpg = testImage('jpg', '64x48');
  const cases = [
    jpg,
    testImage('png', '64x48'),
    testImage('webp', '64x48'),
    resizedJpeg(jpg, 30000, 2000),
    resizedPng(testImage('png', '64x48'), 16000, 16000),
  ];
  for (const bytes of cases) {
    const whole = inspectImage(bytes);
    for (const size of [1, 2, 3, 7, 64, 1000]) {
      const c = new ImageChecker();
      for (let i = 0; i < bytes.length; i += size) c.add(bytes.subarray(i, i + size));
      assert.deepEqual(c.result(), whole, `chunks of ${size}`);
    }
  }
});
