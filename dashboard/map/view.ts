import { modeColour, type Bounds, type MapCharacter, type MapWorld } from './model.js';

/**
 * The map renderer of the replay page and the dashboard's live map: an SVG in screen pixels
 * (markers and labels keep their size at every zoom), drag to pan, wheel / buttons / keys to
 * zoom. Labels never pile up: the selected and hovered characters' labels are always drawn,
 * the others only from OTHER_LABELS_MIN_SCALE on and only where they overlap no label already
 * placed. Everything it shows of a character goes in as text or attributes, never as markup,
 * so names from a game server cannot inject anything.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';
export const LABEL_FONT_PX = 11;
const LABEL_FONT = `${LABEL_FONT_PX}px system-ui, sans-serif`;
const LABEL_HEIGHT = 14;
/** Others' labels appear from this many screen pixels per metre on (zoomed in), where they do not overlap. */
export const OTHER_LABELS_MIN_SCALE = 4;
/** Longest label of a character that is neither selected nor hovered, in characters. */
const OTHER_LABEL_CHARS = 36;
/** Zoom range, relative to the zoom that fits the whole map in view. */
export const ZOOM_MIN = 0.5;
export const ZOOM_MAX = 64;
const ZOOM_STEP = 1.5;
/** A press that moves less than this many pixels is a click, not a drag. */
const CLICK_SLOP_PX = 4;

export interface LabelBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface MapViewOptions {
  /** Called when a click selects a character (or clears the selection: null). */
  onSelect?: (id: number | null) => void;
  /** Accessible name of the map. */
  label?: string;
}

interface CharNode {
  g: SVGGElement;
  dot: SVGCircleElement;
  head: SVGLineElement;
}

function svgEl<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>, parent?: Element): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG_NS, name);
  for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  parent?.appendChild(e);
  return e;
}

function overlaps(a: LabelBox, b: LabelBox): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

export class MapView {
  readonly root: HTMLDivElement;
  readonly svg: SVGSVGElement;
  private readonly worldLayer: SVGGElement;
  private readonly pathLayer: SVGGElement;
  private readonly lineLayer: SVGGElement;
  private readonly charLayer: SVGGElement;
  private readonly labelLayer: SVGGElement;
  private readonly nodes = new Map<number, CharNode>();
  private readonly linePool: SVGLineElement[] = [];
  private readonly labelPool: SVGTextElement[] = [];
  private readonly widths = new Map<string, number>();
  private readonly measure: CanvasRenderingContext2D | null;
  private world: MapWorld = { bounds: { minX: -50, minZ: -50, maxX: 50, maxZ: 50 }, obstacles: [], poi: [], routes: [] };
  private chars: MapCharacter[] = [];
  private readonly byId = new Map<number, MapCharacter>();
  private shown: (c: MapCharacter) => boolean = () => true;
  private path: { x: number; z: number }[] = [];
  private pathNow = 0;
  private width = 800;
  private height = 600;
  private fit = 1;
  private zoom = 1;
  private cx = 0;
  private cz = 0;
  private placed: LabelBox[] = [];
  private readonly observer: ResizeObserver;
  /** Whether the view was panned or zoomed since it last fitted the map (the live map refits only while not). */
  moved = false;
  selected: number | null = null;
  hovered: number | null = null;

