import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { echoedKey, HttpError, quoteValue, validationFailed, type ErrorDetail } from '../http/errors.js';
import { parseJson } from '../http/codec.js';
import { mediaParameters } from '../http/media-type.js';
import { firstChars, typeOf, unstorableText } from '../http/validate.js';
import { ImageChecker } from './image.js';
import type { ByteBudget } from '../http/byte-budget.js';
import type { AssetStorage } from './storage.js';
import { ROOMS, type ImageType, type NewPhoto, type Room } from './types.js';

export interface UploadLimits {
  /** Largest photo, in bytes (15 MiB). */
  maxPhotoBytes: number;
  /** Most photos in one request. */
  maxPhotos: number;
  /** Largest JSON body, in bytes: base64 photos are read whole to be parsed. */
  maxJsonBytes: number;
}

/** A photo received into a temp file and checked, not yet under its final name. */
export interface StagedPhoto {
  tmpPath: string;
  filename: string;
  contentType: ImageType;
  width: number;
  height: number;
  sizeBytes: number;
  /** The room tag sent with a JSON upload. */
  room?: Room | null;
}

const EXT: Record<ImageType, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };

function cleanName(name: string | undefined, index: number): string {
  const base = basename((name ?? '').replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return firstChars(base || `photo-${index + 1}`, 255);
}

async function removeAll(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((p) => unlink(p).catch(() => {})));
}

function check(files: { checker: ImageChecker; filename: string; tmpPath: string }[]): StagedPhoto[] {
  const details: ErrorDetail[] = [];
  const staged: StagedPhoto[] = [];
  files.forEach((f, i) => {
    const info = f.checker.result();
    if (!info.ok) details.push({ path: `photos[${i}]`, message: `${f.filename} ${info.reason}` });
    else
      staged.push({
        tmpPath: f.tmpPath,
        filename: f.filename,
        contentType: info.contentType,
        width: info.width,
        height: info.height,
        sizeBytes: f.checker.size,
      });
  });
  if (details.length > 0) throw validationFailed(details, 'Every upload must be a complete JPEG, PNG or WebP image; nothing was stored.');
  return staged;
}

function tooLarge(filename: string, limits: UploadLimits): HttpError {
  return new HttpError('payload_too_large', `${filename} is larger than ${limits.maxPhotoBytes} bytes (the per-photo limit); nothing was stored.`);
}

/**
 * Text fields a multipart photo upload may carry beside its files (a form's own inputs; they
 * are not read). Past it busboy stops reading parts, which dropped the photos after them from
 * an upload that was then answered 201: so more is refused, and nothing is stored.
 */
export const MULTIPART_MAX_FIELDS = 50;

function tooManyFields(): HttpError {
  return validationFailed(
    [{ path: 'body', message: `at most ${MULTIPART_MAX_FIELDS} text fields beside the photos` }],
    'Too many form fields in one upload; nothing was stored.',
  );
}

function tooMany(limits: UploadLimits): HttpError {
  return validationFailed(
    [{ path: 'photos', message: `at most ${limits.maxPhotos} photos per request` }],
    'Too many photos in one request; nothing was stored.',
  );
}

/** A file name's detail when it holds U+FFFD, what a byte that is not UTF-8 (in a part's header or a percent-encoding) reads as. */
export const NOT_UTF8_NAME = 'must be UTF-8 (it holds a byte that is not, or U+FFFD, the character such a byte reads as)';

function notUtf8Name(index: number): HttpError {
  return validationFailed(
    [{ path: `photos[${index}].filename`, message: NOT_UTF8_NAME }],
    'A file name is not UTF-8; send it as UTF-8, as browsers do. Nothing was stored.',
  );
}

function nonePresent(): HttpError {
  return validationFailed([{ path: 'photos', message: 'at least one image file is required' }]);
}

/**
 * Counts the delimiters of a multipart body as it streams past (`--boundary` at its start, then
 * each CRLF `--boundary`), so that a part busboy skips without a word (no Content-Disposition,
 * one it cannot parse, one not `form-data`) is noticed: such a photo was dropped and the upload
 * answered 201 with the others. Only the last few bytes of a chunk are kept, for a delimiter
 * cut across two chunks.
 */
