/**
 * The FiveM resource and the Garry's Mod addon, each loaded as its runtime loads it (the
 * fxmanifest's server_scripts; lua/autorun/server) into a shim of that runtime under lua5.4:
 * PerformHttpRequest and HTTP{} with their documented callback signatures, answered on a
 * later server tick, doing real HTTP to a real sidecar. Game objects (peds, NPCs) are
 * records; the tests check the calls the kits make on them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientsDir, driversDir, run, startTokenSidecar, TOKEN } from './helpers.js';
import { skipLive } from './lua-client.js';

const KITS = { fivem: join(clientsDir, 'fivem', 'brainstem'), gmod: join(clientsDir, 'gmod', 'brainstem') } as const;
type Engine = keyof typeof KITS;

interface Report {
  batches: number[];
  calls: Record<string, number>;
  logs: string[];
  recorded: Record<string, unknown[][]>;
  /** The agents whose reply the client applied, and the client's call counters. */
  replied: number[];
  stats: { sent: number; applied: number; stale: number; failed: number };
}

const AGENT_BASE: Record<string, number> = { fivem: 5100, gmod: 6100 };
const agents = (engine: string, n: number) => Array.from({ length: n }, (_, i) => AGENT_BASE[engine]! + i + 1);
/** The distinct characters (first argument) a recorded game call was made for. */
const distinct = (r: Report, call: string) => new Set((r.recorded[call] ?? []).map((args) => args[0])).size;

async function runKit(engine: Engine, url: string, token: string, characters: number, seconds: number, playerMetres?: number): Promise<Report> {
  const args = [join(driversDir, 'kits', 'driver.lua'), engine, KITS[engine], url, token, String(characters), String(seconds)];
  if (playerMetres !== undefined) args.push(String(playerMetres));
  const r = await run('lua5.4', args);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Report;
}

const options = { skip: skipLive ?? false };
if (skipLive) console.log(`# Lua kit tests skipped: ${skipLive}`);

test('lua kits: each kit carries the one Lua module, byte for byte', () => {
  const module = readFileSync(join(clientsDir, 'lua', 'brainstem.lua'), 'utf8');
  const perception = readFileSync(join(clientsDir, 'lua', 'brainstem_perception.lua'), 'utf8');
  for (const dir of [KITS.fivem, join(KITS.gmod, 'lua', 'brainstem')]) {
    assert.equal(readFileSync(join(dir, 'brainstem.lua'), 'utf8'), module, `${dir}/brainstem.lua differs from clients/lua/brainstem.lua`);
    assert.equal(readFileSync(join(dir, 'brainstem_perception.lua'), 'utf8'), perception, `${dir}/brainstem_perception.lua differs`);
  }
});

const REACTS: Record<Engine, { move: string; engage: string[] }> = {
  fivem: { move: 'TaskGoStraightToCoord', engage: ['TaskCombatPed', 'TaskAimGunAtEntity'] },
  gmod: { move: 'SetLastPosition', engage: ['SetEnemy'] },
};

for (const engine of ['fivem', 'gmod'] as const) {
  test(`${engine} kit: characters patrol, and engage a hostile player standing near`, options, async () => {
    const sidecar = await startTokenSidecar();
    try {
      const alone = await runKit(engine, sidecar.url, TOKEN, 3, 2);
      assert.ok(alone.batches.length >= 2 && alone.batches.every((n) => n === 3), `one batch of 3 per cadence: ${alone.batches}`);
      assert.deepEqual(alone.replied, agents(engine, 3), 'each character got a reply, under its own stable id');
      assert.equal(distinct(alone, REACTS[engine].move), 3, 'each character is sent along its route');
      assert.deepEqual(
        alone.logs.filter((l) => /failed/.test(l)),
        [],
      );

      const near = await runKit(engine, sidecar.url, TOKEN, 3, 2, 8);
      const engaged = REACTS[engine].engage.reduce((sum, call) => sum + (near.calls[call] ?? 0), 0);
      assert.ok(engaged >= 1, `a character engages the player 8 m away: ${JSON.stringify(near.calls)}`);
    } finally {
      await sidecar.close();
    }
  });

  test(`${engine} kit: 100 characters go in one batch per frame, every one answered`, options, async () => {
    const sidecar = await startTokenSidecar();
    try {
      const out = await runKit(engine, sidecar.url, TOKEN, 100, 2);
      assert.ok(out.batches.length >= 2, `batches: ${out.batches}`);
      for (const n of out.batches) assert.equal(n, 100);
      assert.deepEqual(out.replied, agents(engine, 100), 'every character got its reply applied');
      assert.equal(out.stats.failed, 0);
      // The last batch's reply is due on the tick after the run ends.
      assert.ok(out.stats.applied >= out.batches.length - 1, JSON.stringify(out.stats));
      assert.equal(out.stats.stale, 0);
      assert.deepEqual(
        out.logs.filter((l) => /failed/.test(l)),
        [],
      );
    } finally {
      await sidecar.close();
    }
  });

  test(`${engine} kit: a wrong or missing token fails loudly, naming the fix, and moves nobody`, options, async () => {
    const sidecar = await startTokenSidecar();
    try {
      for (const token of ['not-the-token', '-']) {
        const out = await runKit(engine, sidecar.url, token, 3, 1);
        const failures = out.logs.filter((l) => l.startsWith('[brainstem] call failed:'));
        assert.ok(failures.length >= 1, `no failure logged: ${JSON.stringify(out.logs)}`);
        for (const line of failures) assert.match(line, /unauthorized.*brain token/);
        assert.equal(out.calls[REACTS[engine].move], undefined);
        assert.deepEqual(out.replied, []);
        if (token === '-') assert.ok(out.logs.some((l) => /brainstem_token is not set/.test(l)));
      }
    } finally {
      await sidecar.close();
    }
  });

  test(`${engine} kit: no sidecar at the URL is a logged network failure`, options, async () => {
    const out = await runKit(engine, 'http://127.0.0.1:9', TOKEN, 3, 1);
    const failures = out.logs.filter((l) => l.startsWith('[brainstem] call failed:'));
    assert.ok(failures.length >= 1, JSON.stringify(out.logs));
    assert.match(failures[0]!, /network/);
  });
}
