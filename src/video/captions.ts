import { FORMATS, type Format, type PropertyRecord } from './types.js';
import { frameTimings, type TourTimings } from './tour.js';

/** Roughly how wide a glyph of a proportional sans is, relative to its font size. */
const GLYPH_WIDTH = 0.58;
/** Caption font size as a share of the frame's shorter side (2.6% of a 1920 px height on a phone held upright is still ~50 px). */
export const CAPTION_SCALE = 0.045;
/** Lines a caption may take; the rest is cut with an ellipsis. */
const CAPTION_LINES = 2;

function money(p: PropertyRecord): string | null {
  if (p.price === null) return null;
  const amount = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(p.price);
  return p.currency ? `${p.currency} ${amount}` : amount;
}

function plural(n: number, one: string): string {
  return `${n} ${n === 1 ? one : `${one}s`}`;
}

/** The first sentence (or line) of the description, at most 140 characters. */
export function descriptionLine(p: PropertyRecord): string | null {
  const text = (p.description ?? '').replace(/\s+/g, ' ').trim();
  if (!text) return null;
  const first = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return first.length > 140 ? `${first.slice(0, 139).trimEnd()}…` : first;
}

/** The property's facts, one caption each: address, price, rooms, area, one line of the description. */
export function captionTexts(p: PropertyRecord): string[] {
  const rooms = [p.bedrooms !== null ? plural(p.bedrooms, 'bedroom') : null, p.bathrooms !== null ? plural(p.bathrooms, 'bathroom') : null]
    .filter((x) => x !== null)
    .join(' · ');
  return [
    p.city ? `${p.address}, ${p.city}` : p.address,
    money(p),
    rooms || null,
    p.area !== null ? `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 }).format(p.area)} m²` : null,
    descriptionLine(p),
  ].filter((x): x is string => x !== null && x !== '');
}

/** Wraps text into at most `lines` lines of at most `max` characters, cutting the rest with an ellipsis. */
export function wrap(text: string, max: number, lines = CAPTION_LINES): string {
  const out: string[] = [];
  let line = '';
  const words = text.split(' ');
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!.length > max ? `${words[i]!.slice(0, max - 1)}…` : words[i]!;
    const next = line ? `${line} ${w}` : w;
    if (next.length <= max) {
      line = next;
      continue;
    }
    out.push(line);
    line = w;
    if (out.length === lines) {
      const last = out[lines - 1]!;
      out[lines - 1] = `${last.slice(0, max - 1).trimEnd()}…`;
      return out.join('\n');
    }
  }
  if (line) out.push(line);
  return out.join('\n');
}

/** Characters of a caption line that fit 90% of the frame's width at the caption size. */
export function captionChars(format: Format): number {
  const { width, height } = FORMATS[format];
  return Math.floor((width * 0.9) / (Math.min(width, height) * CAPTION_SCALE * GLYPH_WIDTH));
}

/**
 * When each caption shows: one per photo, from after the photo's fade-in to before its
 * fade-out; with fewer photos than captions, neighbouring captions share a photo.
 */
export function captionTimes(count: number, photos: number, t: TourTimings): { texts: number[]; fromS: number; toS: number }[] {
  if (photos === 0 || count === 0) return [];
  const f = frameTimings(t);
  const slots = Math.min(count, photos);
  const per = Math.ceil(count / slots);
  const out: { texts: number[]; fromS: number; toS: number }[] = [];
  for (let i = 0; i < slots; i++) {
    const texts = Array.from({ length: per }, (_, k) => i * per + k).filter((k) => k < count);
    if (texts.length === 0) break;
    const start = f.title - f.fade + i * (f.photo - f.fade);
    out.push({ texts, fromS: (start + f.fade) / t.fps, toS: (start + f.photo - f.fade) / t.fps });
  }
  return out;
}

/** The voice-over's script: the title, then the facts the captions show, as sentences. */
export function voiceScript(p: PropertyRecord): string {
  const parts = [p.title, ...captionTexts(p).map((c) => c.replace(/ · /g, ', ').replace(/m²/, 'square metres'))];
  const unique = parts.filter((x, i) => parts.indexOf(x) === i);
  return unique.map((s) => (/[.!?…]$/.test(s) ? s : `${s}.`)).join(' ');
}
