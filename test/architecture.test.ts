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

/**
 * The layering rules as predicates over one import, each with an import that breaks it: a rule
 * is checked on the tree and, so that a rule which can never fire is noticed, on its violation.
 */
const RULES: { name: string; bad: (e: Edge) => boolean; violation: Edge }[] = [
  {
    name: 'brain/ imports nothing of the repository outside itself',
    bad: (e) => e.from.startsWith('brain/') && !e.to.startsWith('brain/'),
    violation: { from: 'brain/brain.ts', to: 'src/log.ts', kind: 'type' },
  },
  {
    name: 'services never import each other; they meet in src/cli/ and src/embedded/',
    bad: (e) => {
      const a = serviceOf(e.from);
      const b = serviceOf(e.to);
      return a !== undefined && b !== undefined && a !== b;
    },
    violation: { from: 'src/webhooks/widget-routes.ts', to: 'src/video/limits.ts', kind: 'static' },
  },
  {
    name: 'nothing outside test/ imports test/',
    bad: (e) => !e.from.startsWith('test/') && e.to.startsWith('test/'),
    violation: { from: 'bench/fake-openai.ts', to: 'test/helpers/paths.ts', kind: 'dynamic' },
  },
  {
    name: 'bench/ never imports the CLI',
    bad: (e) => e.from.startsWith('bench/') && e.to.startsWith('src/cli/'),
    violation: { from: 'bench/fake-openai.ts', to: 'src/cli/util.ts', kind: 'type' },
  },
  {
    name: 'storage never imports transport',
    bad: (e) => e.from.startsWith('src/store/') && e.to.startsWith('src/http/'),
    violation: { from: 'src/store/database.ts', to: 'src/http/errors.ts', kind: 'type' },
  },
  {
    name: 'transport never imports storage',
    bad: (e) => e.from.startsWith('src/http/') && e.to.startsWith('src/store/'),
    violation: { from: 'src/http/server.ts', to: 'src/store/database.ts', kind: 'static' },
  },
  {
    name: 'the rate limiter between storage and transport imports neither',
    bad: (e) => e.from.startsWith('src/ratelimit/') && /^src\/(http|store)\//.test(e.to),
    violation: { from: 'src/ratelimit/limiter.ts', to: 'src/http/errors.ts', kind: 'static' },
  },
];

for (const rule of RULES) {
  test(rule.name, () => {
    assert.deepEqual(show(edges.filter(rule.bad)), []);
    assert.ok(rule.bad(rule.violation), `the rule catches ${show([rule.violation])[0]}`);
  });
}

test('src/ loads bench/ only lazily, from a bench or sim command', () => {
  const eager = edges.filter((e) => e.from.startsWith('src/') && e.to.startsWith('bench/') && e.kind === 'static');
  assert.deepEqual(show(eager), [], 'a static import would load a benchmark with every command');
  const lazy = edges.filter((e) => e.from.startsWith('src/') && e.to.startsWith('bench/') && e.kind === 'dynamic');
  assert.deepEqual(show(lazy.filter((e) => !/^src\/cli\/commands\/(bench|sim)/.test(e.from))), []);
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

/** The import cycles among NODES: Tarjan's strongly connected components of more than one module. */
function cyclesOf(nodes: string[], imports: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of imports) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
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
  for (const f of nodes) if (!index.has(f)) visit(f);
  return cycles;
}

test('no import cycles among the modules, type-only imports included', () => {
  assert.deepEqual(cyclesOf(files, edges), []);
  // A cycle of type-only imports is a cycle too.
  const pair: Edge[] = [
    { from: 'a.ts', to: 'b.ts', kind: 'type' },
    { from: 'b.ts', to: 'a.ts', kind: 'type' },
  ];
  assert.deepEqual(cyclesOf(['a.ts', 'b.ts'], pair), [['a.ts', 'b.ts']]);
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
