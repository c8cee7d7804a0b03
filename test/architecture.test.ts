import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { repoRoot } from './helpers/paths.js';

// The layering of docs/ARCHITECTURE.md, checked on the sources: every relative import of every
// TypeScript file, resolved to the file it names.

type Kind = 'static' | 'type' | 'dynamic';
interface Edge {
  from: string;
  to: string;
  kind: Kind;
}

/** The service directories: none imports another. The dialogue tier is the sidecar's. */
const SERVICES: Record<string, string> = {
  'src/sidecar/': 'sidecar',
  'src/dialogue/': 'sidecar',
  'src/controlplane/': 'controlplane',
  'src/video/': 'video',
  'src/webhooks/': 'webhooks',
};
const ROOTS = ['brain', 'src', 'bench', 'plugins', 'dashboard', 'widget', 'clients', 'test', 'scripts'];

function sourcesUnder(dir: string, out: string[] = []): string[] {
  if (!existsSync(join(repoRoot, dir))) return out;
  for (const name of readdirSync(join(repoRoot, dir)).sort()) {
    const path = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(join(repoRoot, path)).isDirectory()) sourcesUnder(path, out);
    else if (/\.(ts|mts|tsx|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** `from './x.js'` names ./x.ts in the sources. */
function resolve(from: string, spec: string): string {
  const target = normalize(join(dirname(from), spec));
  for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts'), target, `${target}.ts`, join(target, 'index.ts')]) {
    if (existsSync(join(repoRoot, candidate)) && statSync(join(repoRoot, candidate)).isFile()) return candidate;
  }
  return target;
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  const edges: Edge[] = [];
  const statics = /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  for (const m of text.matchAll(statics)) {
    if (m[3]!.startsWith('.')) edges.push({ from: file, to: resolve(file, m[3]!), kind: m[2] ? 'type' : 'static' });
  }
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    if (m[1]!.startsWith('.')) edges.push({ from: file, to: resolve(file, m[1]!), kind: 'dynamic' });
  }
  return edges;
}

const files = ROOTS.flatMap((root) => sourcesUnder(root));
const edges = files.flatMap(importsOf);
const serviceOf = (file: string) => Object.entries(SERVICES).find(([dir]) => file.startsWith(dir))?.[1];
const show = (bad: Edge[]) => bad.map((e) => `${e.from} -> ${e.to} (${e.kind})`);

test('the import scan sees the tree (a guard against a scan that finds nothing)', () => {
  assert.ok(files.length > 100, `${files.length} files`);
  assert.ok(edges.some((e) => e.from.startsWith('src/sidecar/') && e.to.startsWith('brain/')));
});

test('brain/ imports nothing of the repository outside itself', () => {
  assert.deepEqual(show(edges.filter((e) => e.from.startsWith('brain/') && !e.to.startsWith('brain/'))), []);
});

test('services never import each other; they meet in src/cli/', () => {
  const bad = edges.filter((e) => {
    const a = serviceOf(e.from);
    const b = serviceOf(e.to);
    return a !== undefined && b !== undefined && a !== b;
  });
  assert.deepEqual(show(bad), []);
});

test('nothing outside test/ imports test/', () => {
  assert.deepEqual(show(edges.filter((e) => !e.from.startsWith('test/') && e.to.startsWith('test/'))), []);
});

test('src/ loads bench/ only lazily, from a bench or sim command, and bench/ never imports the CLI', () => {
  const eager = edges.filter((e) => e.from.startsWith('src/') && e.to.startsWith('bench/') && e.kind === 'static');
  assert.deepEqual(show(eager), [], 'a static import would load a benchmark with every command');
  const lazy = edges.filter((e) => e.from.startsWith('src/') && e.to.startsWith('bench/') && e.kind === 'dynamic');
  assert.deepEqual(show(lazy.filter((e) => !/^src\/cli\/commands\/(bench|sim)/.test(e.from))), []);
  // The composition of the services (src/embedded/) is what a benchmark starts; the CLI is what starts benchmarks.
  assert.deepEqual(show(edges.filter((e) => e.from.startsWith('bench/') && e.to.startsWith('src/cli/'))), []);
});

test('storage never imports transport, and transport never imports storage; the rate limiter between them imports neither', () => {
  const bad = edges.filter(
    (e) =>
      (e.from.startsWith('src/store/') && e.to.startsWith('src/http/')) ||
      (e.from.startsWith('src/http/') && e.to.startsWith('src/store/')) ||
      (e.from.startsWith('src/ratelimit/') && /^src\/(http|store)\//.test(e.to)),
  );
  assert.deepEqual(show(bad), []);
});

test('the services are composed only in src/embedded/ (serve, up) and src/cli/, which nothing else imports', () => {
  const composers = /^src\/(cli|embedded)\//;
  const bad = edges.filter((e) => composers.test(e.to) && !composers.test(e.from) && !e.from.startsWith('test/') && !e.from.startsWith('bench/'));
  assert.deepEqual(show(bad), []);
  // The composition knows nothing of the command line.
  assert.deepEqual(show(edges.filter((e) => e.from.startsWith('src/embedded/') && e.to.startsWith('src/cli/'))), []);
});

test('clients/, dashboard/ and widget/ import nothing of the repository outside themselves: they speak HTTP', () => {
  assert.ok(files.some((f) => f.startsWith('dashboard/')) && files.some((f) => f.startsWith('widget/')), 'the scan sees the browser code');
  for (const dir of ['clients/', 'dashboard/', 'widget/']) {
    assert.deepEqual(show(edges.filter((e) => e.from.startsWith(dir) && !e.to.startsWith(dir))), []);
  }
});

test('no import cycles among the modules, type-only imports included', () => {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  // Tarjan's strongly connected components: any component of more than one module is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  assert.deepEqual(cycles, []);
});

test('every relative import names a file that exists', () => {
  const missing = edges.filter((e) => !existsSync(join(repoRoot, e.to)));
  assert.deepEqual(
    missing.map((e) => `${e.from} -> ${relative('.', e.to)}`),
    [],
  );
});

test("the tick path (src/sidecar/tick/) imports nothing from the sidecar's config/, link/ or state/", () => {
  const bad = edges.filter((e) => e.from.startsWith('src/sidecar/tick/') && /^src\/sidecar\/(config|link|state)\//.test(e.to));
  assert.deepEqual(show(bad), []);
  assert.ok(
    edges.some((e) => e.from.startsWith('src/sidecar/tick/')),
    'the scan sees src/sidecar/tick/',
  );
});

test('the tick schema (brain/tick-schema.ts) is data and imports nothing: the types, the validator and the fast readers derive from it', () => {
  assert.ok(files.includes('brain/tick-schema.ts'));
  assert.deepEqual(show(edges.filter((e) => e.from === 'brain/tick-schema.ts')), []);
});
