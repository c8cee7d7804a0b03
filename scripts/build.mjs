// `npm run build` (and npm's `prepare`): tsc for the server (`tsc -p .`), the dashboard and the
// widget, into dist/, unless the last build's outputs are still those of the same sources.
//
//   node scripts/build.mjs [--force]
//
// `.ci/run` builds twice on a clean clone (`npm ci`'s `prepare`, then `npm test`'s build), and the
// second found nothing to do after a dozen CPU seconds of tsc. After a build that succeeded,
// dist/.build-stamp records a hash of every input (the sources' contents, the tsconfigs,
// package-lock.json, the TypeScript version) and of every file of dist/ (path, size, mtime); a
// build is skipped only when both hash the same now. So a changed, added or deleted source, an
// install of other packages, and any file of dist/ written, touched or deleted since (even by hand)
// all mean a full build, as before. --force builds whatever the stamp says.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What tsc reads: the `include`s of tsconfig.json, dashboard/ and widget/, and what decides how. */
const SOURCE_DIRS = ['src', 'brain', 'plugins', 'bench', 'test', 'dashboard', 'widget'];
const SOURCE_FILES = ['tsconfig.json', 'package.json', 'package-lock.json', 'node_modules/typescript/package.json'];
const PROJECTS = ['.', 'dashboard', 'widget'];
const STAMP = '.build-stamp';

function filesUnder(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) filesUnder(path, out);
    else out.push(path);
  }
  return out;
}

/** A hash of the build's inputs (by content) and of dist/ as it is now (by path, size and mtime), or null without a dist/. */
function fingerprint(root) {
  const dist = join(root, 'dist');
  if (!existsSync(dist)) return null;
  const h = createHash('sha256');
  for (const path of [...SOURCE_FILES.map((f) => join(root, f)), ...SOURCE_DIRS.flatMap((d) => filesUnder(join(root, d)))]) {
    h.update(`${relative(root, path)}\0`);
    h.update(existsSync(path) ? readFileSync(path) : '(none)');
    h.update('\0');
  }
  for (const path of filesUnder(dist)) {
    if (relative(dist, path) === STAMP) continue;
    const st = statSync(path);
    h.update(`${relative(root, path)}\0${st.size}\0${st.mtimeMs}\0`);
  }
  return h.digest('hex');
}

/** Whether dist/ holds the last successful build of the sources as they are now. */
export function buildIsCurrent(root) {
  const stamp = join(root, 'dist', STAMP);
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === fingerprint(root);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  if (!process.argv.includes('--force') && buildIsCurrent(root)) {
    console.log('build: dist/ is the build of these sources already (dist/.build-stamp); --force to build anyway');
    process.exit(0);
  }
  rmSync(join(root, 'dist', STAMP), { force: true });
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  for (const project of PROJECTS) {
    const r = spawnSync(tsc, ['-p', join(root, project)], { stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  writeFileSync(join(root, 'dist', STAMP), `${fingerprint(root)}\n`);
}
