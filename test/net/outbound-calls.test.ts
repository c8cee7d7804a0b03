/**
 * Every outbound request to a URL a tenant chose goes through the one SSRF guard (src/net/):
 * a webhook delivery and a video callback through createSender with the guard's addresses, a
 * widget's own model URL through pinnedFetch. This scan of src/ finds every other place that
 * could make an HTTP request, so a new one must be added here with its reason, or use src/net/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';

/** What makes a request: fetch, node:http(s) clients, a model client's base URL. */
const OUTBOUND = [
  /\bfetch\s*\(/,
  /\?\?\s*fetch\s*\)\s*\(/,
  /\bhttps?\s*\)?\.(request|get)\s*\(/,
  /from\s+'node:https?'/,
  /\bbaseURL\s*:/,
  /from\s+'(node:)?undici'/,
];

/** Files that may, and why: none of them calls a URL a tenant chose. */
const ALLOWED: Record<string, string> = {
  'src/net/pinned-fetch.ts': 'the guard itself: every request is guarded, then pinned to the checked address',
  'src/net/sender.ts': "the guard's sender: connects only to the addresses the guard approved",
  'src/cli/control-plane-api.ts': "the CLI calling the operator's own server",
  'src/cli/commands/webhooks.ts': 'webhooks listen forwarding to the local URL the operator gave on the command line',
  'src/sidecar/link/control-plane-client.ts': "the sidecar's control plane URL, the operator's setting",
  'src/dialogue/model-check.ts': "SERVICE_LLM_BASE_URL, the operator's setting",
  'src/webhooks/conversations/agent.ts': "the server's model (SERVICE_LLM_BASE_URL) as is; a widget's own base_url only through pinnedFetch (checked below)",
};

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(repoRoot, dir)).sort()) {
    const path = `${dir}/${name}`;
    if (statSync(join(repoRoot, path)).isDirectory()) sources(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

test('only the SSRF guard and the listed operator-configured clients make outbound requests in src/', () => {
  const found = new Set<string>();
  for (const file of sources('src')) {
    // Comments left out: prose about fetching is no request.
    const text = readFileSync(join(repoRoot, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    if (OUTBOUND.some((re) => re.test(text))) found.add(file);
  }
  assert.ok(found.has('src/net/sender.ts'), 'the scan sees the sources');
  assert.deepEqual(
    [...found].filter((f) => !(f in ALLOWED)),
    [],
    'a new outbound request: use src/net/ (the SSRF guard) or list it with its reason',
  );
  const agent = readFileSync(join(repoRoot, 'src/webhooks/conversations/agent.ts'), 'utf8');
  assert.deepEqual(
    Object.keys(ALLOWED).filter((f) => !found.has(f)),
    [],
    'a listed file that no longer makes requests: take it off the list',
  );
  assert.match(agent, /target\.own\s*\n?\s*\?\s*\{\s*fetch:\s*pinnedFetch\(/, "a widget's own model URL is called through pinnedFetch");
});
