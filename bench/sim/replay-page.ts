import type { Obstacle, Scenario } from './scenario.js';
import type { FrameCharacter } from './engine.js';

/**
 * `brainstem sim SCENARIO --html FILE`: one self-contained page (no network, no files beside
 * it) replaying a run on a map, so a designer can watch what the believability figures count.
 * Frames are kept at most MAX_FRAMES (a long run is sampled evenly); strings are interned.
 */

/** The most frames a page holds: a 3-hour run at 2 Hz is sampled down to this. */
export const MAX_FRAMES = 3000;

/** Character colours by state (stateOf in engine.ts). */
export const STATE_COLOURS: Readonly<Record<string, string>> = {
  firing: '#d62828',
  engaging: '#f77f00',
  fleeing: '#9b5de5',
  investigating: '#f4c430',
  moving: '#2a9d8f',
  idle: '#6c757d',
  afk: '#adb5bd',
  break: '#adb5bd',
  logged_off: '#dee2e6',
  dead: '#000000',
  scripted: '#1d3557',
};

export interface ReplayData {
  name: string;
  description: string;
  tick_hz: number;
  obstacles: Obstacle[];
  poi: { id: string; kind: string; x: number; z: number }[];
  routes: Record<string, [number, number][]>;
  states: string[];
  labels: string[];
  /** Per frame: its time and one row per character: id, x, z, state index, label index, health, heading, posture. */
  frames: { t: number; c: [number, number, number, number, number, number, number, string][] }[];
  names: Record<string, { name: string; kind: string; brain: boolean }>;
  bounds: { minX: number; minZ: number; maxX: number; maxZ: number };
}

/** Collects frames from Simulation's onFrame and builds the page. */
export class ReplayRecorder {
  private readonly states: string[] = [];
  private readonly labels: string[] = [];
  private readonly index = new Map<string, number>();
  private readonly frames: ReplayData['frames'] = [];
  private readonly names: ReplayData['names'] = {};
  private readonly every: number;
  private step = 0;
  private minX = Infinity;
  private minZ = Infinity;
  private maxX = -Infinity;
  private maxZ = -Infinity;

  constructor(private readonly scenario: Scenario) {
    const steps = Math.round(scenario.duration_s * scenario.tick_hz) + 1;
    this.every = Math.max(1, Math.ceil(steps / MAX_FRAMES));
  }

  private intern(list: string[], s: string, prefix: string): number {
    const key = `${prefix}${s}`;
    let i = this.index.get(key);
    if (i === undefined) {
      i = list.push(s) - 1;
      this.index.set(key, i);
    }
    return i;
  }

  readonly onFrame = (t: number, chars: FrameCharacter[]): void => {
    if (this.step++ % this.every !== 0) return;
    const rows: ReplayData['frames'][number]['c'] = [];
    for (const c of chars) {
      if (this.names[c.id] === undefined) this.names[c.id] = { name: c.name, kind: c.kind, brain: c.brain };
      this.minX = Math.min(this.minX, c.x);
      this.maxX = Math.max(this.maxX, c.x);
      this.minZ = Math.min(this.minZ, c.z);
      this.maxZ = Math.max(this.maxZ, c.z);
      rows.push([c.id, c.x, c.z, this.intern(this.states, c.state, 's:'), this.intern(this.labels, c.label, 'l:'), c.health, c.heading, c.posture]);
    }
    this.frames.push({ t, c: rows });
  };

