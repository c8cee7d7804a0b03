import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { describe as describeIntents } from '../../bench/sim/engine.js';
import type { TickResponse } from '../../brain/index.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(repoRoot, 'test-artifacts', 'sim');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.log(`# replay page browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);

interface Recorded {
  t: number;
  request: string;
  reply: string;
}

describe('brainstem sim --html: the replay page in a browser', { skip: haveChromium ? false : `${CHROMIUM} is missing` }, () => {
  const tmp = tempDir('replay-page-');
  const page = join(tmp.path, 'replay.html');
  const record = join(tmp.path, 'run.jsonl');
  let browser: Browser;
  let tab: Page;
  const errors: string[] = [];

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const child = spawn(
      process.execPath,
      [
        join(repoRoot, 'bin', 'brainstem'),
        'sim',
        join(repoRoot, 'bench', 'sim', 'scenarios', 'squad-shares-contacts.json'),
        '--html',
        page,
        '--record',
        record,
        '--quiet',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, BRAINSTEM_LOG: 'silent' },
      },
    );
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.resume();
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, err);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    tab = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(`file://${page}`);
  });

  after(async () => {
    await browser?.close();
    tmp.dispose();
  });

  test('scrubbing to a time draws each character where the record has it, labelled with its reply', async () => {
    const lines = readFileSync(record, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(1)
      .map((l) => JSON.parse(l) as Recorded);
    const at = 10;
    // A frame is the world after a step: the position the next step's request carries, the intents of this step's reply.
    const reply = lines.find((l) => l.t === at && (JSON.parse(l.reply) as TickResponse).agent === 2)!;
    const next = lines.find((l) => l.t > at && (JSON.parse(l.reply) as TickResponse).agent === 2)!;
    const pos = (JSON.parse(next.request) as { snapshot: { self_state: { pos: { x: number; z: number } } } }).snapshot.self_state.pos;
    const label = describeIntents((JSON.parse(reply.reply) as TickResponse).intents);

    // Scrub as a user drags the slider: set its value, fire `input`. (Page code runs as strings: no DOM types here.)
    await tab.evaluate(
      `{ const s = document.getElementById('timeline'); s.value = String(window.replay.frameAt(${at})); s.dispatchEvent(new Event('input')); }`,
    );
    assert.equal(await tab.locator('#time').textContent(), `${at.toFixed(1)} s`);
    const drawn = tab.locator('g.char[data-id="2"]');
    const cx = Number(await drawn.locator('circle').getAttribute('cx'));
    const cy = Number(await drawn.locator('circle').getAttribute('cy'));
    const want = (await tab.evaluate(`window.replay.toScreen(${pos.x}, ${pos.z})`)) as { x: number; y: number };
    assert.ok(Math.abs(cx - want.x) < 1e-6 && Math.abs(cy - want.y) < 1e-6, `drawn at ${cx},${cy}, recorded ${pos.x},${pos.z} → ${want.x},${want.y}`);
    assert.equal(await drawn.locator('text').textContent(), label);
    await tab.screenshot({ path: join(ARTIFACTS, 'replay-scrubbed.png') });

    await drawn.locator('circle').click({ force: true });
    assert.equal(await tab.locator('#detail dd[data-field="position"]').textContent(), `${pos.x.toFixed(1)}, ${pos.z.toFixed(1)}`);
    assert.equal(await tab.locator('#detail dd[data-field="intents"]').textContent(), label);
    await tab.screenshot({ path: join(ARTIFACTS, 'replay-selected.png') });
    assert.deepEqual(errors, []);
  });

  test('play advances the timeline and pause stops it', async () => {
    await tab.evaluate(`window.replay.show(0)`);
    await tab.locator('#play').click();
    await tab.waitForFunction(`Number(document.getElementById('timeline').value) > 3`);
    await tab.locator('#play').click();
    assert.equal(await tab.locator('#play').textContent(), 'Play');
  });
});
