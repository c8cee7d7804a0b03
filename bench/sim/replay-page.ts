import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Scenario } from './scenario.js';
import type { FrameCharacter } from './engine.js';
import { boundsOf, type ReplayData, type ReplayRow, type Why } from '../../dashboard/map/model.js';

/**
 * `brainstem sim SCENARIO --html FILE`: one self-contained page (no network, no files beside
 * it) replaying a run on a map, so a designer can watch what the believability figures count.
 * The page is drawn by the dashboard's map renderer (dashboard/map/): its compiled modules are
 * inlined here, so the replay page and the live map are one renderer. Frames are kept at most
 * MAX_FRAMES (a long run is sampled evenly); strings and explanations are interned.
 */

/** The most frames a page holds: a 3-hour run at 2 Hz is sampled down to this. */
export const MAX_FRAMES = 3000;
/** The most scored options of a `why` the page keeps (the reply carries the top three). */
const WHY_OPTIONS = 3;
/** Longest text of a `why` field the page keeps. */
const WHY_TEXT = 80;

/** The renderer's compiled modules, in dependency order (each imports only earlier ones). */
const MAP_MODULES = ['model', 'view', 'panel', 'filters', 'replay'] as const;
const DIST_MAP = new URL('../../dashboard/map/', import.meta.url);
const SOURCE_MAP_CSS = new URL('../../../dashboard/map/map.css', import.meta.url);

/** A reply's `why` if it has the documented shape ({mode, goal, options: [{name, score}], rule}), else null. */
export function whyOf(value: unknown): Why | null {
  if (value === null || typeof value !== 'object') return null;
  const w = value as Record<string, unknown>;
  const text = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, WHY_TEXT) : null);
  const mode = text(w.mode);
  const goal = text(w.goal);
  const rule = text(w.rule);
  if (mode === null || goal === null || rule === null || !Array.isArray(w.options)) return null;
  const options: Why['options'] = [];
  for (const o of w.options.slice(0, WHY_OPTIONS)) {
    const name = o !== null && typeof o === 'object' ? text((o as Record<string, unknown>).name) : null;
    const score = o !== null && typeof o === 'object' ? (o as Record<string, unknown>).score : null;
    if (name === null || typeof score !== 'number' || !Number.isFinite(score)) return null;
    options.push({ name, score: Math.round(score * 1000) / 1000 });
  }
  return { mode, goal, options, rule };
}

const AIM_CODE = { engage: 1, fire: 2, flee: 3 } as const;

/** Collects frames from Simulation's onFrame and builds the page. */
export class ReplayRecorder {
  private readonly strings: string[] = [];
  private readonly stringIndex = new Map<string, number>();
  private readonly whys: Why[] = [];
  private readonly whyIndex = new Map<string, number>();
  private readonly frames: ReplayData['frames'] = [];
  private readonly chars: ReplayData['chars'] = {};
  private readonly every: number;
  private step = 0;

  constructor(private readonly scenario: Scenario) {
    const steps = Math.round(scenario.duration_s * scenario.tick_hz) + 1;
    this.every = Math.max(1, Math.ceil(steps / MAX_FRAMES));
  }

  private intern(s: string): number {
    let i = this.stringIndex.get(s);
    if (i === undefined) {
      i = this.strings.push(s) - 1;
      this.stringIndex.set(s, i);
    }
    return i;
  }

  private internWhy(why: Why | null): number {
    if (why === null) return -1;
    const key = JSON.stringify(why);
    let i = this.whyIndex.get(key);
    if (i === undefined) {
      i = this.whys.push(why) - 1;
      this.whyIndex.set(key, i);
    }
    return i;
  }

  readonly onFrame = (t: number, chars: FrameCharacter[]): void => {
    if (this.step++ % this.every !== 0) return;
    const rows: ReplayRow[] = [];
    for (const c of chars) {
      if (this.chars[c.id] === undefined) this.chars[c.id] = { name: c.name, kind: c.kind, brain: c.brain, squad: c.squad };
      const why = whyOf(c.why);
      // The brain's own word for what the character does when the reply explains itself; else what its intents show.
      const mode = c.state === 'dead' || c.state === 'logged_off' ? c.state : (why?.mode ?? c.state);
      rows.push([
        c.id,
        c.x,
        c.z,
        this.intern(mode),
        this.intern(c.brain ? c.label : ''),
        c.health,
        c.heading,
        this.intern(c.posture),
        this.internWhy(why),
        c.aim ? AIM_CODE[c.aim.kind] : 0,
        c.aim ? c.aim.target : 0,
        c.dest ? Math.round(c.dest.x * 10) / 10 : null,
        c.dest ? Math.round(c.dest.z * 10) / 10 : null,
        c.dest?.investigate ? 1 : 0,
      ]);
    }
    this.frames.push({ t, c: rows });
  };