  constructor(
    host: HTMLElement,
    private readonly options: MapViewOptions = {},
  ) {
    this.root = document.createElement('div');
    this.root.className = 'map-view';
    this.svg = svgEl('svg', {
      class: 'map-svg',
      tabindex: 0,
      role: 'application',
      'aria-label': options.label ?? 'Map of the characters',
      'aria-roledescription': 'map',
    });
    this.root.appendChild(this.svg);
    this.worldLayer = svgEl('g', { class: 'map-world' }, this.svg);
    this.pathLayer = svgEl('g', { class: 'map-path' }, this.svg);
    this.lineLayer = svgEl('g', { class: 'map-lines' }, this.svg);
    this.charLayer = svgEl('g', { class: 'map-chars' }, this.svg);
    this.labelLayer = svgEl('g', { class: 'map-labels' }, this.svg);
    const zoom = document.createElement('div');
    zoom.className = 'map-zoom';
    for (const [text, title, act] of [
      ['+', 'Zoom in (+)', () => this.zoomBy(ZOOM_STEP)],
      ['−', 'Zoom out (−)', () => this.zoomBy(1 / ZOOM_STEP)],
      ['⤢', 'Fit the whole map (0)', () => this.fitView()],
    ] as const) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = text;
      b.title = title;
      b.setAttribute('aria-label', title);
      b.addEventListener('click', act);
      zoom.appendChild(b);
    }
    this.root.appendChild(zoom);
    host.appendChild(this.root);
    this.measure = document.createElement('canvas').getContext('2d');
    if (this.measure) this.measure.font = LABEL_FONT;
    this.listen();
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(this.root);
    this.resize();
  }

  /** Removes the map from the page and stops watching its size. */
  dispose(): void {
    this.observer.disconnect();
    this.root.remove();
  }

  /** Pixels per metre now. */
  get scale(): number {
    return this.fit * this.zoom;
  }

  /** The zoom relative to the whole map in view (1). */
  get zoomLevel(): number {
    return this.zoom;
  }

  /** World (x, z) to screen pixels in the SVG; z (north) grows up. */
  toScreen(x: number, z: number): { x: number; y: number } {
    const s = this.scale;
    return { x: (x - this.cx) * s + this.width / 2, y: this.height / 2 - (z - this.cz) * s };
  }

  setWorld(world: MapWorld, refit = true): void {
    this.world = world;
    if (refit) this.fitView(false);
    this.drawWorld();
    this.draw();
  }

  /** The bounds "fit" shows. */
  get bounds(): Bounds {
    return this.world.bounds;
  }

  /** Changes what "fit" shows (the live map grows it as characters move) without moving the view now. */
  setBounds(bounds: Bounds): void {
    this.world = { ...this.world, bounds };
  }

  setCharacters(chars: MapCharacter[]): void {
    this.chars = chars;
    this.byId.clear();
    for (const c of chars) this.byId.set(c.id, c);
    this.draw();
  }

  /** Which characters are drawn (the filters); the selected one is drawn whatever it says. */
  setFilter(shown: (c: MapCharacter) => boolean): void {
    this.shown = shown;
    this.draw();
  }

  /** The selected character's path; the part up to `now` (an index) is drawn stronger. */
  setPath(points: { x: number; z: number }[], now = points.length - 1): void {
    this.path = points;
    this.pathNow = now;
    this.drawPath();
  }

  select(id: number | null): void {
    this.selected = id;
    this.draw();
  }

  character(id: number): MapCharacter | undefined {
    return this.byId.get(id);
  }

  /** The labels drawn now, in screen pixels (what the overlap rule placed). */
  labelBoxes(): LabelBox[] {
    return this.placed.map((b) => ({ ...b }));
  }

  zoomBy(factor: number, at?: { x: number; y: number }): void {
    const next = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, this.zoom * factor));
    if (next === this.zoom) return;
    this.moved = true;
    const p = at ?? { x: this.width / 2, y: this.height / 2 };
    // Keep the world point under `at` where it is.
    const before = this.toWorld(p.x, p.y);
    this.zoom = next;
    const after = this.toWorld(p.x, p.y);
    this.cx += before.x - after.x;
    this.cz += before.z - after.z;
    this.redraw();
  }

  panBy(dx: number, dy: number): void {
    this.moved = true;
    this.cx -= dx / this.scale;
    this.cz += dy / this.scale;
    this.redraw();
  }

  /** The whole map in view. */
  fitView(draw = true): void {
    const b = this.world.bounds;
    this.zoom = 1;
    this.moved = false;
    this.cx = (b.minX + b.maxX) / 2;
    this.cz = (b.minZ + b.maxZ) / 2;
    this.computeFit();
    if (draw) this.redraw();
  }

  /** Centres the view on a point without changing the zoom. */
  centreOn(x: number, z: number): void {
    this.moved = true;
    this.cx = x;
    this.cz = z;
    this.redraw();
  }

  private toWorld(sx: number, sy: number): { x: number; z: number } {
    const s = this.scale;
    return { x: (sx - this.width / 2) / s + this.cx, z: (this.height / 2 - sy) / s + this.cz };
  }

  private computeFit(): void {
    const b = this.world.bounds;
    this.fit = Math.min(this.width / Math.max(1, b.maxX - b.minX), this.height / Math.max(1, b.maxZ - b.minZ));
  }

  private resize(): void {
    const r = this.root.getBoundingClientRect();
    this.width = Math.max(100, r.width);
    this.height = Math.max(100, r.height);
    this.svg.setAttribute('viewBox', `0 0 ${this.width} ${this.height}`);
    this.computeFit();
    this.redraw();
  }

  private redraw(): void {
    this.drawWorld();
    this.draw();
  }

  private listen(): void {
    let press: { x: number; y: number; id: number | null; moved: boolean; pointer: number } | null = null;
    const idAt = (target: EventTarget | null): number | null => {
      const g = target instanceof Element ? target.closest('[data-id]') : null;
      return g ? Number(g.getAttribute('data-id')) : null;
    };
    this.svg.addEventListener('pointerdown', (e) => {
      press = { x: e.clientX, y: e.clientY, id: idAt(e.target), moved: false, pointer: e.pointerId };
      this.svg.focus({ preventScroll: true });
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (press && press.pointer === e.pointerId && (e.buttons & 1) === 1) {
        const dx = e.clientX - press.x;
        const dy = e.clientY - press.y;
        if (!press.moved && Math.hypot(dx, dy) < CLICK_SLOP_PX) return;
        if (!press.moved) {
          press.moved = true;
          this.svg.setPointerCapture(e.pointerId);
          this.svg.classList.add('dragging');
        }
        press.x = e.clientX;
        press.y = e.clientY;
        this.panBy(dx, dy);
        return;
      }
      const id = idAt(e.target);
      if (id !== this.hovered) {
        this.hovered = id;
        this.draw();
      }
    });
    const release = (e: PointerEvent): void => {
      if (!press || press.pointer !== e.pointerId) return;
      const p = press;
      press = null;
      this.svg.classList.remove('dragging');
      if (p.moved || e.type === 'pointercancel') return;
      this.selected = p.id;
      this.options.onSelect?.(p.id);
      this.draw();
    };
    this.svg.addEventListener('pointerup', release);
    this.svg.addEventListener('pointercancel', release);
    this.svg.addEventListener('pointerleave', () => {
      if (this.hovered !== null) {
        this.hovered = null;
        this.draw();
      }
    });
    this.listenZoomAndKeys();
  }

  /** The wheel zooms about the pointer; keys zoom (+ -), fit (0), pan (arrows) and clear the selection (Escape). */
  private listenZoomAndKeys(): void {
    this.svg.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const r = this.svg.getBoundingClientRect();
        this.zoomBy(Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)), { x: e.clientX - r.left, y: e.clientY - r.top });
      },
      { passive: false },
    );
    this.svg.addEventListener('keydown', (e) => {
      const step = Math.min(this.width, this.height) * 0.15;
      const act: Record<string, () => void> = {
        '+': () => this.zoomBy(ZOOM_STEP),
        '=': () => this.zoomBy(ZOOM_STEP),
        '-': () => this.zoomBy(1 / ZOOM_STEP),
        _: () => this.zoomBy(1 / ZOOM_STEP),
        '0': () => this.fitView(),
        ArrowLeft: () => this.panBy(step, 0),
        ArrowRight: () => this.panBy(-step, 0),
        ArrowUp: () => this.panBy(0, step),
        ArrowDown: () => this.panBy(0, -step),
        Escape: () => {
          this.selected = null;
          this.options.onSelect?.(null);
          this.draw();
        },
      };
      const f = act[e.key];
      if (f && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        f();
      }
    });
  }

  private drawWorld(): void {
    const layer = this.worldLayer;
    layer.replaceChildren();
    const s = this.scale;
    for (const o of this.world.obstacles) {
      const a = this.toScreen(o.min.x, o.max.z);
      svgEl('rect', { x: a.x, y: a.y, width: (o.max.x - o.min.x) * s, height: (o.max.z - o.min.z) * s, class: o.passable ? 'map-cover' : 'map-wall' }, layer);
    }
    for (const route of this.world.routes) {
      const pts = route.map(([x, z]) => {
        const p = this.toScreen(x, z);
        return `${p.x.toFixed(1)},${p.y.toFixed(1)}`;
      });
      if (route.length > 1) svgEl('polyline', { points: pts.join(' '), class: 'map-route' }, layer);
    }
    for (const p of this.world.poi) {
      const q = this.toScreen(p.x, p.z);
      const r = svgEl('rect', { x: q.x - 4, y: q.y - 4, width: 8, height: 8, class: `map-poi map-poi-${p.kind === 'cover' ? 'cover' : 'other'}` }, layer);
      const title = svgEl('title', {}, r);
      title.textContent = `${p.id} (${p.kind})`;
    }
  }

  private node(id: number): CharNode {
    let n = this.nodes.get(id);
    if (!n) {
      const g = svgEl('g', { class: 'map-char', 'data-id': id }, this.charLayer);
      const head = svgEl('line', { class: 'map-heading' }, g);
      const dot = svgEl('circle', { r: 5 }, g);
      n = { g, dot, head };
      this.nodes.set(id, n);
    }
    return n;
  }

  private visible(c: MapCharacter): boolean {
    return c.id === this.selected || this.shown(c);
  }

  /** Characters, aim lines, the selected one's path and every label. */
  draw(): void {
    const seen = new Set<number>();
    for (const c of this.chars) {
      const n = this.node(c.id);
      seen.add(c.id);
      if (!this.visible(c)) {
        n.g.setAttribute('display', 'none');
        continue;
      }
      n.g.removeAttribute('display');
      const p = this.toScreen(c.x, c.z);
      const selected = c.id === this.selected;
      const r = selected ? 7 : c.posture === 'prone' ? 3.5 : c.posture === 'crouched' ? 4.5 : 5.5;
      n.dot.setAttribute('cx', p.x.toFixed(2));
      n.dot.setAttribute('cy', p.y.toFixed(2));
      n.dot.setAttribute('r', String(r));
      n.dot.setAttribute('fill', modeColour(c.mode));
      n.g.setAttribute('data-mode', c.mode);
      n.g.setAttribute('class', selected ? 'map-char selected' : c.id === this.hovered ? 'map-char hovered' : 'map-char');
      if (c.heading === null) n.head.setAttribute('display', 'none');
      else {
        const a = (c.heading * Math.PI) / 180;
        n.head.removeAttribute('display');
        n.head.setAttribute('x1', p.x.toFixed(2));
        n.head.setAttribute('y1', p.y.toFixed(2));
        n.head.setAttribute('x2', (p.x + Math.sin(a) * (r + 6)).toFixed(2));
        n.head.setAttribute('y2', (p.y - Math.cos(a) * (r + 6)).toFixed(2));
      }
    }
    for (const [id, n] of this.nodes) {
      if (!seen.has(id)) {
        n.g.remove();
        this.nodes.delete(id);
      }
    }
    // The selected character on top of the others.
    if (this.selected !== null) {
      const n = this.nodes.get(this.selected);
      if (n) this.charLayer.appendChild(n.g);
    }
    this.drawLines();
    this.drawPath();
    this.layoutLabels();
  }

  private drawLines(): void {
    let used = 0;
    const line = (x1: number, y1: number, x2: number, y2: number, cls: string): void => {
      let l = this.linePool[used];
      if (!l) this.linePool.push((l = svgEl('line', {}, this.lineLayer)));
      used++;
      l.removeAttribute('display');
      l.setAttribute('x1', x1.toFixed(1));
      l.setAttribute('y1', y1.toFixed(1));
      l.setAttribute('x2', x2.toFixed(1));
      l.setAttribute('y2', y2.toFixed(1));
      l.setAttribute('class', cls);
    };
    for (const c of this.chars) {
      if (!this.visible(c)) continue;
      const p = this.toScreen(c.x, c.z);
      const focus = c.id === this.selected || c.id === this.hovered;
      if (c.aim) {
        const t = this.byId.get(c.aim.target);
        if (t) {
          const q = this.toScreen(t.x, t.z);
          if (c.aim.kind === 'flee') line(q.x, q.y, p.x, p.y, 'map-aim map-aim-flee');
          else line(p.x, p.y, q.x, q.y, `map-aim map-aim-${c.aim.kind}`);
        }
      }
      if (focus && c.dest) {
        const q = this.toScreen(c.dest.x, c.dest.z);
        line(p.x, p.y, q.x, q.y, c.dest.investigate ? 'map-dest map-dest-investigate' : 'map-dest');
      }
    }
    for (let i = used; i < this.linePool.length; i++) this.linePool[i]!.setAttribute('display', 'none');
  }

  private drawPath(): void {
    const layer = this.pathLayer;
    layer.replaceChildren();
    if (this.selected === null || this.path.length < 2) return;
    const pts = this.path.map((p) => {
      const q = this.toScreen(p.x, p.z);
      return `${q.x.toFixed(1)},${q.y.toFixed(1)}`;
    });
    svgEl('polyline', { points: pts.join(' '), class: 'map-path-all' }, layer);
    const upto = Math.max(0, Math.min(this.pathNow, pts.length - 1));
    if (upto > 0) svgEl('polyline', { points: pts.slice(0, upto + 1).join(' '), class: 'map-path-done' }, layer);
  }

  private textWidth(text: string): number {
    let w = this.widths.get(text);
    if (w === undefined) {
      w = this.measure ? this.measure.measureText(text).width : text.length * LABEL_FONT_PX * 0.6;
      if (this.widths.size > 5000) this.widths.clear();
      this.widths.set(text, w);
    }
    return w;
  }

  private layoutLabels(): void {
    this.placed = [];
    let used = 0;
    const put = (c: MapCharacter | null, text: string, sx: number, sy: number, force: boolean, cls: string): void => {
      const w = this.textWidth(text) + 4;
      const h = LABEL_HEIGHT;
      // Right-above, right-below, left-above, left-below the marker.
      const spots: LabelBox[] = [
        { x: sx + 8, y: sy - 6 - h, w, h },
        { x: sx + 8, y: sy + 6, w, h },
        { x: sx - 8 - w, y: sy - 6 - h, w, h },
        { x: sx - 8 - w, y: sy + 6, w, h },
      ];
      const free = (b: LabelBox): boolean => !this.placed.some((o) => overlaps(b, o));
      // A place inside the view first, so a label by the edge is not cut off.
      const inside = (b: LabelBox): boolean => b.x >= 0 && b.y >= 0 && b.x + b.w <= this.width && b.y + b.h <= this.height;
      let box = spots.find((b) => inside(b) && free(b)) ?? spots.find(free);
      if (!box) {
        if (!force) return;
        box = spots[0]!;
      }
      this.placed.push(box);
      let t = this.labelPool[used];
      if (!t) this.labelPool.push((t = svgEl('text', {}, this.labelLayer)));
      used++;
      t.removeAttribute('display');
      t.setAttribute('x', (box.x + 2).toFixed(1));
      t.setAttribute('y', (box.y + h - 3.5).toFixed(1));
      t.setAttribute('class', cls);
      if (c) t.setAttribute('data-id', String(c.id));
      else t.removeAttribute('data-id');
      t.textContent = text;
    };
    const full = (c: MapCharacter): string => (c.intents ? `${c.name}: ${c.intents}` : `${c.name} (${c.mode})`);
    const inView = (x: number, y: number): boolean => x >= -20 && y >= -20 && x <= this.width + 20 && y <= this.height + 20;
    for (const id of this.hovered === this.selected ? [this.selected] : [this.selected, this.hovered]) {
      if (id === null) continue;
      const c = this.byId.get(id);
      if (!c || !this.visible(c)) continue;
      const p = this.toScreen(c.x, c.z);
      put(c, full(c), p.x, p.y, true, id === this.selected ? 'map-label selected' : 'map-label hovered');
    }
    if (this.scale >= OTHER_LABELS_MIN_SCALE) {
      for (const c of this.chars) {
        if (c.id === this.selected || c.id === this.hovered || !this.visible(c)) continue;
        const p = this.toScreen(c.x, c.z);
        if (!inView(p.x, p.y)) continue;
        const text = full(c);
        put(c, text.length > OTHER_LABEL_CHARS ? `${text.slice(0, OTHER_LABEL_CHARS - 1)}…` : text, p.x, p.y, false, 'map-label');
      }
      for (const poi of this.world.poi) {
        const p = this.toScreen(poi.x, poi.z);
        if (inView(p.x, p.y)) put(null, poi.id, p.x, p.y, false, 'map-label map-label-poi');
      }
    }
    for (let i = used; i < this.labelPool.length; i++) this.labelPool[i]!.setAttribute('display', 'none');
  }
}
