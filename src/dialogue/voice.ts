import type { Traits } from '../../brain/types.js';
import type { VoiceParam } from '../../plugins/protocol.js';

const VARIANTS = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'f1', 'f2', 'f3', 'f4', 'f5'] as const;
const NAMED = ['alloy', 'ash', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer'] as const;

/** FNV-1a: a stable small hash, so a character keeps its voice across restarts. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function trait(traits: Partial<Traits>, name: keyof Traits): number {
  const v = traits[name];
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0.5;
}

/**
 * A distinct voice per character: the variant (timbre) comes from its name, so two
 * characters rarely share one; pitch rises with extraversion and neuroticism, speed with
 * extraversion and falls with conscientiousness (a careful speaker is slower), plus a small
 * per-name offset so that equal traits still sound apart.
 */
export function voiceFor(name: string, traits: Partial<Traits>): VoiceParam {
  const h = hash(name);
  const extraversion = trait(traits, 'extraversion');
  const neuroticism = trait(traits, 'neuroticism');
  const conscientiousness = trait(traits, 'conscientiousness');
  const jitter = ((h >>> 8) % 11) - 5;
  const pitch = Math.round(Math.min(99, Math.max(0, 25 + 30 * extraversion + 20 * neuroticism + jitter)));
  const speed = Math.round(Math.min(230, Math.max(120, 150 + 50 * extraversion - 30 * conscientiousness + jitter * 2)));
  return { pitch, speed, variant: VARIANTS[h % VARIANTS.length]!, named: NAMED[(h >>> 4) % NAMED.length]! };
}
