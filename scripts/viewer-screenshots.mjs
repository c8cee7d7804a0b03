// Redraws the pictures of docs/brain.md and docs/simulator.md from the replay page itself:
// runs standard scenarios with `brainstem sim --html`, opens each page in headless Chromium
// (Debian's /usr/bin/chromium, through playwright-core) and screenshots set moments.
//
//   npm run build && node scripts/viewer-screenshots.mjs [--chromium PATH]
//
// The runs are deterministic, so the pictures change only when the brain or the page does.
// PNGs go to docs/images/; each is kept small (a cropped 1100×640 view, palette colours).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'docs', 'images');
const at = process.argv.indexOf('--chromium');
const executablePath = at > 0 ? process.argv[at + 1] : '/usr/bin/chromium';
const viewport = { width: 1100, height: 640 };

/** What to draw: a scenario, then per picture the moment, the selection, the zoom, a hovered character. */
const SHOTS = [
  {
    scenario: 'ambush-30.json',
    pictures: [
      { file: 'viewer-ambush.png', t: 24, select: 3, hover: 8, zoom: 0 },
      { file: 'viewer-ambush-zoomed.png', t: 24, select: 3, zoom: 3, centre: 3 },
    ],
  },
  {
    scenario: 'crowd-50.json',
    pictures: [{ file: 'viewer-crowd.png', t: 150, select: 12, zoom: 0 }],
  },
];

function sim(scenario, page) {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'brainstem'), 'sim', join(root, 'bench', 'sim', 'scenarios', scenario), '--html', page, '--quiet'], {
    encoding: 'utf8',
    env: { ...process.env, BRAINSTEM_LOG: 'silent' },
  });
  // A scenario whose expectations fail still draws a page (exit 1); anything else is a failure.
  if (r.status !== 0 && r.status !== 1) throw new Error(`brainstem sim ${scenario} failed (${r.status}): ${r.stderr}`);
}

mkdirSync(out, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), 'brainstem-shots-'));
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
try {
  for (const shot of SHOTS) {
    const page = join(scratch, `${shot.scenario}.html`);
    sim(shot.scenario, page);
    const tab = await browser.newPage({ viewport });
    const errors = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(`file://${page}`);
    for (const p of shot.pictures) {
      await tab.evaluate(`window.replay.view.fitView(); window.replay.show(window.replay.frameAt(${p.t})); window.replay.select(${p.select ?? 'null'})`);
      for (let i = 0; i < (p.zoom ?? 0); i++) await tab.evaluate('window.replay.view.zoomBy(1.5)');
      if (p.centre !== undefined) await tab.evaluate(`{ const c = window.replay.view.character(${p.centre}); if (c) window.replay.view.centreOn(c.x, c.z); }`);
      if (p.hover !== undefined) await tab.locator(`g.map-char[data-id="${p.hover}"] circle`).hover({ force: true });
      else await tab.mouse.move(0, 0);
      const file = join(out, p.file);
      await tab.screenshot({ path: file });
      console.log(`${file}: ${Math.round(statSync(file).size / 1024)} KB`);
    }
    if (errors.length > 0) throw new Error(`the page of ${shot.scenario} failed: ${errors.join('; ')}`);
    await tab.close();
  }
} finally {
  await browser.close();
  rmSync(scratch, { recursive: true, force: true });
}
