import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../helpers/paths.js';

test('bench brain --json prints one JSON document on stdout and nothing else', async () => {
  const r = await runCli(['bench', 'brain', '--json', '--agents', '10', '--ticks', '50', '--rounds', '1'], { BRAINSTEM_LOG: 'silent' });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotThrow(() => JSON.parse(r.stdout), r.stdout);
});

test('bench brain --against DIR runs that build beside this one and reports both, with per-round ratios', async () => {
  const dist = fileURLToPath(new URL('../../../', import.meta.url));
  const r = await runCli(['bench', 'brain', '--json', '--agents', '10', '--ticks', '20', '--rounds', '3', '--against', dist], { BRAINSTEM_LOG: 'silent' });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    modes: unknown[];
    against: { modes: { mode: string }[]; all_on_cpu_vs_against: number; reactive_cpu_vs_against: number };
  };
  assert.equal(out.modes.length, 2);
  assert.deepEqual(
    out.against.modes.map((m) => m.mode),
    ['reactive-only, against', 'all-on, against'],
  );
  assert.ok(out.against.all_on_cpu_vs_against > 0 && out.against.reactive_cpu_vs_against > 0);
  const bad = await runCli(['bench', 'brain', '--json', '--agents', '10', '--ticks', '20', '--rounds', '1', '--against', '/nonexistent-build'], {
    BRAINSTEM_LOG: 'silent',
  });
  assert.notEqual(bad.code, 0);
  assert.equal(bad.stdout, '');
});

test('with --json, anything printed through console goes to stderr, never into the JSON on stdout', async () => {
  const bench = fileURLToPath(new URL('../../../src/cli/commands/bench.js', import.meta.url));
  const script = `const { jsonOnlyStdout } = await import(${JSON.stringify(bench)}); jsonOnlyStdout(); console.log('stray'); console.info('info'); process.stdout.write('{}\\n');`;
  const out = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }, (err, stdout, stderr) =>
      err ? reject(err) : resolve({ stdout, stderr }),
    ),
  );
  assert.equal(out.stdout, '{}\n');
  assert.match(out.stderr, /stray\ninfo/);
});
