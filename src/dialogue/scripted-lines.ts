import type { LineParams, LineResult } from '../../plugins/protocol.js';
import type { LineSource } from './context.js';

/** The model name a scripted line reports (telemetry and logs tell it from a real model's). */
export const SCRIPTED_MODEL = 'brainstem-scripted-demo';
/** Characters whose line count is kept (for variety); past it the counts start over. */
export const MAX_SCRIPTED_SPEAKERS = 10_000;
/** Longest heard text quoted back in a reply, in characters. */
const QUOTE_MAX = 40;

/** Opening words by role and situation; `{p}` is the nearest player, `{s}` whoever spoke. */
const OPENERS: Record<string, Record<'greet' | 'idle' | 'reply', readonly string[]>> = {
  survivor: {
    greet: ['Hello, {p}.', 'Evening, {p}. Stay close to the road.', "{p}! Didn't expect company.", "Easy, {p}. I'm friendly."],
    idle: ['Quiet out here. Too quiet.', 'Keep your eyes open, {p}.', 'Anyone found clean water lately?', 'We should move before dark.'],
    reply: ['I hear you, {s}.', 'Right, {s}. Let us keep moving.', 'Fair enough, {s}.', '"{q}" Maybe, {s}. Maybe.'],
  },
  bandit: {
    greet: ['Hands where I can see them, {p}.', 'Well, well. {p}.', 'Walk on by, {p}.', 'Nice boots, {p}.'],
    idle: ['Nobody crosses this road for free.', 'Still here, {p}?', 'Keep walking.', 'I have my eye on you.'],
    reply: ['Talk is cheap, {s}.', '"{q}" Sure, {s}.', 'Careful, {s}.', 'We will see, {s}.'],
  },
  guard: {
    greet: ['Halt, {p}. State your business.', 'Evening, {p}. Keep it peaceful.', 'Move along slowly, {p}.', 'Stay where I can see you, {p}.'],
    idle: ['All quiet on my watch.', 'Keep to the path, {p}.', 'No trouble here, understood?', 'Eyes front.'],
    reply: ['Noted, {s}.', 'Understood, {s}.', '"{q}" I will look into it, {s}.', 'Keep it short, {s}.'],
  },
  trader: {
    greet: ['Looking to trade, {p}?', 'Welcome, {p}. Fair prices today.', 'Ah, {p}! Got anything to sell?', 'Come closer, {p}. No tricks.'],
    idle: ['Bandages, batteries, beans. Best prices.', 'Business is slow, {p}.', 'Everything has a price.', 'Cash or barter, {p}?'],
    reply: ['Good question, {s}.', '"{q}" Let us talk terms, {s}.', 'For you, {s}, a discount.', 'Deal, {s}.'],
  },
};

/** Lines for a notable event, by its kind word; other kinds take the general ones. */
const EVENTS: Record<string, readonly string[]> = {
  fighting: ['Contact! Get down!', 'Hostile! Open fire!', 'They are on us!', 'Take cover!'],
  fleeing: ['Fall back! Fall back!', 'Run! Now!', 'I am out of here!', 'Not today!'],
  general: ['Did you see that?', 'Stay sharp.', 'Something is wrong.', 'Heads up!'],
};

/** A theme remark appended now and then: themes read "misses their family", "was a nurse before". */
const THEME_TAILS = ['They call me the one who {t}.', 'Folks know me as the one who {t}.', 'Ask anyone: I am the one who {t}.'];

/**
 * The built-in line source of `--demo-dialogue`: characters talk without a model, from
 * scripted lines shaped by role, situation, the players near and the character's flavor
 * themes. It stands where the OpenAI-compatible plugin stands (a LineSource), so every line
 * still passes the tier's speech limits, phrase cache, counters and economy. The same seed,
 * the same characters and the same requests in the same order give the same lines. A line
 * costs nothing and uses no tokens.
 */
export class ScriptedLines implements LineSource {
  private readonly spoken = new Map<string, number>();

  constructor(private readonly seed: number) {}

  line(params: LineParams): Promise<LineResult> {
    return Promise.resolve({ text: this.write(params), model: SCRIPTED_MODEL, usage: { prompt_tokens: 0, completion_tokens: 0 }, cost_usd: 0 });
  }

  /** The line for one request (synchronous; line() wraps it). */
  write(params: LineParams): string {
    const c = params.character;
    const s = params.situation;
    const speaker = `${c.name}|${c.role}`;
    const count = this.spoken.get(speaker) ?? 0;
    if (count === 0 && this.spoken.size >= MAX_SCRIPTED_SPEAKERS) this.spoken.clear();
    this.spoken.set(speaker, count + 1);
    const pick = hashOf(`${this.seed}|${speaker}|${s.kind}|${s.event}|${count}`);
    const player = s.players[0]?.name || 'friend';
    const heard = s.heard[s.heard.length - 1];
    let text: string;
    if (s.kind === 'event') {
      const kind = s.event.split(':', 1)[0]!.trim();
      text = choose(EVENTS[kind] ?? EVENTS.general!, pick);
    } else {
      const role = OPENERS[c.role] ?? OPENERS.survivor!;
      const kind = s.kind === 'greet' || s.kind === 'reply' ? s.kind : 'idle';
      const q = quote(heard?.text ?? '');
      // The heard words go in last, so nothing in them is taken for a placeholder.
      text = choose(role[kind], pick)
        .replaceAll('{p}', player)
        .replaceAll('{s}', heard?.from || 'friend')
        .replace('"{q}" ', q ? `"${q}" ` : '');
      // About one volunteered line in four says who the character is, from its flavor themes.
      if (kind !== 'reply' && c.themes.length > 0 && (pick >>> 8) % 4 === 0) {
        const theme = c.themes[(pick >>> 12) % c.themes.length]!;
        text = `${text} ${choose(THEME_TAILS, pick >>> 16).replace('{t}', theme)}`;
      }
    }
    return fit(text, params.max_chars);
  }
}

function choose(list: readonly string[], pick: number): string {
  return list[pick % list.length]!;
}

/** Heard text as a short quote: one line, no quote marks, cut at a word. */
function quote(text: string): string {
  const plain = text.replace(/["\s]+/g, ' ').trim();
  return plain.length <= QUOTE_MAX ? plain : `${plain.slice(0, QUOTE_MAX).replace(/\s+\S*$/, '')}…`;
}

/** At most maxChars characters, cut at a word with an ellipsis as the model's lines are. */
function fit(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, Math.max(1, maxChars - 1));
  const space = cut.lastIndexOf(' ');
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '')}…`;
}

/** FNV-1a over a string's UTF-16 units: the same text, the same number, on every machine. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