  data(): ReplayData {
    const w = this.scenario.world ?? {};
    const routes: ReplayData['routes'] = {};
    for (const c of this.scenario.characters) if (c.route) routes[c.id] = c.route.map((p) => [p.x, p.z]);
    let { minX, minZ, maxX, maxZ } = this;
    for (const o of w.obstacles ?? []) {
      minX = Math.min(minX, o.min.x);
      maxX = Math.max(maxX, o.max.x);
      minZ = Math.min(minZ, o.min.z);
      maxZ = Math.max(maxZ, o.max.z);
    }
    if (!Number.isFinite(minX)) [minX, minZ, maxX, maxZ] = [-50, -50, 50, 50];
    const pad = Math.max(10, 0.05 * Math.max(maxX - minX, maxZ - minZ));
    return {
      name: this.scenario.name,
      description: this.scenario.description ?? '',
      tick_hz: this.scenario.tick_hz,
      obstacles: w.obstacles ?? [],
      poi: (w.poi ?? []).map((p) => ({ id: p.id, kind: p.kind, x: p.pos.x, z: p.pos.z })),
      routes,
      states: this.states,
      labels: this.labels,
      frames: this.frames,
      names: this.names,
      bounds: { minX: minX - pad, minZ: minZ - pad, maxX: maxX + pad, maxZ: maxZ + pad },
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

export function replayPage(data: ReplayData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.name)}: brainstem replay</title>
<style>
  body { margin: 0; font: 13px system-ui, sans-serif; display: grid; grid-template-columns: 1fr 300px; grid-template-rows: auto 1fr; height: 100vh; }
  header { grid-column: 1 / 3; display: flex; gap: 10px; align-items: center; padding: 6px 10px; border-bottom: 1px solid #ccc; }
  header input[type=range] { flex: 1; }
  #map { width: 100%; height: 100%; background: #f6f4ef; }
  aside { border-left: 1px solid #ccc; padding: 8px; overflow: auto; }
  .label { font-size: 9px; fill: #222; pointer-events: none; }
  .poi { font-size: 10px; fill: #555; }
  .char { cursor: pointer; }
  .legend span { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 50%; }
  dt { font-weight: 600; } dd { margin: 0 0 6px 0; }
</style>
</head>
<body>
<header>
  <button id="play" type="button">Play</button>
  <input id="timeline" type="range" min="0" max="${Math.max(0, data.frames.length - 1)}" value="0" step="1" aria-label="time">
  <span id="time">0.0 s</span>
  <label>speed <select id="speed"><option>1</option><option selected>4</option><option>16</option><option>64</option></select>×</label>
  <strong>${escapeHtml(data.name)}</strong>
</header>
<svg id="map" xmlns="http://www.w3.org/2000/svg"></svg>
<aside>
  <p>${escapeHtml(data.description)}</p>
  <div class="legend" id="legend"></div>
  <h3>Selected</h3>
  <dl id="detail"><dd>Click a character.</dd></dl>
</aside>
<script id="replay-data" type="application/json">${embed(data)}</script>
<script>
(() => {
  const data = JSON.parse(document.getElementById('replay-data').textContent);
  const colours = ${embed(STATE_COLOURS)};
  const svg = document.getElementById('map');
  const ns = 'http://www.w3.org/2000/svg';
  const b = data.bounds;
  svg.setAttribute('viewBox', '0 0 1000 1000');
  svg.setAttribute('preserveAspectRatio', 'xMidYMid meet');
  const scale = 1000 / Math.max(b.maxX - b.minX, b.maxZ - b.minZ);
  // Map x grows right, z (north) grows up.
  const toScreen = (x, z) => ({ x: (x - b.minX) * scale, y: 1000 - (z - b.minZ) * scale });
  const el = (name, attrs, parent) => { const e = document.createElementNS(ns, name); for (const k in attrs) e.setAttribute(k, attrs[k]); (parent || svg).appendChild(e); return e; };
  for (const o of data.obstacles) {
    const a = toScreen(o.min.x, o.max.z), c = toScreen(o.max.x, o.min.z);
    el('rect', { x: a.x, y: a.y, width: c.x - a.x, height: c.y - a.y, fill: o.passable ? '#b7d7a8' : '#888' });
  }
  for (const id in data.routes) {
    const pts = data.routes[id].map(([x, z]) => { const p = toScreen(x, z); return p.x + ',' + p.y; }).join(' ');
    el('polyline', { points: pts, fill: 'none', stroke: '#c9c2b0', 'stroke-dasharray': '4 3' });
  }
  for (const p of data.poi) {
    const s = toScreen(p.x, p.z);
    el('rect', { x: s.x - 4, y: s.y - 4, width: 8, height: 8, fill: p.kind === 'cover' ? '#6b705c' : '#457b9d' });
    el('text', { x: s.x + 6, y: s.y + 3, class: 'poi' }).textContent = p.id + ' (' + p.kind + ')';
  }
  const layer = el('g', {});
  const nodes = new Map();
  let selected = null;
  const node = (id) => {
    let n = nodes.get(id);
    if (!n) {
      const g = el('g', { class: 'char', 'data-id': id }, layer);
      const circle = el('circle', { r: 5, stroke: '#fff', 'stroke-width': 1 }, g);
      const text = el('text', { class: 'label' }, g);
      g.addEventListener('click', () => { selected = id; render(); });
      n = { g, circle, text };
      nodes.set(id, n);
    }
    return n;
  };
  const legend = document.getElementById('legend');
  for (const s in colours) legend.insertAdjacentHTML('beforeend', '<div><span style="background:' + colours[s] + '"></span>' + s + '</div>');
  const slider = document.getElementById('timeline');
  const timeLabel = document.getElementById('time');
  const detail = document.getElementById('detail');
  let frame = 0;
  function render() {
    const f = data.frames[frame];
    if (!f) return;
    timeLabel.textContent = f.t.toFixed(1) + ' s';
    const seen = new Set();
    for (const [id, x, z, si, li, health, heading, posture] of f.c) {
      const n = node(id);
      const s = toScreen(x, z);
      const state = data.states[si];
      n.circle.setAttribute('cx', s.x);
      n.circle.setAttribute('cy', s.y);
      n.circle.setAttribute('fill', colours[state] || '#333');
      n.circle.setAttribute('r', id === selected ? 8 : 5);
      n.text.setAttribute('x', s.x + 7);
      n.text.setAttribute('y', s.y - 6);
      n.text.textContent = data.labels[li];
      n.g.setAttribute('data-state', state);
      n.g.style.display = '';
      seen.add(id);
      if (id === selected) {
        const who = data.names[id] || {};
        detail.innerHTML = '';
        for (const [k, v] of [['id', id], ['name', who.name], ['kind', who.kind], ['state', state], ['posture', posture], ['health', health], ['heading', heading + '°'], ['position', x.toFixed(1) + ', ' + z.toFixed(1)], ['intents', data.labels[li] || '—']]) {
          const dt = document.createElement('dt'); dt.textContent = k; detail.appendChild(dt);
          const dd = document.createElement('dd'); dd.textContent = String(v); dd.dataset.field = k; detail.appendChild(dd);
        }
      }
    }
    for (const [id, n] of nodes) if (!seen.has(id)) n.g.style.display = 'none';
  }
  function show(i) { frame = Math.max(0, Math.min(data.frames.length - 1, i)); slider.value = String(frame); render(); }
  slider.addEventListener('input', () => show(Number(slider.value)));
  let timer = null;
  const play = document.getElementById('play');
  play.addEventListener('click', () => {
    if (timer) { clearInterval(timer); timer = null; play.textContent = 'Play'; return; }
    play.textContent = 'Pause';
    const step = data.frames.length > 1 ? data.frames[1].t - data.frames[0].t : 1;
    timer = setInterval(() => {
      if (frame >= data.frames.length - 1) { clearInterval(timer); timer = null; play.textContent = 'Play'; return; }
      show(frame + 1);
    }, (step * 1000) / Number(document.getElementById('speed').value));
  });
  /** For tests and the console: the frame nearest a time, and map → screen coordinates (viewBox units). */
  window.replay = { data, show, toScreen, frameAt: (t) => { let best = 0; data.frames.forEach((f, i) => { if (Math.abs(f.t - t) < Math.abs(data.frames[best].t - t)) best = i; }); return best; } };
  show(0);
})();
</script>
</body>
</html>
`;
}
