import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { AssetStorage } from '../../src/video/storage.js';
import { tempDir } from '../helpers/paths.js';

/** One empty storage per test. */
export type AssetStorageFactory = () => Promise<{ storage: AssetStorage; close(): Promise<void> }>;

async function bytes(stream: Readable | null): Promise<Buffer | null> {
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

let seq = 0;

/**
 * The behaviour every AssetStorage promises (the data directory, S3-compatible buckets): run
 * by one test file per implementation with its factory.
 */
export function assetStorageContract(name: string, factory: AssetStorageFactory): void {
  describe(`AssetStorage contract: ${name}`, () => {
    let h: Awaited<ReturnType<AssetStorageFactory>>;
    let scratch: { path: string; dispose(): void };
    const content = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    const local = (): string => {
      const path = join(scratch.path, `upload-${++seq}.bin`);
      writeFileSync(path, content);
      return path;
    };
    beforeEach(async () => {
      scratch = tempDir('brainstem-storage-');
      h = await factory();
    });
    afterEach(async () => {
      await h.close();
      scratch.dispose();
    });

    test('a stored file reads back whole and by range, and its local source is gone', async () => {
      const source = local();
      await h.storage.putFile('assets', 'a.mp4', source, 'video/mp4');
      assert.equal(existsSync(source), false);
      assert.deepEqual(await bytes(await h.storage.get('assets', 'a.mp4')), content);
      assert.deepEqual(await bytes(await h.storage.get('assets', 'a.mp4', { start: 10, end: 19 })), content.subarray(10, 20));
      assert.deepEqual(await bytes(await h.storage.get('assets', 'a.mp4', { start: 4999, end: 4999 })), content.subarray(4999));
    });

    test('areas are apart and a missing object reads as null', async () => {
      await h.storage.putFile('photos', 'same.jpg', local(), 'image/jpeg');
      assert.equal(await h.storage.get('assets', 'same.jpg'), null);
      assert.equal(await h.storage.get('photos', 'other.jpg'), null);
      assert.ok(await bytes(await h.storage.get('photos', 'same.jpg')));
    });

    test('localPath gives a local file with the bytes, for ffmpeg', async () => {
      await h.storage.putFile('photos', 'p.png', local(), 'image/png');
      const work = join(scratch.path, 'work');
      mkdirSync(work);
      const path = await h.storage.localPath('photos', 'p.png', work);
      assert.deepEqual(readFileSync(path), content);
    });

    test('delete removes objects, and deleting what is gone is no error', async () => {
      await h.storage.putFile('assets', 'x.jpg', local(), 'image/jpeg');
      await h.storage.putFile('assets', 'y.jpg', local(), 'image/jpeg');
      await h.storage.delete('assets', ['x.jpg', 'never-there.jpg']);
      assert.equal(await h.storage.get('assets', 'x.jpg'), null);
      assert.ok(await bytes(await h.storage.get('assets', 'y.jpg')), 'only the named objects go');
      await h.storage.delete('assets', ['x.jpg']);
      await h.storage.delete('assets', []);
    });
  });
}
