import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { link, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpError, quoteValue } from '../http/errors.js';
import type { Request } from '../http/server.js';
import { PRIVATE_FILE_MODE } from '../store/files.js';
import type { AssetId, PhotoId } from './types.js';

/** What a signed URL opens: a rendered asset, or an uploaded photo (the dashboard's thumbnails). */
export type SignedKind = 'asset' | 'photo';

/**
 * Lifetime of a signed asset URL, in seconds: `?ttl=` from 1 to maxS, defaultS when absent.
 * Seven days is also the longest an S3 presigned URL may live, so no storage choice caps it lower.
 */
export const SIGNED_URL_TTL = { defaultS: 3600, maxS: 7 * 24 * 3600 } as const;

/** The key that signs asset URLs, in the data directory (created on first start, 0600). */
export const URL_SIGNING_KEY_FILE = 'url-signing.key';
const KEY_BYTES = 32;

/** The key given as hex (SERVICE_URL_SIGNING_KEY, shared by replicas), checked for length and form. */
export function signingKeyFromHex(hex: string, source: string): Buffer {
  const text = hex.trim();
  if (!/^(?:[0-9a-fA-F]{2}){32,}$/.test(text))
    throw new Error(`${source} must be at least ${KEY_BYTES} bytes as hex (${KEY_BYTES * 2} or more hex digits), e.g. from: openssl rand -hex ${KEY_BYTES}`);
  return Buffer.from(text, 'hex');
}

/**
 * Reads the URL-signing key from the data directory, creating it on first use. The key is
 * written whole to a temp file, then linked to its name (a link fails when the name exists):
 * two processes starting on one data directory agree (the loser reads the winner's), and a
 * crash while it is made never leaves a partial key behind. An empty key file, which the
 * earlier way of making it (create, then write) left after a crash between the two, cannot
 * have signed a URL, and is replaced.
 */
export async function loadSigningKey(dataDir: string, random: (n: number) => Buffer = randomBytes): Promise<Buffer> {
  const file = join(dataDir, URL_SIGNING_KEY_FILE);
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, random(KEY_BYTES).toString('hex') + '\n', { mode: PRIVATE_FILE_MODE });
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if ((await stat(file)).size === 0) await rename(temp, file);
  } finally {
    await unlink(temp).catch(() => {});
  }
  return signingKeyFromHex(await readFile(file, 'utf8'), `${file} (remove it to have a new key made; URLs already issued stop working)`);
}

export type Verdict = 'ok' | 'expired' | 'invalid';

/** Signs and checks `/v1/assets/{id}/file?expires=…&signature=…` URLs (HMAC-SHA256 of the asset id and expiry). */
export class AssetUrlSigner {
  constructor(private readonly key: Buffer) {}

  /** What is signed names the kind of file, so an asset's signature never opens the photo with the same id. */
  private mac(id: number, expiresS: number, kind: SignedKind): Buffer {
    return createHmac('sha256', this.key).update(`brainstem ${kind} url v1\n${id}\n${expiresS}`).digest();
  }

  /** The query string (without '?') that opens asset `id` until `expiresS` (Unix seconds). */
  query(id: AssetId | PhotoId, expiresS: number, kind: SignedKind = 'asset'): string {
    return `expires=${expiresS}&signature=${this.mac(id, expiresS, kind).toString('base64url')}`;
  }

  verify(id: AssetId | PhotoId, expires: string | null, signature: string | null, nowMs: number, kind: SignedKind = 'asset'): Verdict {
    // One spelling per URL (no leading zeros, the signature as query() writes it): a URL written
    // another way opens nothing, so caches in front never hold two copies of one file.
    if (expires === null || signature === null || !/^(?:0|[1-9]\d{0,11})$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'invalid';
    const expected = this.mac(id, Number(expires), kind).toString('base64url');
    // Compared in constant time, and before the expiry, so a forged URL learns nothing from either answer.
    if (!timingSafeEqual(Buffer.from(signature, 'latin1'), Buffer.from(expected, 'latin1'))) return 'invalid';
    return Number(expires) * 1000 <= nowMs ? 'expired' : 'ok';
  }
}

/** A request that carries a URL signature (and is answered by it, whatever else it carries). */
export function isSigned(req: Request): boolean {
  const q = req.searchParams();
  return q.has('signature') || q.has('expires');
}

/** `?ttl=` in seconds; a bad value is a 400. */
export function ttlParam(req: Request): number {
  const raw = req.searchParams().get('ttl');
  if (raw === null || raw === '') return SIGNED_URL_TTL.defaultS;
  const n = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || n < 1 || n > SIGNED_URL_TTL.maxS) {
    throw new HttpError('bad_request', `ttl must be a whole number of seconds from 1 to ${SIGNED_URL_TTL.maxS} (7 days), got ${quoteValue(raw)}.`);
  }
  return n;
}

const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The origin clients reach this server at: the configured public URL, else the request's
 * scheme and Host header (a missing or malformed Host is a 400: there is nothing to build on).
 */
export function originOf(req: Request, publicUrl: string | undefined, scheme: 'http' | 'https'): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const host = req.headers.host;
  if (!host || !HOST.test(host))
    throw new HttpError('bad_request', 'A signed URL needs the Host header this server is reached at (or the server configured with SERVICE_PUBLIC_URL).');
  return `${scheme}://${host}`;
}
