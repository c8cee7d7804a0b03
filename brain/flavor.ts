import { rand, type RngHolder } from './prng.js';
import type { Flavor } from './types.js';

/**
 * Flavor: a few weighted themes per character and a generated name, drawn at spawn from the
 * agent's stream. Themes are drawn whatever the policy says, so switching flavor on or off
 * never shifts the rest of an agent's random stream; the policy only decides whether they are
 * shown.
 */

const NAMES = [
  'Mira',
  'Jonas',
  'Ilse',
  'Tomas',
  'Vera',
  'Anton',
  'Lena',
  'Pavel',
  'Nadia',
  'Oskar',
  'Rosa',
  'Emil',
  'Katya',
  'Marek',
  'Sofia',
  'Viktor',
  'Hana',
  'Lukas',
  'Irina',
  'Felix',
  'Zora',
  'Daniel',
  'Alma',
  'Stefan',
  'Yara',
  'Boris',
  'Elsa',
  'Milan',
  'Tess',
  'Igor',
  'Nina',
  'Karl',
  'Dasha',
  'Ruben',
  'Greta',
  'Andrei',
  'Lotte',
  'Filip',
  'Mila',
  'Sasha',
] as const;

export function drawName(rng: RngHolder): string {
  return NAMES[Math.floor(rand(rng) * NAMES.length)]!;
}

/** `themes_per_bot` distinct themes, each drawn with probability proportional to its weight. */
export function drawThemes(flavor: Flavor, rng: RngHolder): string[] {
  const themes = flavor.themes;
  const want = Math.min(flavor.themes_per_bot, themes.length);
  const taken = new Array<boolean>(themes.length).fill(false);
  const out: string[] = [];
  for (let k = 0; k < want; k++) {
    let total = 0;
    for (let i = 0; i < themes.length; i++) if (!taken[i]) total += themes[i]!.weight;
    let r = rand(rng) * total;
    let pick = -1;
    for (let i = 0; i < themes.length; i++) {
      if (taken[i]) continue;
      pick = i;
      r -= themes[i]!.weight;
      if (r < 0) break;
    }
    if (pick < 0) break;
    taken[pick] = true;
    out.push(themes[pick]!.text);
  }
  return out;
}
