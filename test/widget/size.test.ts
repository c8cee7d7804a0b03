import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { repoRoot } from '../helpers/paths.js';
import { WIDGET_SCRIPT_MAX_GZIP_BYTES } from '../../src/dashboard/widget-script.js';

test('widget.js is one self-contained script of at most 25 KB gzipped: no import, no export, no framework', () => {
  const r = spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(repoRoot, 'widget')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  const script = readFileSync(join(repoRoot, 'dist', 'widget', 'widget.js'), 'utf8');
  const gz = gzipSync(script, { level: 9 }).length;
  assert.ok(gz <= WIDGET_SCRIPT_MAX_GZIP_BYTES, `${gz} bytes gzipped`);
  assert.doesNotMatch(script, /^\s*(import|export)\b/m);
  assert.doesNotMatch(script, /\brequire\(/);
});
