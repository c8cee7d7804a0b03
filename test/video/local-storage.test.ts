import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LocalStorage } from '../../src/video/storage.js';
import { tempDir } from '../helpers/paths.js';
import { assetStorageContract } from './storage-contract.js';

assetStorageContract('data directory', async () => {
  const dir = tempDir('brainstem-data-');
  for (const area of ['photos', 'assets']) mkdirSync(join(dir.path, area));
  return { storage: new LocalStorage(dir.path), close: async () => dir.dispose() };
});
