import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signingVectors } from '../helpers/signing-vectors.js';
import { clientsDir } from './helpers.js';
import { client, skip } from './csharp-client.js';
import { clientFixtureSuite } from './suite.js';

if (skip) console.log(`# C# client tests skipped: ${skip}`);
clientFixtureSuite(client);

test('c# client: the README shows the signature of the first test vector', () => {
  const readme = readFileSync(join(clientsDir, 'csharp', 'README.md'), 'utf8');
  assert.ok(readme.includes(signingVectors()[0]!.signature));
  assert.ok(readme.includes(`FromUnixTimeSeconds(${signingVectors()[0]!.timestamp})`));
});
