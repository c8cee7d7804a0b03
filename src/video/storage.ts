import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** The kinds of stored files: uploaded photos, rendered videos and posters, and a tenant's logos and audio tracks. */
export type Area = 'photos' | 'assets' | 'media';

/** Inclusive byte range of an object. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where photos, rendered videos and posters live: the local data directory by default, or an
 * S3-compatible bucket. Keys are file names (uuid + extension) within an area.
 */
export interface AssetStorage {
  /** Where the files live, for logs and the startup line (never a credential). */
  readonly description: string;
  /**
   * Stores a finished local file under `key`; the local file is gone afterwards (moved, or
   * uploaded and removed). Readers never see a partial object.
   */
  putFile(area: Area, key: string, localPath: string, contentType: string): Promise<void>;
  /** The object's bytes (all, or one range); null when there is no such object. */
  get(area: Area, key: string, range?: ByteRange): Promise<Readable | null>;
  /**
   * A local file with the object's bytes, for ffmpeg: the stored file itself when storage is
   * local, else a copy written into `scratchDir` (which the caller removes).
   */
  localPath(area: Area, key: string, scratchDir: string): Promise<string>;
  /** Removes objects; a key that is already gone is not an error. */
  delete(area: Area, keys: readonly string[]): Promise<void>;
  /** Releases connections. */
  close(): void;
}

/** Files under DATA_DIR/photos and DATA_DIR/assets. */
export class LocalStorage implements AssetStorage {
  readonly description: string;

  constructor(private readonly dataDir: string) {
    this.description = `local directory ${dataDir}`;
  }

  private path(area: Area, key: string): string {
    return join(this.dataDir, area, key);
  }

  async putFile(area: Area, key: string, localPath: string): Promise<void> {
    // Scratch and uploads live under the same data directory: a rename is atomic.
    await rename(localPath, this.path(area, key));
  }

  async get(area: Area, key: string, range?: ByteRange): Promise<Readable | null> {
    // Opened first, so a missing file is known before any status line is sent.
    const handle = await open(this.path(area, key), 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (!handle) return null;
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async localPath(area: Area, key: string): Promise<string> {
    return this.path(area, key);
  }

  async delete(area: Area, keys: readonly string[]): Promise<void> {
    await Promise.all(
      keys.map((k) =>
        unlink(this.path(area, k)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        }),
      ),
    );
  }

  close(): void {
    // Nothing held open between calls.
  }
}
