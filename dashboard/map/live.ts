import { boundsOf, modeSegments, type MapCharacter } from './model.js';
import { MapView } from './view.js';
import { renderPanel } from './panel.js';
import { MapFilters } from './filters.js';

/**
 * The dashboard's live map of a server's characters: the samples the sidecar sends with its
 * telemetry (GET /v1/servers/{id}/map), drawn by the replay page's renderer with the same
 * panel. Each new sample moves the characters; the selected one's path and mode strip are made
 * from the samples seen since the page opened.
 */

/** One character of a sample, as GET /v1/servers/{id}/map answers. */
export interface LiveEntry {
  agent: number;
  name: string;
  alignment: string;
  goal: string;
  state: string;
  squad?: string;
  x: number;
  z: number;
  health?: number;
}

export interface LiveSample {
  ts: string | null;
  receivedAt: string | null;
  stale: boolean;
  minIntervalS: number;
  characters: LiveEntry[];
}

/** Samples kept per character for its path and mode strip: an hour at one sample every 5 s. */
export const LIVE_HISTORY = 720;
/** Characters whose history is kept, at most (the sample holds 500). */
const LIVE_TRACKED = 2000;

const clock = (t: number): string => new Date(t * 1000).toISOString().slice(11, 19);

export class LiveMap {
  readonly view: MapView;
  private readonly filters: MapFilters;
  private readonly history = new Map<number, { t: number; x: number; z: number; mode: string }[]>();
  private chars: MapCharacter[] = [];
  private alignment = new Map<number, string>();
  private lastTs: string | null = null;
  private first = Infinity;
  private last = 0;
  private fitted = false;
  private selected: number | null = null;

  constructor(
    mapHost: HTMLElement,
    filtersHost: HTMLElement,
    private readonly panelHost: HTMLElement,
    label: string,
  ) {
    this.view = new MapView(mapHost, { label, onSelect: (id) => this.select(id) });
    this.filters = new MapFilters(filtersHost, () => this.view.setFilter(this.filters.accepts));
    this.view.setFilter(this.filters.accepts);
    this.drawPanel();
  }

  /** Takes a sample; a repeat of the last one (no new report yet) changes nothing. */
  update(sample: LiveSample): void {
    if (sample.ts === null || sample.ts === this.lastTs) return;
    this.lastTs = sample.ts;
    const t = Date.parse(sample.ts) / 1000;
    this.first = Math.min(this.first, t);
    this.last = Math.max(this.last, t);
    this.chars = sample.characters.map((e) => ({
      id: e.agent,
      name: e.name,
      x: e.x,
      z: e.z,
      mode: e.state,
      squad: e.squad ?? '',
      intents: '',
      heading: null,
      posture: '',
      health: e.health ?? null,
      goal: e.goal,
      aim: null,
      dest: null,
      why: null,
    }));
    this.alignment = new Map(sample.characters.map((e) => [e.agent, e.alignment]));
    for (const c of this.chars) {
      let h = this.history.get(c.id);
      if (!h) {
        if (this.history.size >= LIVE_TRACKED) continue;
        this.history.set(c.id, (h = []));
      }
      h.push({ t, x: c.x, z: c.z, mode: c.mode });
      if (h.length > LIVE_HISTORY) h.splice(0, h.length - LIVE_HISTORY);
    }
    this.filters.learn(this.chars);
    const bounds = boundsOf(this.chars);
    if (!this.fitted && this.chars.length > 0) {
      this.fitted = true;
      this.view.setWorld({ bounds, obstacles: [], poi: [], routes: [] });
    } else if (this.chars.length > 0) {
      // What "fit" shows grows to take in where characters went; the view follows it only
      // while the operator has not panned or zoomed, so it never moves under them.
      const b = this.view.bounds;
      this.view.setBounds({
        minX: Math.min(b.minX, bounds.minX),
        minZ: Math.min(b.minZ, bounds.minZ),
        maxX: Math.max(b.maxX, bounds.maxX),
        maxZ: Math.max(b.maxZ, bounds.maxZ),
      });
      if (!this.view.moved) this.view.fitView(false);
    }
    this.view.setCharacters(this.chars);
    if (this.selected !== null) this.view.setPath(this.history.get(this.selected) ?? []);
    this.drawPanel();
  }

  dispose(): void {
    this.view.dispose();
  }

  select(id: number | null): void {
    this.selected = id;
    this.view.select(id);
    this.view.setPath(id === null ? [] : (this.history.get(id) ?? []));
    this.drawPanel();
  }

  private drawPanel(): void {
    const c = this.selected === null ? null : (this.chars.find((x) => x.id === this.selected) ?? null);
    const h = this.selected === null ? [] : (this.history.get(this.selected) ?? []);
    const start = Number.isFinite(this.first) ? this.first : 0;
    renderPanel(this.panelHost, {
      char: c,
      segments: modeSegments(h, this.last),
      start,
      end: Math.max(start, this.last),
      now: this.last,
      noWhy: 'no explanation recorded (live samples carry none; a simulator replay shows why)',
      extra: c ? [['alignment', this.alignment.get(c.id) ?? '—']] : [],
      formatTime: clock,
    });
  }
}
