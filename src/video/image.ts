import type { ImageType } from './types.js';

/** How much of the start of a file the header parser looks at; SOF markers sit after EXIF/ICC segments. */
export const HEAD_BYTES = 1024 * 1024;
/** How much of the end of a file the truncation check looks at. */
export const TAIL_BYTES = 64;
/** Largest side accepted: ffmpeg scales every photo, and a bigger one costs memory for nothing. */
export const MAX_SIDE = 16384;

export type ImageInfo =
  | { ok: true; contentType: ImageType; width: number; height: number }
  | { ok: false; reason: string };

/** The image type from the magic bytes, whatever the client declared. */
export function sniff(head: Uint8Array): ImageType | null {
  const b = head;
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a) return 'image/png';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') return 'image/webp';
  return null;
}

function ascii(b: Uint8Array, at: number, n: number): string {
  return Buffer.from(b.buffer, b.byteOffset + at, n).toString('latin1');
}

const u16be = (b: Uint8Array, i: number): number => (b[i]! << 8) | b[i + 1]!;
const u16le = (b: Uint8Array, i: number): number => b[i]! | (b[i + 1]! << 8);
const u24le = (b: Uint8Array, i: number): number => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const u32be = (b: Uint8Array, i: number): number => ((b[i]! << 24) >>> 0) + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!);
const u32le = (b: Uint8Array, i: number): number => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)) + ((b[i + 3]! << 24) >>> 0);

type Size = { width: number; height: number } | null;

/** Walks JPEG segments to the first start-of-frame marker (baseline, progressive or lossless). */
function jpegSize(b: Uint8Array): Size {
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null;
    let marker = b[i + 1]!;
    // Fill bytes: any number of 0xFF may precede a marker.
    while (marker === 0xff && i + 2 < b.length) marker = b[++i + 1]!;
    i += 2;
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    if (marker === 0xd9 || marker === 0xda) return null;
    if (i + 2 > b.length) return null;
    const len = u16be(b, i);
    if (len < 2) return null;
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      if (i + 7 > b.length) return null;
      return { height: u16be(b, i + 3), width: u16be(b, i + 5) };
    }
    i += len;
  }
  return null;
}

function pngSize(b: Uint8Array): Size {
  if (b.length < 24 || ascii(b, 12, 4) !== 'IHDR') return null;
  return { width: u32be(b, 16), height: u32be(b, 20) };
}

function webpSize(b: Uint8Array): Size {
  if (b.length < 30) return null;
  const chunk = ascii(b, 12, 4);
  if (chunk === 'VP8 ') {
    // Key frame: 3-byte frame tag, then the start code 9d 01 2a, then 14-bit sizes.
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return null;
    const bits = u32le(b, 21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  return null;
}

const PNG_IEND = Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);

/**
 * Whether the file ends where its format says it does: a JPEG with its end-of-image marker
 * (trailing zero padding allowed), a PNG with its IEND chunk, a WebP as long as its RIFF
 * header declares. An upload cut short fails this even when its header is intact.
 */
function complete(type: ImageType, head: Uint8Array, tail: Uint8Array, size: number): boolean {
  if (type === 'image/png') return tail.length >= 12 && Buffer.from(tail.subarray(tail.length - 12)).equals(PNG_IEND);
  if (type === 'image/webp') return size === u32le(head, 4) + 8;
  let end = tail.length;
  while (end > 0 && tail[end - 1] === 0) end--;
  return end >= 2 && tail[end - 2] === 0xff && tail[end - 1] === 0xd9;
}

/** Type, size and integrity of an image from its first HEAD_BYTES and last TAIL_BYTES bytes. */
export function inspectImage(head: Uint8Array, tail: Uint8Array, size: number): ImageInfo {
  const contentType = sniff(head);
  if (!contentType) return { ok: false, reason: 'is not a JPEG, PNG or WebP image' };
  const dims = contentType === 'image/jpeg' ? jpegSize(head) : contentType === 'image/png' ? pngSize(head) : webpSize(head);
  if (!dims) return { ok: false, reason: `has no readable ${contentType.slice(6).toUpperCase()} header (corrupt or truncated)` };
  if (dims.width < 1 || dims.height < 1 || dims.width > MAX_SIDE || dims.height > MAX_SIDE) {
    return { ok: false, reason: `is ${dims.width}x${dims.height}; each side must be from 1 to ${MAX_SIDE} pixels` };
  }
  if (!complete(contentType, head, tail, size)) return { ok: false, reason: 'is truncated (the file ends before its format says it does)' };
  return { ok: true, contentType, ...dims };
}