class DelimiterCounter extends Transform {
  count = 0;
  private readonly delimiter: Buffer;
  /** The bytes before the next chunk that a delimiter may start in: a CRLF before the body, so its first line counts too. */
  private carry: Buffer = Buffer.from('\r\n');

  constructor(boundary: string) {
    super();
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const d = this.delimiter;
    const seam = Buffer.concat([this.carry, chunk.subarray(0, d.length - 1)]);
    for (let i = seam.indexOf(d); i >= 0 && i < this.carry.length; i = seam.indexOf(d, i + 1)) this.count++;
    for (let i = chunk.indexOf(d); i >= 0; i = chunk.indexOf(d, i + d.length)) this.count++;
    this.carry = chunk.length >= d.length - 1 ? chunk.subarray(chunk.length - (d.length - 1)) : seam.subarray(Math.max(0, seam.length - (d.length - 1)));
    done(null, chunk);
  }
}

function unreadablePart(): HttpError {
  return new HttpError(
    'bad_request',
    'A part of the multipart body has no Content-Disposition: form-data header that can be read (each part needs one, with a name and, for a file, a filename); nothing was stored.',
  );
}

/**
 * The form parser of a multipart body and its boundary. A Content-Type naming a parameter twice
 * is refused: busboy took the first boundary, and a reader in front may take the other.
 */
function formParser(stream: Readable, contentType: string, limits: UploadLimits): { bb: busboy.Busboy; boundary: string } {
  const { values, repeated } = mediaParameters(contentType);
  if (repeated !== null) {
    stream.resume();
    throw new HttpError(
      'bad_request',
      `The Content-Type gives the parameter ${JSON.stringify(firstChars(repeated, 64))} twice; give it once. Nothing was stored.`,
    );
  }
  // busboy reports the limit on reaching fileSize bytes, so one more than the largest allowed.
  try {
    const bb = busboy({
      headers: { 'content-type': contentType },
      // A part's filename is UTF-8 as browsers and fetch write it; busboy's default reads Latin-1.
      defParamCharset: 'utf8',
      // busboy reports the parts limit on reaching it (even with no part after), so one more than
      // the files and fields allowed: it is then reached only past one of those limits.
      // Text fields are counted, never read: a few bytes of each is all busboy keeps.
      limits: {
        fileSize: limits.maxPhotoBytes + 1,
        files: limits.maxPhotos,
        fields: MULTIPART_MAX_FIELDS,
        fieldSize: 64,
        parts: limits.maxPhotos + MULTIPART_MAX_FIELDS + 1,
      },
    });
    return { bb, boundary: values.get('boundary') ?? '' };
  } catch {
    throw new HttpError('bad_request', 'The multipart/form-data Content-Type needs a boundary.');
  }
}

/**
 * Streams every file part of a multipart body into its own temp file. On the first problem
 * the rest of the body is still read (and dropped) so the client gets its answer rather than
 * a reset connection; then every temp file is removed and the error thrown.
 */
