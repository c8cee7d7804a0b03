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

/** A frame's row as the map's character, its names looked up in the run's tables. */
function rowToCharacter(data: ReplayData, r: ReplayRow): MapCharacter {
  const s = data.strings;
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
}

type History = { frame: number; t: number; x: number; z: number; mode: string }[];

/** One character's whole run: where it was and its mode, frame by frame. */
function historyOf(data: ReplayData, id: number): History {
  const out: History = [];
  data.frames.forEach((f, i) => {
    for (const r of f.c) if (r[0] === id) out.push({ frame: i, t: f.t, x: r[1], z: r[2], mode: data.strings[r[3]] ?? '' });
  });
  return out;
}

/** The index of the frame nearest to time `t` (frames are in time order). */
function frameAtTime(frames: ReplayData['frames'], t: number): number {
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

/** The filters learn every mode and squad of the run, then drive the view's filter. */
function mountFilters(data: ReplayData, view: MapView): void {
  const filters = new MapFilters(byId('filters'), () => view.setFilter(filters.accepts));
  const all: { mode: string; squad: string }[] = [];
  for (const f of data.frames) for (const r of f.c) all.push({ mode: data.strings[r[3]] ?? '', squad: data.chars[r[0]]?.squad ?? '' });
  filters.learn(all);
  view.setFilter(filters.accepts);
}

/** The panel of the selected character, with a hint when it is not on the map at this frame. */
function drawPanel(
  panel: HTMLElement,
  data: ReplayData,
  at: { selected: number | null; history: History; frame: number; chars: MapCharacter[] },
  onSeek: (t: number) => void,
): void {
  const { selected, chars } = at;
  const frames = data.frames;
  const c = selected === null ? null : (chars.find((x) => x.id === selected) ?? null);
  const who = selected === null ? undefined : data.chars[selected];
  const end = frames[frames.length - 1]?.t ?? 0;
  renderPanel(panel, {
    char: c,
    segments: modeSegments(at.history, end),
    start: frames[0]?.t ?? 0,
    end,
    now: frames[at.frame]?.t ?? 0,
    onSeek,
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

/** The page's keys (space plays or pauses; `.` `,` Home End step), ignored while typing in a field. */
function bindKeys(keys: { toggle(): void; step(by: number): void; first(): void; last(): void }): void {
  document.addEventListener('keydown', (e) => {
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === ' ' && !(t instanceof HTMLButtonElement)) {
      e.preventDefault();
      keys.toggle();
    } else if (e.key === '.' || e.key === '>') keys.step(1);
    else if (e.key === ',' || e.key === '<') keys.step(-1);
    else if (e.key === 'Home') keys.first();
    else if (e.key === 'End') keys.last();
  });
}

export function startReplay(): ReplayApi {
  const data = JSON.parse(byId('replay-data').textContent ?? '{}') as ReplayData;
  const frames = data.frames;
  const slider = byId<HTMLInputElement>('timeline');
  const timeLabel = byId('time');
  const panel = byId('panel');
  slider.max = String(Math.max(0, frames.length - 1));

  let frame = 0;
  let selected: number | null = null;
  let history: History = [];

  const view = new MapView(byId('map-host'), {
    label: `Replay of ${data.name}`,
    onSelect: (id) => select(id),
  });
  mountFilters(data, view);
  view.setWorld(data.world);

  function show(i: number): void {
    frame = Math.max(0, Math.min(frames.length - 1, Math.round(i)));
    slider.value = String(frame);
    const f = frames[frame];
    if (!f) return;
    timeLabel.textContent = `${f.t.toFixed(1)} s`;
    const chars = f.c.map((r) => rowToCharacter(data, r));
    view.setCharacters(chars);
    if (selected !== null) {
      let now = 0;
      for (let k = 0; k < history.length && history[k]!.frame <= frame; k++) now = k;
      view.setPath(history, now);
    }
    drawPanel(panel, data, { selected, history, frame, chars }, (t) => show(frameAt(t)));
  }

  function select(id: number | null): void {
    selected = id;
    history = id === null ? [] : historyOf(data, id);
    view.select(id);
    if (id === null) view.setPath([]);
    show(frame);
  }

  const frameAt = (t: number): number => frameAtTime(frames, t);
  const player = startPlayer(frames, { frame: () => frame, show }, slider);
  bindKeys({
    toggle: () => player.setPlaying(!player.playing),
    step: (by) => show(frame + by),
    first: () => show(0),
    last: () => show(frames.length - 1),
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
      return player.playing;
    },
  };
}

/**
 * Play / pause and the speed: a clock in run time that advances by the speed each animation
 * frame and shows the last frame it passed; the timeline and the speed reset it to the frame shown.
 */
function startPlayer(
  frames: ReplayData['frames'],
  at: { frame(): number; show(i: number): void },
  slider: HTMLInputElement,
): { setPlaying(on: boolean): void; readonly playing: boolean } {
  const play = byId<HTMLButtonElement>('play');
  const speed = byId<HTMLSelectElement>('speed');
  let playing = false;
  let clock = 0;
  let last = 0;
  const tick = (now: number): void => {
    if (!playing) return;
    clock += ((now - last) / 1000) * Number(speed.value);
    last = now;
    let i = at.frame();
    while (i < frames.length - 1 && frames[i + 1]!.t <= clock) i++;
    if (i !== at.frame()) at.show(i);
    if (at.frame() >= frames.length - 1) return setPlaying(false);
    requestAnimationFrame(tick);
  };
  function setPlaying(on: boolean): void {
    if (on && at.frame() >= frames.length - 1) at.show(0);
    playing = on;
    play.textContent = on ? 'Pause' : 'Play';
    play.setAttribute('aria-pressed', String(on));
    if (on) {
      clock = frames[at.frame()]?.t ?? 0;
      last = performance.now();
      requestAnimationFrame(tick);
    }
  }
  play.addEventListener('click', () => setPlaying(!playing));
  slider.addEventListener('input', () => {
    at.show(Number(slider.value));
    clock = frames[at.frame()]?.t ?? 0;
  });
  speed.addEventListener('change', () => {
    clock = frames[at.frame()]?.t ?? 0;
  });
  return {
    setPlaying,
    get playing() {
      return playing;
    },
  };
}
