import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from './helpers/paths.js';

/** The README is the front door only; the manual lives in docs/. */
export const README_MAX_LINES = 250;

const docsDir = join(repoRoot, 'docs');
const pages = [
  'README.md',
  ...readdirSync(docsDir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];
const read = (page: string) => readFileSync(join(repoRoot, page), 'utf8');

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (m) anchors.add(anchorOf(m[1]!));
  }
  return anchors;
}

/** Text outside fenced code blocks. */
function prose(text: string): string {
  return text
    .split(/^```.*$/m)
    .filter((_, i) => i % 2 === 0)
    .join('\n');
}

test(`the README stays a front door of at most ${README_MAX_LINES} lines, starting with the two commands`, () => {
  const readme = read('README.md');
  assert.ok(readme.split('\n').length <= README_MAX_LINES, `README.md has ${readme.split('\n').length} lines`);
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  assert.match(firstBlock, /^npm install && npm start/m);
  assert.match(firstBlock, /^npm test/m);
});

test('the docs index lists every page of docs/', () => {
  const index = read('docs/README.md');
  const unlisted = readdirSync(docsDir).filter((f) => f.endsWith('.md') && f !== 'README.md' && !index.includes(`](${f})`));
  assert.deepEqual(unlisted, []);
});

test('the docs cite no document a user does not have', () => {
  for (const page of pages) {
    const text = read(page);
    for (const banned of [/BRAIN\.md/, /DESIGN\.md/, /STYLE\.md/, /\bspec \d{3}\b/i, /§/]) {
      assert.doesNotMatch(text, banned, `${page} mentions ${banned}`);
    }
  }
});

test('every relative link of the docs and of the benchmark results reaches an existing file and heading', () => {
  for (const page of [...pages, join('bench', 'RESULTS.md')]) {
    const text = prose(read(page));
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [file, anchor] = target!.split('#') as [string, string | undefined];
      const path = file === '' ? join(repoRoot, page) : join(repoRoot, dirname(page), file);
      assert.ok(existsSync(path), `${page} links to ${target}, which does not exist`);
      if (anchor !== undefined && path.endsWith('.md')) {
        assert.ok(anchorsOf(readFileSync(path, 'utf8')).has(anchor), `${page} links to ${target}, which has no such heading`);
      }
    }
  }
});

test('examples run the CLI through npx (nothing puts a bare brainstem on PATH)', () => {
  for (const page of pages) {
    const code = read(page)
      .split(/^```.*$/m)
      .filter((_, i) => i % 2 === 1)
      .join('\n');
    const bare = code.split('\n').filter((line) => /^(\$ )?([A-Z_]+=\S* )*brainstem [a-z]/.test(line) && !/^brainstem [a-z]+:/.test(line));
    assert.deepEqual(bare, [], `${page} runs a bare brainstem`);
  }
});

test('the serve command binds with --addr; no page gives it --host or --port', () => {
  for (const page of pages) {
    for (const line of read(page).split('\n')) {
      if (/brainstem (serve|up)\b/.test(line)) assert.doesNotMatch(line, /--host|--port/, `${page}: ${line}`);
    }
  }
});

/** Variables the code sets for a library rather than reads from the operator. */
const ENV_SET_NOT_READ = new Set(['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED']);

test('every environment variable the code reads is in docs/configuration.md', () => {
  const configuration = read('docs/configuration.md');
  const names = new Set<string>();
  for (const dir of ['src', 'plugins']) {
    for (const file of readdirSync(join(repoRoot, dir), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      const source = readFileSync(join(repoRoot, dir, file), 'utf8');
      for (const m of source.matchAll(/(?:\benv\.|\benv\[|['"`])((?:SERVICE|BRAINSTEM|STRIPE|AWS)_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|FFMPEG_PATH)\b/g))
        names.add(m[1]!);
    }
  }
  assert.ok(names.size > 30, `only ${names.size} variables found: the scan is broken`);
  const missing = [...names].filter((name) => !ENV_SET_NOT_READ.has(name) && !configuration.includes(`\`${name}\``));
  assert.deepEqual(missing, []);
});
