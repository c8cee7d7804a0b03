import { modeColour, type MapCharacter, type ModeSegment } from './model.js';

/**
 * The selected character's panel, the same on the replay page and the live map: who it is and
 * what it does, its `why` (mode, goal, the top scored options, the rule that decided), and its
 * mode over time as a strip of coloured segments along the timeline that seeks where clicked.
 * Built with textContent and attributes only (names come from game servers).
 */

const STRIP_W = 1000;
const STRIP_H = 20;

export interface PanelInfo {
  char: MapCharacter | null;
  /** Its modes along the timeline [start, end] (seconds). */
  segments: ModeSegment[];
  start: number;
  end: number;
  /** The moment shown now, marked on the strip. */
  now: number;
  /** Asked to show another moment (a click on the strip); absent where the map cannot seek (live). */
  onSeek?: (t: number) => void;
  /** What to say when the character's reply carried no `why`. */
  noWhy?: string;
  /** More rows after the standard ones ([label, value]). */
  extra?: [string, string][];
  /** Formats a timeline moment for the strip's tooltips (default "12.5 s"). */
  formatTime?: (t: number) => string;
}

function el<K extends keyof HTMLElementTagNameMap>(name: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(name);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function svg<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS('http://www.w3.org/2000/svg', name);
  for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}

const seconds = (t: number): string => `${t.toFixed(1)} s`;

export function renderPanel(host: HTMLElement, info: PanelInfo): void {
  host.replaceChildren();
  const c = info.char;
  if (!c) {
    host.appendChild(el('p', 'Click a character on the map to see what it does and why.', 'map-panel-hint'));
    return;
  }
  const title = el('h3', c.name, 'map-panel-name');
  const badge = el('span', c.mode, 'map-mode-badge');
  badge.setAttribute('data-mode', c.mode);
  const swatch = el('span', undefined, 'map-swatch');
  swatch.style.backgroundColor = modeColour(c.mode);
  badge.prepend(swatch);
  title.append(' ', badge);
  host.appendChild(title);

  const dl = el('dl', undefined, 'map-panel-fields');
  const row = (k: string, v: string, field: string): void => {
    dl.appendChild(el('dt', k));
    const dd = el('dd', v);
    dd.setAttribute('data-field', field);
    dl.appendChild(dd);
  };
  row('id', String(c.id), 'id');
  row('goal', c.goal || '—', 'goal');
  row('squad', c.squad || '—', 'squad');
  if (c.posture) row('posture', c.posture, 'posture');
  if (c.health !== null) row('health', String(Math.round(c.health)), 'health');
  row('position', `${c.x.toFixed(1)}, ${c.z.toFixed(1)}`, 'position');
  if (c.intents) row('intents', c.intents, 'intents');
  for (const [k, v] of info.extra ?? []) row(k, v, k);
  host.appendChild(dl);

  host.appendChild(el('h4', 'Why'));
  const why = el('div', undefined, 'map-why');
  why.setAttribute('data-field', 'why');
  if (c.why) {
    const w = c.why;
    const wl = el('dl', undefined, 'map-panel-fields');
    for (const [k, v] of [
      ['mode', w.mode],
      ['goal', w.goal],
      ['rule', w.rule],
    ] as const) {
      wl.appendChild(el('dt', k));
      const dd = el('dd', v);
      dd.setAttribute('data-why', k);
      wl.appendChild(dd);
    }
    why.appendChild(wl);
    if (w.options.length > 0) {
      const ol = el('ol', undefined, 'map-why-options');
      const top = Math.max(1e-9, ...w.options.map((o) => Math.abs(o.score)));
      for (const o of w.options) {
        const li = el('li');
        li.appendChild(el('span', o.name, 'map-why-name'));
        const bar = svg('svg', { class: 'map-why-bar', viewBox: '0 0 100 8', preserveAspectRatio: 'none', 'aria-hidden': 'true' });
        bar.appendChild(svg('rect', { x: 0, y: 0, height: 8, width: Math.max(1, (100 * Math.abs(o.score)) / top) }));
        li.appendChild(bar);
        li.appendChild(el('span', o.score.toFixed(2), 'map-why-score'));
        ol.appendChild(li);
      }
      why.appendChild(ol);
    }
  } else {
    why.appendChild(el('p', info.noWhy ?? 'no explanation recorded', 'map-panel-hint'));
  }
  host.appendChild(why);

  host.appendChild(el('h4', 'Mode over time'));
  host.appendChild(modeStrip(info));
}

/** Coloured segments along [start, end]; a click seeks to the moment under the pointer. */
function modeStrip(info: PanelInfo): Element {
  const span = Math.max(1e-9, info.end - info.start);
  const fmt = info.formatTime ?? seconds;
  const strip = svg('svg', {
    class: `map-strip${info.onSeek ? ' seekable' : ''}`,
    viewBox: `0 0 ${STRIP_W} ${STRIP_H}`,
    preserveAspectRatio: 'none',
    role: 'img',
    'aria-label': `Mode over time: ${info.segments.map((s) => `${s.mode} from ${fmt(s.from)}`).join(', ') || 'nothing recorded'}`,
  });
  const x = (t: number): number => ((t - info.start) / span) * STRIP_W;
  for (const s of info.segments) {
    const r = svg('rect', {
      x: x(s.from),
      y: 0,
      width: Math.max(0.5, x(s.to) - x(s.from)),
      height: STRIP_H,
      fill: modeColour(s.mode),
      'data-mode': s.mode,
      'data-from': s.from,
    });
    const title = svg('title', {});
    title.textContent = `${s.mode}: ${fmt(s.from)} – ${fmt(s.to)}`;
    r.appendChild(title);
    strip.appendChild(r);
  }
  strip.appendChild(svg('rect', { class: 'map-strip-now', x: Math.max(0, Math.min(STRIP_W - 2, x(info.now) - 1)), y: 0, width: 2, height: STRIP_H }));
  const seek = info.onSeek;
  if (seek) {
    strip.addEventListener('click', (e) => {
      const r = strip.getBoundingClientRect();
      seek(info.start + (Math.max(0, Math.min(r.width, e.clientX - r.left)) / Math.max(1, r.width)) * span);
    });
  }
  const wrap = el('div', undefined, 'map-strip-wrap');
  wrap.appendChild(strip);
  const axis = el('div', undefined, 'map-strip-axis');
  axis.append(el('span', fmt(info.start)), el('span', fmt(info.end)));
  wrap.appendChild(axis);
  return wrap;
}
