import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { BrandFont } from './types.js';

/** Common places of a sans-serif TrueType font on Linux and macOS, tried when fontconfig is absent. */
const KNOWN_FONTS = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/TTF/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/noto/NotoSans-Bold.ttf',
  '/usr/share/fonts/truetype/noto/NotoSans-Bold.ttf',
  '/Library/Fonts/Arial.ttf',
  '/System/Library/Fonts/Supplemental/Arial.ttf',
];

/**
 * A font file for the title card: an explicit one, else what fontconfig matches for a bold
 * sans, else a known path. Null when the machine has none; the title card is then drawn with
 * the built-in bitmap font (see titlecard.ts).
 */
export function findFont(explicit?: string): string | null {
  if (explicit) return existsSync(explicit) ? explicit : null;
  if (systemFont === undefined) systemFont = lookupSystemFont();
  return systemFont;
}

/** Looked up once per process: fc-match is a child process and fonts do not come and go. */
let systemFont: string | null | undefined;

function lookupSystemFont(): string | null {
  const fc = spawnSync('fc-match', ['-f', '%{file}', 'sans:bold'], { encoding: 'utf8', timeout: 5000 });
  if (fc.status === 0 && fc.stdout && /\.(ttf|otf|ttc)$/i.test(fc.stdout) && existsSync(fc.stdout)) return fc.stdout;
  return KNOWN_FONTS.find((f) => existsSync(f)) ?? null;
}

/** What fontconfig is asked for each brand font (bold, as titles are). */
const BRAND_PATTERNS: Record<BrandFont, string> = {
  sans: 'DejaVu Sans:bold',
  serif: 'DejaVu Serif:bold',
  mono: 'DejaVu Sans Mono:bold',
  condensed: 'DejaVu Sans:bold:width=75',
};

const brandFonts = new Map<BrandFont, string | null>();

/**
 * The file of a brand font (see BRAND_FONTS), found once with fontconfig; null when the machine
 * has no such face (the default font is then used).
 */
export function findBrandFont(name: BrandFont): string | null {
  if (!brandFonts.has(name)) {
    const fc = spawnSync('fc-match', ['-f', '%{file}', BRAND_PATTERNS[name]], { encoding: 'utf8', timeout: 5000 });
    const file = fc.status === 0 && fc.stdout && /\.(ttf|otf|ttc)$/i.test(fc.stdout) && existsSync(fc.stdout) ? fc.stdout : null;
    brandFonts.set(name, file);
  }
  return brandFonts.get(name)!;
}
