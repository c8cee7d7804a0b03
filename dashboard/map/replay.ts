import { modeSegments, type MapCharacter, type ReplayData, type ReplayRow } from './model.js';
import { MapView } from './view.js';
import { renderPanel } from './panel.js';
import { MapFilters } from './filters.js';

/**
 * The controller of `brainstem sim --html`'s page: the run's frames on the map, play / pause,
 * a timeline to scrub, speed, filters, and the selected character's panel, path and mode
 * strip. Its data is the JSON in `<script id="replay-data">` (bench/sim/replay-page.ts
 * writes both).
 */

export const REPLAY_SPEEDS = [0.5, 1, 2, 4, 8, 16, 64] as const;
const AIM_KINDS = [null, 'engage', 'fire', 'flee'] as const;

export interface ReplayApi {
  data: ReplayData;
  view: MapView;
  show(frame: number): void;
  frameAt(t: number): number;
  select(id: number | null): void;
  toScreen(x: number, z: number): { x: number; y: number };
  readonly frame: number;
  readonly playing: boolean;
}

function byId<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the replay page has no #${id}`);
  return e as T;
}

export function startReplay(): ReplayApi {
  const data = JSON.parse(byId('replay-data').textContent ?? '{}') as ReplayData;
  const s = data.strings;
  const frames = data.frames;
  const slider = byId<HTMLInputElement>('timeline');
  const timeLabel = byId('time');
  const play = byId<HTMLButtonElement>('play');
  const speed = byId<HTMLSelectElement>('speed');
  const panel = byId('panel');
  const start = frames[0]?.t ?? 0;
  const end = frames[frames.length - 1]?.t ?? 0;
  slider.max = String(Math.max(0, frames.length - 1));

  const toChar = (r: ReplayRow): MapCharacter => {
    const who = data.chars[r[0]] ?? { name: `#${r[0]}`, kind: '', brain: false, squad: '' };
    const aim = AIM_KINDS[r[9]] ?? null;
    return {
      id: r[0],
      name: who.name,
      x: r[1],
      z: r[2],
      mode: s[r[3]] ?? '',
      squad: who.squad,
      intents: s[r[4]] ?? '',
      health: r[5],
      heading: r[6],
      posture: s[r[7]] ?? '',
      goal: r[8] >= 0 ? (data.whys[r[8]]?.goal ?? '') : '',
      why: r[8] >= 0 ? (data.whys[r[8]] ?? null) : null,
      aim: aim ? { kind: aim, target: r[10] } : null,
      dest: r[11] === null || r[12] === null ? null : { x: r[11], z: r[12], investigate: r[13] === 1 },
    };
  };

  let frame = 0;
  let selected: number | null = null;
  /** The selected character's whole run: where it was and its mode, frame by frame. */
  let history: { frame: number; t: number; x: number; z: number; mode: string }[] = [];

  const view = new MapView(byId('map-host'), {
    label: `Replay of ${data.name}`,
    onSelect: (id) => select(id),
  });
  const filters = new MapFilters(byId('filters'), () => view.setFilter(filters.accepts));
  const all: { mode: string; squad: string }[] = [];
  for (const f of frames) for (const r of f.c) all.push({ mode: s[r[3]] ?? '', squad: data.chars[r[0]]?.squad ?? '' });
  filters.learn(all);
  view.setFilter(filters.accepts);
  view.setWorld(data.world);

  function historyOf(id: number): typeof history {
    const out: typeof history = [];
    frames.forEach((f, i) => {
      for (const r of f.c) if (r[0] === id) out.push({ frame: i, t: f.t, x: r[1], z: r[2], mode: s[r[3]] ?? '' });
    });
    return out;
  }

  function drawPanel(chars: MapCharacter[]): void {
    const c = selected === null ? null : (chars.find((x) => x.id === selected) ?? null);
    const who = selected === null ? undefined : data.chars[selected];
    renderPanel(panel, {
      char: c,
      segments: modeSegments(history, end),
      start,
      end,
      now: frames[frame]?.t ?? 0,
      onSeek: (t) => show(frameAt(t)),
      noWhy: 'no explanation recorded',
      ...(who ? { extra: [['kind', `${who.kind}${who.brain ? '' : ' (scripted)'}`]] as [string, string][] } : {}),
    });
    if (selected !== null && !c) {
      const p = document.createElement('p');
      p.className = 'map-panel-hint';
      p.textContent = `${who?.name ?? `#${selected}`} is not on the map at this moment.`;
      panel.prepend(p);
    }
  }

  function show(i: number): void {
    frame = Math.max(0, Math.min(frames.length - 1, Math.round(i)));
    slider.value = String(frame);
    const f = frames[frame];
    if (!f) return;
    timeLabel.textContent = `${f.t.toFixed(1)} s`;
    const chars = f.c.map(toChar);
    view.setCharacters(chars);
    if (selected !== null) {
      let now = 0;
      for (let k = 0; k < history.length && history[k]!.frame <= frame; k++) now = k;
      view.setPath(history, now);
    }
    drawPanel(chars);
  }

  function select(id: number | null): void {
    selected = id;
    history = id === null ? [] : historyOf(id);
    view.select(id);
    if (id === null) view.setPath([]);
    show(frame);
  }

  function frameAt(t: number): number {
    let lo = 0;
    let hi = frames.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (frames[mid]!.t <= t) lo = mid;
      else hi = mid - 1;
    }
    // The nearer of the frame at or before t and the one after it.
    const next = frames[lo + 1];
    return next && Math.abs(next.t - t) < Math.abs(frames[lo]!.t - t) ? lo + 1 : lo;
  }

  let playing = false;
  let clock = 0;
  let last = 0;
  const tick = (now: number): void => {
    if (!playing) return;
    clock += ((now - last) / 1000) * Number(speed.value);
    last = now;
    let i = frame;
    while (i < frames.length - 1 && frames[i + 1]!.t <= clock) i++;
    if (i !== frame) show(i);
    if (frame >= frames.length - 1) return setPlaying(false);
    requestAnimationFrame(tick);
  };
  function setPlaying(on: boolean): void {
    if (on && frame >= frames.length - 1) show(0);
    playing = on;
    play.textContent = on ? 'Pause' : 'Play';
    play.setAttribute('aria-pressed', String(on));
    if (on) {
      clock = frames[frame]?.t ?? 0;
      last = performance.now();
      requestAnimationFrame(tick);
    }
  }
  play.addEventListener('click', () => setPlaying(!playing));
  slider.addEventListener('input', () => {
    show(Number(slider.value));
    clock = frames[frame]?.t ?? 0;
  });
  speed.addEventListener('change', () => {
    clock = frames[frame]?.t ?? 0;
  });
  document.addEventListener('keydown', (e) => {
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === ' ' && !(t instanceof HTMLButtonElement)) {
      e.preventDefault();
      setPlaying(!playing);
    } else if (e.key === '.' || e.key === '>') show(frame + 1);
    else if (e.key === ',' || e.key === '<') show(frame - 1);
    else if (e.key === 'Home') show(0);
    else if (e.key === 'End') show(frames.length - 1);
  });

  show(0);
  return {
    data,
    view,
    show,
    frameAt,
    select,
    toScreen: (x, z) => view.toScreen(x, z),
    get frame() {
      return frame;
    },
    get playing() {
      return playing;
    },
  };
}
