import { HEARD_AHEAD_S } from '../../brain/types.js';
import type { HeardLine, NearbyPlayer, Persona, SayIntent, SituationKind } from './context.js';
import type { SpeechWindows } from './limits.js';
import { emotionLevel, situationSignature } from './phrase-cache.js';

const NO_PLAYERS: readonly NearbyPlayer[] = [];

/**
 * Whether a player of this id is in sight: a line "from" the character's own id is its own
 * unless a player of that id is there (a game whose player ids and character ids overlap).
 */
function hasPlayer(players: readonly NearbyPlayer[], id: number): boolean {
  for (let i = 0; i < players.length; i++) if (players[i]!.id === id) return true;
  return false;
}

/** Heard lines a character keeps to answer (the newest). */
export const MAX_OWED = 3;
/** Voice-in transcripts queued for a character's next tick (the newest). */
export const MAX_VOICE_QUEUE = 8;

/**
 * Players a character remembers meeting (for greetings). Targets are the mod's to choose, so a
 * character shown ever new player ids would otherwise remember every one for as long as it
 * lives; past this, players gone longer than the greet-again time go first (forgetting them
 * changes nothing: they would be greeted anyway), then the longest known.
 */
export const MAX_SEEN_PLAYERS = 256;

/** When a player was last in range; a mutable box, so refreshing it every tick allocates nothing. */
export interface Seen {
  at: number;
}

/**
 * Speech state of one character. Lives as long as the tier or until forget(). Every tick of
 * the character reads this one object and nothing else of the tier's per-character state:
 * the fields a quiet tick tests come first, and what only some characters ever need (heard
 * lines owed an answer, queued voice-in text, players met, spoken-line windows) is allocated
 * on first use and dropped again when empty.
 */
export class AgentSpeech {
  constructor(readonly id: number) {}
  pending = false;
  /** Ticked since the tier's last eviction sweep (ids outside the dense range; dense ids keep RECENT in the flags byte). */
  recent = true;
  /** Whether the previous tick's context had `combat` set. */
  inCombat = false;
  ready: SayIntent | null = null;
  /** Heard lines still to answer (the newest few); null when none. */
  owed: HeardLine[] | null = null;
  /** Voice-in transcripts waiting for the next tick; null when none. */
  voice: string[] | null = null;
  /** Player id → last game time in range, for greetings; null until a player was in range. */
  seen: Map<number, Seen> | null = null;
  /** Spoken-line times for the speech limits; null until the first line. */
  windows: SpeechWindows | null = null;
  readyAskedAt = 0;
  /** Newest heard `at_s` already handled. */
  heardAt = -Infinity;
  lastVolunteerAt = -Infinity;
  lastText = '';
  /** The last situation signature and what it was built from, reused while they stay the same. */
  sig = '';
  sigRole = '';
  sigGoal = '';
  sigKind = '';
  sigEvent = '';
  sigEmotion = '';
  sigLevel = -2;
  /**
   * While the model is down: the signature last found with no usable cached line, and the
   * cache's change count then. Until either differs, asking the cache again cannot succeed.
   */
  unusableSig = '';
  unusableAt = -1;

  /**
   * Takes this tick's heard lines newer than the last taken, and the queued voice-in text (as
   * heard now, from no one in particular), as lines owed an answer. Returns how many it took.
   */
  takeHeard(timeS: number, heard: readonly HeardLine[], players: readonly NearbyPlayer[] = NO_PLAYERS): number {
    let taken = 0;
    const since = this.heardAt;
    for (let i = 0; i < heard.length; i++) {
      const h = heard[i]!;
      // A line stamped after the tick (another clock) would set heardAt ahead and silence every later line;
      // the character's own line (a mod that feeds its Say back through chat) is not answered.
      if (!(h.at_s > since) || h.at_s > timeS + HEARD_AHEAD_S || (h.from === this.id && !hasPlayer(players, h.from))) continue;
      if (h.at_s > this.heardAt) this.heardAt = h.at_s;
      taken++;
      // Copied: the caller may reuse its heard objects on the next tick.
      this.owe(h.name === undefined ? { from: h.from, text: h.text, at_s: h.at_s } : { from: h.from, name: h.name, text: h.text, at_s: h.at_s });
    }
    const voice = this.voice;
    if (voice !== null) {
      this.voice = null;
      for (const text of voice) {
        taken++;
        this.owe({ from: -1, text, at_s: timeS });
      }
    }
    return taken;
  }

  private owe(h: HeardLine): void {
    const owed = (this.owed ??= []);
    if (owed.length >= MAX_OWED) owed.shift();
    owed.push(h);
  }

  /** Queues a voice-in transcript for the next tick. */
  queueVoice(text: string): void {
    const voice = (this.voice ??= []);
    if (voice.length >= MAX_VOICE_QUEUE) voice.shift();
    voice.push(text);
  }

  /** situationSignature, rebuilt only when one of its parts changed since this character's last one. */
  signature(p: Persona, kind: SituationKind, eventKind: string): string {
    const e = p.emotion;
    const level = emotionLevel(e);
    const emotion = e ? e.name : '';
    if (
      this.sigLevel !== level ||
      this.sigKind !== kind ||
      this.sigRole !== p.role ||
      this.sigGoal !== p.goal ||
      this.sigEvent !== eventKind ||
      this.sigEmotion !== emotion
    ) {
      this.sig = situationSignature(p.role, p.goal, kind, eventKind, e);
      this.sigLevel = level;
      this.sigKind = kind;
      this.sigRole = p.role;
      this.sigGoal = p.goal;
      this.sigEvent = eventKind;
      this.sigEmotion = emotion;
    }
    return this.sig;
  }
}

/**
 * Bits of the one byte per character the quiet-tick test reads (agent ids 0 to DENSE_IDS - 1;
 * other ids always take the full path). A byte array of a few kB stays in the CPU's cache
 * where a map of records and the records themselves do not, and a busy server ticks most
 * characters while they can get no line.
 */
export const KNOWN = 1;
/** AgentSpeech.inCombat. */
export const IN_COMBAT = 2;
/** The record holds a ready line, heard lines owed an answer or voice-in text. */
export const ATTENTION = 4;
/** Ticked since the tier's last eviction sweep. */
export const RECENT = 8;
const DENSE_IDS = 1 << 22;

export function isDense(agentId: number): boolean {
  return agentId >= 0 && agentId < DENSE_IDS && Number.isInteger(agentId);
}

export function flagsOf(st: AgentSpeech): number {
  return KNOWN | (st.inCombat ? IN_COMBAT : 0) | (st.ready !== null || st.owed !== null || st.voice !== null ? ATTENTION : 0);
}
