import { createReadStream, createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Area, AssetStorage, ByteRange } from './storage.js';

/** A bucket and the key prefix under it, from `s3://bucket/prefix`. */
export interface ObjectStoreLocation {
  bucket: string;
  /** '' or a prefix without leading or trailing slashes. */
  prefix: string;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Reads `--object-store s3://bucket[/prefix]`; throws one clear line for anything else. */
export function parseObjectStoreUrl(raw: string): ObjectStoreLocation {
  const m = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(raw.trim());
  if (!m) throw new Error(`--object-store must look like s3://bucket or s3://bucket/prefix, got ${JSON.stringify(raw)}`);
  const bucket = m[1]!;
  if (!BUCKET.test(bucket))
    throw new Error(`--object-store: ${JSON.stringify(bucket)} is not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)`);
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix !== '' && prefix.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new Error(`--object-store: the prefix ${JSON.stringify(prefix)} has an empty, '.' or '..' segment`);
  }
  return { bucket, prefix };
}

/**
 * The S3 client from the standard AWS environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_PROFILE, AWS_REGION or AWS_DEFAULT_REGION, default us-east-1).
 * AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) points it at another S3-compatible service
 * (MinIO, R2, Ceph), which is then addressed path-style (http://host/bucket/key): such
 * services seldom have a DNS name per bucket. They are also sent checksums only where S3
 * requires them: the SDK's default streams uploads in aws-chunked encoding with a trailing
 * checksum, which some of them store verbatim (chunk headers and all) instead of decoding.
 */
export function s3ClientFromEnv(env: NodeJS.ProcessEnv = process.env): S3Client {
  // The SDK version this package pins runs on Node 20 (the runtime floor); its multi-line
  // warning about later SDK versions needing Node 22 would only break the JSON log on stderr.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  return new S3Client({
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    ...(endpoint ? { endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
  });
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

/** Photos, videos and posters as objects `PREFIX/photos/KEY` and `PREFIX/assets/KEY` in one bucket. */
export class S3Storage implements AssetStorage {
  readonly description: string;

  constructor(
    private readonly where: ObjectStoreLocation,
    private readonly client: S3Client,
  ) {
    this.description = `s3://${where.bucket}${where.prefix ? `/${where.prefix}` : ''}`;
  }

  private key(area: Area, key: string): string {
    return this.where.prefix ? `${this.where.prefix}/${area}/${key}` : `${area}/${key}`;
  }

  /** Fails with the service's reason when the bucket cannot be reached with these credentials. */
  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.where.bucket }));
    } catch (err) {
      const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode;
      throw new Error(
        `object store ${this.description} is not usable: ${status === 404 ? 'no such bucket' : status === 403 ? 'access denied (check the AWS_* credentials)' : e.message || e.name || String(err)}`,
      );
    }
  }

  async putFile(area: Area, key: string, localPath: string, contentType: string): Promise<void> {
    const { size } = await stat(localPath);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.where.bucket,
        Key: this.key(area, key),
        Body: createReadStream(localPath),
        ContentLength: size,
        ContentType: contentType,
      }),
    );
    await unlink(localPath);
  }

  async get(area: Area, key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.where.bucket, Key: this.key(area, key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      return res.Body as Readable;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async localPath(area: Area, key: string, scratchDir: string): Promise<string> {
    const body = await this.get(area, key);
    if (!body) throw new Error(`${this.key(area, key)} is missing from ${this.description}`);
    const path = join(scratchDir, `stored-${area}-${key}`);
    await pipeline(body, createWriteStream(path));
    return path;
  }

  async delete(area: Area, keys: readonly string[]): Promise<void> {
    // One request per key: DeleteObjects needs Content-MD5, which not every S3-compatible service accepts alike.
    await Promise.all(keys.map((k) => this.client.send(new DeleteObjectCommand({ Bucket: this.where.bucket, Key: this.key(area, k) }))));
  }

  close(): void {
    this.client.destroy();
  }
}
