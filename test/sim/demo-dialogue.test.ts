import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Intent, TickResponse } from '../../brain/types.js';
import { Simulation } from '../../bench/sim/engine.js';
import { httpTransport, loadScenario, scenarioBundle } from '../../bench/sim/run.js';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { startSidecar, type SidecarTelemetry } from '../../src/sidecar/service.js';
import { ScriptedLines, SCRIPTED_MODEL } from '../../src/dialogue/scripted-lines.js';
import { cli, repoRoot, tempDir } from '../helpers/paths.js';

const GREETING = join(repoRoot, 'bench', 'sim', 'scenarios', 'greeting.json');
/** No model anywhere: whatever the machine running the tests has configured. */
const NO_MODEL = { SERVICE_LLM_BASE_URL: '', SERVICE_LLM_MODEL: '', SERVICE_TTS_ENGINE: 'off', SERVICE_STT_BASE_URL: '', SERVICE_STT_MODEL: '' };

type Say = Extract<Intent, { kind: 'Say' }> & { agent: number; t: number };

/** Runs the greeting scenario against an in-process sidecar; its Say intents and its telemetry. */
async function run(scripted: boolean, workers = 0): Promise<{ says: Say[]; telemetry: SidecarTelemetry }> {
  const scenario = loadScenario(GREETING);
  const bundle = scenarioBundle(scenario);
  const sidecar = await startSidecar({
    host: '127.0.0.1',
    port: 0,
    source: new DefaultsSource(bundle),
    workers,
    stateFile: null,
    dialogue: scripted ? { scripted: true, env: NO_MODEL } : null,
  });
  const transport = httpTransport(sidecar.url);
  const says: Say[] = [];
  try {
    await new Simulation(scenario, transport, (line) => {
      assert.equal(line.status, 200, line.reply);
      const reply = JSON.parse(line.reply) as TickResponse;
      for (const i of reply.intents) if (i.kind === 'Say') says.push({ ...i, agent: reply.agent, t: line.t });
    }).run();
    return { says, telemetry: await sidecar.drainTelemetry() };
  } finally {
    transport.close();
    await sidecar.close();
  }
}

test('demo dialogue: characters near a player say lines within the bundle limits, counted in telemetry, the same on every run', async () => {
  const bundle = scenarioBundle(loadScenario(GREETING));
  const { says, telemetry } = await run(true);
  assert.ok(says.length >= 6, `only ${says.length} lines`);
  assert.deepEqual([...new Set(says.map((s) => s.agent))].sort(), [1, 2, 3], 'every character near the player speaks');
  const perFive = bundle.speech.limits.per_5min;
  for (const s of says) {
    assert.ok(s.text.length > 0 && s.text.length <= 120, s.text);
    assert.equal(s.channel, 'proximity');
    assert.match(s.line_id, /^l_[0-9a-z]+$/);
    const window = says.filter((o) => o.agent === s.agent && o.t > s.t - 300 && o.t <= s.t);
    assert.ok(window.length <= perFive, `agent ${s.agent} said ${window.length} lines in 300 s by t=${s.t} (limit ${perFive})`);
  }
  assert.ok(
    says.some((s) => s.text.includes('Alex')),
    'lines name the player near',
  );
  assert.ok(
    says.some((s) => s.t >= 45 && s.t < 47),
    'the player saying hello is answered',
  );
  // Counted as the tier counts a model's lines: spoken, asked, served from the cache, priced at nothing.
  assert.equal(telemetry.linesSpoken, says.length);
  assert.equal(telemetry.events.spoke, says.length);
  assert.ok(telemetry.dialogue!.llmRequests > 0);
  assert.equal(telemetry.dialogue!.llmRequests + telemetry.dialogue!.cacheHits, says.length + telemetry.dialogue!.dropped);
  assert.equal(telemetry.spendUsd, 0);
  assert.equal(telemetry.llmTokens, 0);
  assert.ok((telemetry.events.heard ?? 0) >= 1, 'the hello is counted as heard');
  // Deterministic: the same seed, the same lines with the same ids; with a worker too.
  assert.deepEqual((await run(true)).says, says);
  assert.deepEqual((await run(true, 1)).says, says);
});

