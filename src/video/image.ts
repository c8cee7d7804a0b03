import type { ImageType } from './types.js';

/** How much of the start of a file is kept for the magic bytes and the RIFF size of a WebP. */
export const HEAD_BYTES = 16;
/** How much of the end of a file the truncation check looks at. */
export const TAIL_BYTES = 64;
/** Largest side of any frame of a photo: ffmpeg scales every photo, and a bigger one costs memory for nothing. */
export const MAX_SIDE = 12_000;
/** Most pixels in any frame of a photo: ffmpeg decodes whole frames, about 4 bytes a pixel and more in its filters. */
export const MAX_PIXELS = 40_000_000;

export type ImageInfo = { ok: true; contentType: ImageType; width: number; height: number } | { ok: false; reason: string };

/** The image type from the magic bytes, whatever the client declared. */
export function sniff(head: Uint8Array): ImageType | null {
  const b = head;
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a)
    return 'image/png';
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

/**
 * What a format walker asks the scanner for next: `read` n bytes (answered with them), `skip`
 * n bytes, or (JPEG only) `marker`: the next marker byte, skipping entropy-coded data,
 * stuffed 0xFF00 bytes, restart markers and garbage between segments, as decoders do.
 */
type Need = { kind: 'read'; n: number } | { kind: 'skip'; n: number } | { kind: 'marker' };
type Walker = Generator<Need, void, Buffer | number | undefined>;

interface Sink {
  frame(width: number, height: number): void;
  bad(reason: string): void;
}

const read = (n: number): Need => ({ kind: 'read', n });
const skip = (n: number): Need => ({ kind: 'skip', n });
const MARKER: Need = { kind: 'marker' };

/** Start-of-frame markers: SOF0–SOF15 (less DHT, JPG and DAC), DHP of hierarchical JPEG and JPEG-LS SOF55. */
const isJpegFrame = (m: number): boolean => (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) || m === 0xde || m === 0xf7;
/**
 * Segments skipped by their length, as ffmpeg does. Any other marker's payload is scanned for
 * markers instead, because a decoder that does not know a segment looks for the next marker
 * right after it: a frame header hidden in such a payload is still found and checked.
 */
const isSkippedByLength = (m: number): boolean =>
  isJpegFrame(m) || m === 0xc4 || m === 0xda || m === 0xdb || m === 0xdd || m === 0xfe || m === 0xf8 || (m >= 0xe0 && m <= 0xef);

function* jpegWalker(s: Sink): Walker {
  yield read(2);
  for (;;) {
    const m = (yield MARKER) as number;
    if (m === 0xd9) {
      // Another image may follow the end marker (MPO files): its frames are checked too.
      const next = (yield read(2)) as Buffer;
      if (next[0] !== 0xff || next[1] !== 0xd8) return;
      continue;
    }
    if (!isSkippedByLength(m)) continue;
    const len = u16be((yield read(2)) as Buffer, 0);
    if (len < 2) return s.bad('has a JPEG segment with an impossible length');
    if (isJpegFrame(m)) {
      if (len < 7) return s.bad('has a JPEG frame header too short to hold a size');
      const b = (yield read(5)) as Buffer;
      s.frame(u16be(b, 3), u16be(b, 1));
      yield skip(len - 7);
    } else yield skip(len - 2);
  }
}

function* pngWalker(s: Sink): Walker {
  yield read(8);
  for (let first = true; ; first = false) {
    const h = (yield read(8)) as Buffer;
    const len = u32be(h, 0);
    const type = ascii(h, 4, 4);
    if (len > 0x7fffffff) return s.bad('has a PNG chunk with an impossible length');
    if (first && type !== 'IHDR') return s.bad('has no PNG IHDR header');
    // IHDR holds the image size; each fcTL of an animated PNG holds a frame's size after its sequence number.
    const at = type === 'IHDR' ? 0 : type === 'fcTL' ? 4 : -1;
    if (at >= 0) {
      if (len < at + 8) return s.bad(`has a PNG ${type} chunk too short to hold a size`);
      const b = (yield read(at + 8)) as Buffer;
      s.frame(u32be(b, at), u32be(b, at + 4));
      yield skip(len - at - 8 + 4);
    } else yield skip(len + 4);
    if (type === 'IEND') return;
  }
}