  data(): ReplayData {
    const w = this.scenario.world ?? {};
    const routes: [number, number][][] = [];
    for (const c of this.scenario.characters) if (c.route) routes.push(c.route.map((p): [number, number] => [p.x, p.z]));
    const points: { x: number; z: number }[] = [];
    for (const f of this.frames) for (const r of f.c) points.push({ x: r[1], z: r[2] });
    for (const o of w.obstacles ?? []) points.push(o.min, o.max);
    for (const p of w.poi ?? []) points.push(p.pos);
    return {
      name: this.scenario.name,
      description: this.scenario.description ?? '',
      tick_hz: this.scenario.tick_hz,
      world: {
        bounds: boundsOf(points),
        obstacles: (w.obstacles ?? []).map((o) => ({
          min: { x: o.min.x, z: o.min.z },
          max: { x: o.max.x, z: o.max.z },
          ...(o.passable ? { passable: true } : {}),
        })),
        poi: (w.poi ?? []).map((p) => ({ id: p.id, kind: p.kind, x: p.pos.x, z: p.pos.z })),
        routes,
      },
      strings: this.strings,
      whys: this.whys,
      chars: this.chars,
      frames: this.frames,
    };
  }

  html(): string {
    return replayPage(this.data());
  }
}

/** JSON that is safe inside a <script> element. */
function embed(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const RELATIVE_IMPORT = /^import\s[^;]*?from\s*['"]\.\/[\w-]+\.js['"];?[ \t]*$/gm;

/**
 * The renderer's compiled modules as one module script: each imports only earlier ones by a
 * relative path, so those import lines go and the declarations meet in one scope.
 */
export function mapScript(): string {
  const parts = MAP_MODULES.map((name) => {
    const file = new URL(`${name}.js`, DIST_MAP);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new Error(`the replay page's renderer ${fileURLToPath(file)} is missing: run npm run build (it compiles dashboard/)`);
    }
    const body = text.replace(RELATIVE_IMPORT, '').replace(/^\/\/# sourceMappingURL=.*$/m, '');
    if (/^\s*import[\s{(*]/m.test(body))
      throw new Error(`dashboard/map/${name}.ts imports something other than its sibling modules; the replay page cannot inline it`);
    return `// dashboard/map/${name}.ts\n${body}`;
  });
  const script = `${parts.join('\n')}\nwindow.replay = startReplay();\n`;
  if (/<\/script/i.test(script)) throw new Error('the renderer contains "</script", which cannot be inlined');
  return script;
}

function mapCss(): string {
  return readFileSync(SOURCE_MAP_CSS, 'utf8');
}

export function replayPage(data: ReplayData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.name)}: brainstem replay</title>
<style>
  html, body { height: 100%; }
  body { margin: 0; font: 13px system-ui, sans-serif; color: #222; display: grid; grid-template-columns: minmax(0, 1fr) 340px; grid-template-rows: auto minmax(0, 1fr); height: 100vh; }
  header { grid-column: 1 / 3; display: flex; gap: 10px; align-items: center; padding: 6px 10px; border-bottom: 1px solid #ccc; background: #fff; }
  header input[type=range] { flex: 1; min-width: 120px; }
  header button { min-width: 64px; }
  #time { font-variant-numeric: tabular-nums; min-width: 64px; text-align: right; }
  #map-host { min-height: 0; min-width: 0; }
  aside { border-left: 1px solid #ccc; padding: 8px 10px; overflow: auto; background: #fff; }
  aside h2 { font-size: 15px; margin: 4px 0; }
  aside h4 { margin: 10px 0 4px; }
  .keys { color: #666; font-size: 12px; }
  kbd { border: 1px solid #ccc; border-radius: 3px; padding: 0 3px; font-size: 11px; }
${mapCss()}
</style>
</head>
<body>
<header>
  <button id="play" type="button" aria-pressed="false">Play</button>
  <input id="timeline" type="range" min="0" max="0" value="0" step="1" aria-label="Time">
  <span id="time">0.0 s</span>
  <label>Speed <select id="speed">${[0.5, 1, 2, 4, 8, 16, 64].map((v) => `<option value="${v}"${v === 4 ? ' selected' : ''}>${v}×</option>`).join('')}</select></label>
  <strong>${escapeHtml(data.name)}</strong>
</header>
<main id="map-host"></main>
<aside>
  <h2>${escapeHtml(data.name)}</h2>
  <p>${escapeHtml(data.description)}</p>
  <div id="filters"></div>
  <section id="panel" aria-live="polite"></section>
  <p class="keys">Drag to pan; wheel, <kbd>+</kbd> <kbd>−</kbd> or the buttons to zoom, <kbd>0</kbd> to fit; arrows pan; <kbd>Space</kbd> plays or pauses, <kbd>,</kbd> <kbd>.</kbd> step; <kbd>Esc</kbd> clears the selection.</p>
</aside>
<script id="replay-data" type="application/json">${embed(data)}</script>
<script type="module">
${mapScript()}
</script>
</body>
</html>
`;
}
