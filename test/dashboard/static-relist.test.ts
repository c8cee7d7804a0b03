import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { HttpServer } from '../../src/http/server.js';
import { RELIST_AFTER_MS, mountDashboard } from '../../src/dashboard/static.js';
import { tempDir } from '../helpers/paths.js';

// A name the compiled tree lacks lists the tree again at most once a second: a flood of
// made-up names costs a map lookup each, and a file built meanwhile is served after the gate.

const dir = tempDir('brainstem-dashboard-relist-');
const root = dir.path;
after(() => dir.dispose());

test('a miss lists the compiled tree again only after the gate, and one listing serves every file in it; links are not followed', async () => {
  mkdirSync(join(root, 'dashboard', 'map'), { recursive: true });
  mkdirSync(join(root, 'dist', 'dashboard', 'pages'), { recursive: true });
  for (const f of ['index.html', 'style.css', 'favicon.svg', 'map/map.css']) writeFileSync(join(root, 'dashboard', f), 'x');
  writeFileSync(join(root, 'dist', 'dashboard', 'main.js'), 'export {};');
  // A loop of links would recurse forever if the listing followed them.
  symlinkSync(join(root, 'dist', 'dashboard'), join(root, 'dist', 'dashboard', 'pages', 'loop'));

  let clock = 1_000_000;
  const server = new HttpServer();
  mountDashboard(server, { root, now: () => clock });
  const port = await server.listen('127.0.0.1', 0);
  const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).status;
  try {
    assert.equal(await get('/app/main.js'), 200);
    // A page asks for all of these within the same second: the one listing serves them all.
    for (const name of ['style.css', 'map.css', 'favicon.svg']) assert.equal(await get(`/app/${name}`), 200, name);
    assert.equal(await get('/app/pages/loop/main.js'), 404);
    writeFileSync(join(root, 'dist', 'dashboard', 'pages', 'new.js'), 'export {};');
    // Within the gate the new file is not seen yet, however many misses come.
    for (let i = 0; i < 20; i++) assert.equal(await get(`/app/made-up-${i}.js`), 404);
    assert.equal(await get('/app/pages/new.js'), 404);
    clock += RELIST_AFTER_MS;
    assert.equal(await get('/app/pages/new.js'), 200);
    // A name found once is served from the table, gate or not.
    assert.equal(await get('/app/pages/new.js'), 200);
  } finally {
    await server.close();
  }
});