function* webpWalker(s: Sink): Walker {
  yield read(12);
  for (;;) {
    const h = (yield read(8)) as Buffer;
    const fourcc = ascii(h, 0, 4);
    const size = u32le(h, 4);
    const padded = size + (size & 1);
    if (fourcc === 'VP8 ') {
      if (size < 10) return s.bad('has a WebP VP8 chunk too short to hold a size');
      // Key frame: 3-byte frame tag, then the start code 9d 01 2a, then 14-bit sizes.
      const b = (yield read(10)) as Buffer;
      if (b[3] !== 0x9d || b[4] !== 0x01 || b[5] !== 0x2a) return s.bad('has a WebP VP8 chunk without a key frame');
      s.frame(u16le(b, 6) & 0x3fff, u16le(b, 8) & 0x3fff);
      yield skip(padded - 10);
    } else if (fourcc === 'VP8L') {
      if (size < 5) return s.bad('has a WebP VP8L chunk too short to hold a size');
      const b = (yield read(5)) as Buffer;
      if (b[0] !== 0x2f) return s.bad('has a WebP VP8L chunk without its signature');
      const bits = u32le(b, 1);
      s.frame((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
      yield skip(padded - 5);
    } else if (fourcc === 'VP8X') {
      if (size < 10) return s.bad('has a WebP VP8X chunk too short to hold a size');
      const b = (yield read(10)) as Buffer;
      s.frame(u24le(b, 4) + 1, u24le(b, 7) + 1);
      yield skip(padded - 10);
    } else if (fourcc === 'ANMF') {
      // An animation frame: its 16-byte header holds the frame size; its image chunks follow
      // inside it and are walked (and checked) like top-level ones.
      if (size < 16) return s.bad('has a WebP ANMF chunk too short to hold a size');
      const b = (yield read(16)) as Buffer;
      s.frame(u24le(b, 6) + 1, u24le(b, 9) + 1);
    } else yield skip(padded);
  }
}

const WALKERS: Record<ImageType, (s: Sink) => Walker> = { 'image/jpeg': jpegWalker, 'image/png': pngWalker, 'image/webp': webpWalker };

/**
 * Checks an image as its bytes stream in, without holding it: the type by magic bytes, every
 * frame header of the format (each JPEG SOFn, PNG IHDR and fcTL, WebP VP8/VP8L/VP8X/ANMF)
 * against MAX_SIDE and MAX_PIXELS, and whether the file ends where its format says it does.
 * A small first frame cannot hide a huge later one.
 */
export class ImageChecker implements Sink {
  private head: Buffer[] = [];
  private headSize = 0;
  private tailBuf = Buffer.alloc(0);
  size = 0;
  private contentType: ImageType | null = null;
  private walker: Walker | null = null;
  private need: Need | null = null;
  private acc: Buffer[] = [];
  private accSize = 0;
  /** JPEG marker search: the previous chunk ended on 0xFF. */
  private sawFF = false;
  private first: { width: number; height: number } | null = null;
  private problem: string | null = null;

  add(chunk: Buffer): void {
    this.size += chunk.length;
    this.tailBuf =
      chunk.length >= TAIL_BYTES ? Buffer.from(chunk.subarray(chunk.length - TAIL_BYTES)) : Buffer.concat([this.tailBuf, chunk]).subarray(-TAIL_BYTES);
    if (this.headSize < HEAD_BYTES) {
      const take = Buffer.from(chunk.subarray(0, HEAD_BYTES - this.headSize));
      this.head.push(take);
      this.headSize += take.length;
      if (this.headSize < HEAD_BYTES) return;
      this.start(Buffer.concat(this.head, this.headSize));
      this.feed(chunk.subarray(take.length));
    } else this.feed(chunk);
  }

  frame(width: number, height: number): void {
    this.first ??= { width, height };
    if (this.problem) return;
    if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) {
      this.problem = `has a ${width}x${height} frame; each side must be from 1 to ${MAX_SIDE} pixels`;
    } else if (width * height > MAX_PIXELS) {
      this.problem = `has a ${width}x${height} frame (${width * height} pixels); at most ${MAX_PIXELS} pixels are allowed`;
    }
  }

  bad(reason: string): void {
    this.problem ??= reason;
  }

  /** The verdict once the whole file has been added. */
  result(): ImageInfo {
    const head = Buffer.concat(this.head, this.headSize);
    if (this.headSize < HEAD_BYTES) this.start(head);
    const contentType = this.contentType ?? sniff(head);
    if (!contentType) return { ok: false, reason: 'is not a JPEG, PNG or WebP image' };
    if (this.problem) return { ok: false, reason: this.problem };
    if (!this.first) return { ok: false, reason: `has no readable ${contentType.slice(6).toUpperCase()} header (corrupt or truncated)` };
    if (!complete(contentType, head, this.tailBuf, this.size)) return { ok: false, reason: 'is truncated (the file ends before its format says it does)' };
    return { ok: true, contentType, ...this.first };
  }

  private start(head: Buffer): void {
    if (this.contentType || this.walker) return;
    this.contentType = sniff(head);
    if (!this.contentType) return;
    this.walker = WALKERS[this.contentType](this);
    this.next(undefined);
    this.feed(head);
  }

  private next(answer: Buffer | number | undefined): void {
    const step = this.walker!.next(answer);
    if (step.done) {
      this.walker = null;
      this.need = null;
    } else this.need = step.value;
  }

  private feed(chunk: Buffer): void {
    let at = 0;
    while (this.walker && this.need && at < chunk.length) {
      const need = this.need;
      if (need.kind === 'skip') {
        const n = Math.min(need.n, chunk.length - at);
        at += n;
        if (n === need.n) this.next(undefined);
        else this.need = skip(need.n - n);
      } else if (need.kind === 'read') {
        const n = Math.min(need.n - this.accSize, chunk.length - at);
        this.acc.push(chunk.subarray(at, at + n));
        this.accSize += n;
        at += n;
        if (this.accSize === need.n) {
          const bytes = Buffer.concat(this.acc, this.accSize);
          this.acc = [];
          this.accSize = 0;
          this.next(bytes);
        }
      } else {
        const found = this.findMarker(chunk, at);
        at = found.at;
        if (found.marker !== null) this.next(found.marker);
      }
    }
  }

  /** The next JPEG marker from `at`: 0xFF then a byte that is not 0x00 (stuffing), 0xFF (fill) or a restart marker. */
  private findMarker(chunk: Buffer, at: number): { at: number; marker: number | null } {
    let i = at;
    if (this.sawFF) {
      this.sawFF = false;
      const b = chunk[i]!;
      if (b !== 0x00 && b !== 0xff && !(b >= 0xd0 && b <= 0xd7)) return { at: i + 1, marker: b };
    }
    for (;;) {
      const ff = chunk.indexOf(0xff, i);
      if (ff < 0) return { at: chunk.length, marker: null };
      if (ff + 1 >= chunk.length) {
        this.sawFF = true;
        return { at: chunk.length, marker: null };
      }
      const b = chunk[ff + 1]!;
      if (b !== 0x00 && b !== 0xff && !(b >= 0xd0 && b <= 0xd7)) return { at: ff + 2, marker: b };
      i = b === 0xff ? ff + 1 : ff + 2;
    }
  }
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

/** Checks a whole image held in memory. */
export function inspectImage(bytes: Buffer): ImageInfo {
  const checker = new ImageChecker();
  checker.add(bytes);
  return checker.result();
}