export async function receiveMultipart(stream: Readable, contentType: string, tmpDir: string, limits: UploadLimits): Promise<StagedPhoto[]> {
  const { bb, boundary } = formParser(stream, contentType, limits);
  const counter = new DelimiterCounter(boundary);
  const files: { checker: ImageChecker; filename: string; tmpPath: string }[] = [];
  const writes: Promise<void>[] = [];
  let problem: HttpError | null = null;
  const fail = (err: HttpError): void => {
    problem ??= err;
  };

  let parts = 0;
  bb.on('field', () => parts++);
  bb.on('file', (_field, file, info) => {
    parts++;
    if (problem) {
      file.resume();
      return;
    }
    const filename = cleanName(info.filename, files.length);
    // A name's bytes that are not UTF-8 (a Latin-1 or Shift-JIS client) read as U+FFFD: refused, never stored changed.
    if (info.filename?.includes('\ufffd')) fail(notUtf8Name(files.length));
    const tmpPath = join(tmpDir, `${randomUUID()}.part`);
    const checker = new ImageChecker();
    files.push({ checker, filename, tmpPath });
    file.on('data', (chunk: Buffer) => checker.add(chunk));
    file.on('limit', () => fail(tooLarge(filename, limits)));
    writes.push(
      pipeline(file, createWriteStream(tmpPath)).catch(() => fail(new HttpError('bad_request', `The upload of ${filename} ended early; nothing was stored.`))),
    );
  });
  bb.on('filesLimit', () => fail(tooMany(limits)));
  // Either limit stops busboy reading the parts after it: a photo there would be dropped unseen.
  bb.on('fieldsLimit', () => fail(tooManyFields()));
  bb.on('partsLimit', () => fail(tooManyFields()));

  try {
    await pipeline(stream, counter, bb);
  } catch (err) {
    await Promise.allSettled(writes);
    await removeAll(files.map((f) => f.tmpPath));
    if (err instanceof HttpError) throw err;
    throw new HttpError('bad_request', 'The multipart body is malformed or ended early; nothing was stored.');
  }
  await Promise.all(writes);
  const paths = files.map((f) => f.tmpPath);
  try {
    if (problem) throw problem;
    // The closing delimiter ends the last part; every other one starts a part busboy should have told of.
    if (parts < counter.count - 1) throw unreadablePart();
    if (files.length === 0) throw nonePresent();
    return check(files);
  } catch (err) {
    await removeAll(paths);
    throw err;
  }
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/;

/** The fields of a JSON photo body and of each of its photos; any other is refused, as on every body: a misspelt `room` must not pass silently. */
const PHOTO_BODY_FIELDS = ['photos'] as const;
const PHOTO_FIELDS = ['filename', 'data_base64', 'room'] as const;

function unknownFields(body: Record<string, unknown>, known: readonly string[], at: string): ErrorDetail[] {
  return Object.keys(body)
    .filter((key) => !known.includes(key))
    .map((key) => ({ path: `${at}${echoedKey(key)}`, message: `is not a known field (known: ${known.join(', ')})` }));
}
const DATA_URL_HEADER = /^data:[\w.+-]+\/[\w.+-]+;base64,/i;

/** Seconds a client is asked to wait when the JSON upload budget is spent. */
export const JSON_BUDGET_RETRY_AFTER_S = 1;

function budgetSpent(budget: ByteBudget): HttpError {
  return new HttpError(
    'unavailable',
    `The server is holding as many JSON photo uploads as it may (${budget.limit} bytes in all); retry shortly or upload as multipart/form-data, which is streamed.`,
    {
      headers: { 'retry-after': String(JSON_BUDGET_RETRY_AFTER_S) },
    },
  );
}

/**
 * Reads a JSON body `{photos: [{filename, data_base64}]}` (at most maxJsonBytes) into temp
 * files. Its bytes are taken from `budget` while held: the declared Content-Length up front,
 * or chunk by chunk when none is declared; over the budget the answer is 503 with Retry-After.
 */
export async function receiveJson(
  stream: Readable,
  declaredLength: number | null,
  tmpDir: string,
  limits: UploadLimits,
  budget: ByteBudget,
): Promise<StagedPhoto[]> {
  const tooBig = () => new HttpError('payload_too_large', `A JSON photo upload may be at most ${limits.maxJsonBytes} bytes; use multipart/form-data for more.`);
  if (declaredLength !== null && declaredLength > limits.maxJsonBytes) {
    stream.resume();
    throw tooBig();
  }
  let held = 0;
  const hold = (n: number): void => {
    if (!budget.take(n)) {
      stream.resume();
      throw budgetSpent(budget);
    }
    held += n;
  };
  try {
    if (declaredLength !== null) hold(declaredLength);
    return await readJsonPhotos(stream, declaredLength === null ? hold : null, tmpDir, limits, tooBig);
  } finally {
    budget.give(held);
  }
}

async function readJsonPhotos(
  stream: Readable,
  hold: ((n: number) => void) | null,
  tmpDir: string,
  limits: UploadLimits,
  tooBig: () => HttpError,
): Promise<StagedPhoto[]> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limits.maxJsonBytes) {
      stream.resume();
      throw tooBig();
    }
    hold?.(chunk.length);
    chunks.push(chunk);
  }
  const body = parseJson(Buffer.concat(chunks, size));
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError('bad_request', 'The request body must be a JSON object.');
  const unknown = unknownFields(body as Record<string, unknown>, PHOTO_BODY_FIELDS, '');
  if (unknown.length > 0) throw validationFailed(unknown);
  const list = (body as Record<string, unknown>).photos;
  if (!Array.isArray(list)) throw validationFailed([{ path: 'photos', message: list === undefined ? 'is required' : `must be an array, got ${typeOf(list)}` }]);
  if (list.length === 0) throw nonePresent();
  if (list.length > limits.maxPhotos) throw tooMany(limits);
  const details: ErrorDetail[] = [];
  const decoded: { filename: string; data: Buffer; room: Room | null }[] = [];
  list.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return void details.push({ path: `photos[${i}]`, message: `must be an object, got ${typeOf(item)}` });
    details.push(...unknownFields(item as Record<string, unknown>, PHOTO_FIELDS, `photos[${i}].`));
    const { filename, data_base64: raw, room } = item as Record<string, unknown>;
    if (room !== undefined && room !== null && !(ROOMS as readonly unknown[]).includes(room))
      details.push({ path: `photos[${i}].room`, message: `must be one of ${ROOMS.join(', ')}, got ${quoteValue(room)}` });
    // A data URL (what a browser's FileReader gives) carries the same base64 after its header.
    const data = typeof raw === 'string' ? raw.replace(DATA_URL_HEADER, '') : raw;
    if (filename !== undefined && typeof filename !== 'string')
      details.push({ path: `photos[${i}].filename`, message: `must be a string, got ${typeOf(filename)}` });
    const unstorable = typeof filename === 'string' ? unstorableText(filename) : null;
    if (unstorable !== null) details.push({ path: `photos[${i}].filename`, message: unstorable });
    if (typeof data !== 'string' || data.length === 0)
      return void details.push({ path: `photos[${i}].data_base64`, message: data === undefined ? 'is required' : 'must be a non-empty base64 string' });
    if (!BASE64.test(data)) return void details.push({ path: `photos[${i}].data_base64`, message: 'is not valid base64' });
    // A filename of another type is already a detail above; the photo is still decoded for the other details.
    decoded.push({
      filename: cleanName(typeof filename === 'string' ? filename : undefined, i),
      data: Buffer.from(data, 'base64'),
      room: (room ?? null) as Room | null,
    });
  });
  if (details.length > 0) throw validationFailed(details);
  for (const d of decoded) if (d.data.length > limits.maxPhotoBytes) throw tooLarge(d.filename, limits);
  const files = decoded.map((d) => {
    const checker = new ImageChecker();
    checker.add(d.data);
    return { checker, filename: d.filename, tmpPath: join(tmpDir, `${randomUUID()}.part`), data: d.data };
  });
  const staged = check(files).map((st, i) => ({ ...st, room: decoded[i]!.room }));
  try {
    await Promise.all(files.map((f) => writeFile(f.tmpPath, f.data)));
  } catch (err) {
    await removeAll(files.map((f) => f.tmpPath));
    throw err;
  }
  return staged;
}

/**
 * Stores staged photos under fresh keys. Each object is whole once stored (a rename within
 * the data directory, or one upload); on failure every photo stored so far is removed again.
 */
export async function commitPhotos(staged: readonly StagedPhoto[], storage: AssetStorage): Promise<NewPhoto[]> {
  const photos: NewPhoto[] = [];
  try {
    for (const s of staged) {
      const storageKey = `${randomUUID()}.${EXT[s.contentType]}`;
      await storage.putFile('photos', storageKey, s.tmpPath, s.contentType);
      photos.push({
        filename: s.filename,
        contentType: s.contentType,
        sizeBytes: s.sizeBytes,
        width: s.width,
        height: s.height,
        storageKey,
        room: s.room ?? null,
      });
    }
  } catch (err) {
    await storage
      .delete(
        'photos',
        photos.map((p) => p.storageKey),
      )
      .catch(() => {});
    await removeAll(staged.map((s) => s.tmpPath));
    throw err;
  }
  return photos;
}

export async function discardStaged(staged: readonly StagedPhoto[]): Promise<void> {
  await removeAll(staged.map((s) => s.tmpPath));
}