test('without demo dialogue and with no model configured, nobody speaks', async () => {
  const { says, telemetry } = await run(false);
  assert.equal(says.length, 0);
  assert.equal(telemetry.linesSpoken, 0);
  assert.equal(telemetry.dialogue, null);
});

test('brainstem sim --demo-dialogue passes the greeting scenario; without it its Say expectation fails; a recording replays exactly', () => {
  const dir = tempDir('brainstem-demo-dialogue-');
  try {
    const env = { ...process.env, ...NO_MODEL, BRAINSTEM_LOG: 'error' };
    const record = join(dir.path, 'greeting.jsonl');
    const on = spawnSync(process.execPath, [cli, 'sim', GREETING, '--demo-dialogue', '--quiet', '--record', record], { env, encoding: 'utf8' });
    assert.equal(on.status, 0, on.stdout + on.stderr);
    assert.match(on.stdout, /PASS {2}\{"check":"intent_seen","kind":"Say"\}/);
    const replay = spawnSync(process.execPath, [cli, 'replay', record], { env, encoding: 'utf8' });
    assert.equal(replay.status, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /every reply reproduced/);
    const off = spawnSync(process.execPath, [cli, 'sim', GREETING, '--quiet'], { env, encoding: 'utf8' });
    assert.equal(off.status, 1, off.stdout + off.stderr);
    assert.match(off.stdout, /FAIL {2}\{"check":"intent_seen","kind":"Say"\}/);
    const both = spawnSync(process.execPath, [cli, 'sim', GREETING, '--demo-dialogue', '--sidecar', 'http://127.0.0.1:9'], { env, encoding: 'utf8' });
    assert.equal(both.status, 1);
    assert.match(both.stderr, /--demo-dialogue applies to the sidecar sim starts/);
  } finally {
    dir.dispose();
  }
});

test('ScriptedLines: one line per request, seeded, within max_chars, from the role, the players near, what was heard and the themes', async () => {
  const params = (kind: string, over: Partial<{ heard: { from: string; text: string }[]; max: number; themes: string[] }> = {}) => ({
    game: null,
    character: { name: 'Mira', role: 'guard', traits: {}, themes: over.themes ?? ['was a nurse before'], goal: '', emotion: '' },
    flavor: '',
    memory: '',
    situation: { kind, doing: '', players: [{ name: 'Alex', distance_m: 5 }], heard: over.heard ?? [], event: kind === 'event' ? 'fighting' : '' },
    max_chars: over.max ?? 120,
  });
  const a = new ScriptedLines(7);
  const b = new ScriptedLines(7);
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) {
    const kind = ['greet', 'idle', 'reply', 'event'][i % 4]!;
    const p = params(kind, { heard: kind === 'reply' ? [{ from: 'Alex', text: 'any "water" here?' }] : [] });
    const one = await a.line(p);
    assert.equal(one.model, SCRIPTED_MODEL);
    assert.deepEqual(one.usage, { prompt_tokens: 0, completion_tokens: 0 });
    assert.equal(one.cost_usd, 0);
    assert.equal((await b.line(p)).text, one.text, 'the same seed and requests, the same lines');
    lines.push(one.text);
  }
  assert.ok(new Set(lines).size >= 8, `too little variety: ${[...new Set(lines)].join(' | ')}`);
  assert.ok(
    lines.some((l) => l.includes('was a nurse before')),
    'a theme is used',
  );
  assert.ok(lines.some((l) => l.includes('Alex')));
  assert.ok(!lines.some((l) => /\{[pqst]\}/.test(l)), 'no placeholder is left');
  assert.ok(lines.every((l) => !l.includes('""')));
  for (let i = 0; i < 20; i++) assert.ok(new ScriptedLines(i).write(params('greet', { max: 12, themes: ['a'.repeat(60)] })).length <= 12);
  const other = new ScriptedLines(8);
  const differs = lines.some((l, i) => other.write(params(['greet', 'idle', 'reply', 'event'][i % 4]!, { heard: [{ from: 'Alex', text: 'x' }] })) !== l);
  assert.ok(differs, 'another seed, other lines');
});
