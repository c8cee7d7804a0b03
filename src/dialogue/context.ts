import type { Role, Traits } from '../../brain/types.js';
import type { LineParams, LineResult, SynthesizeParams, SynthesizeResult, TranscribeParams, TranscribeResult } from '../../plugins/protocol.js';

/**
 * What the tick handler tells the dialogue tier about one character on one tick.
 * src/sidecar/dialogue.ts maps the brain's per-agent data onto it; every field is read during onTick only and copied
 * when a line is requested, so the caller may reuse these objects between ticks.
 */
export interface DialogueContext {
  persona: Persona;
  /**
   * Players (humans, not AI) the character perceives this tick, at any distance; the tier
   * itself decides what is "in range" (option rangeM, default 20 m). Order does not matter.
   */
  players: readonly NearbyPlayer[];
  /**
   * Speech the character heard: `snapshot.heard` as received, lines already seen included
   * (the tier keeps, per agent, the newest `at_s` it has handled and skips older ones).
   * Voice-in transcripts are added by the tier itself (see DialogueTier.hear).
   */
  heard: readonly HeardLine[];
  /** What the character is doing now, in a few plain words: "patrolling the north road". */
  doing: string;
  /** A notable event of this tick worth a remark ("shot at", "found water"), else null. */
  event: NotableEvent | null;
  /**
   * The fight or flight the character is in on this tick, if any. Entering one (this tick
   * but not the character's previous one) counts as the tick's notable event when `event`
   * is null; staying in it does not. The tier remembers the previous tick per character.
   */
  combat?: NotableEvent | null;
}

export interface Persona {
  name: string;
  role: Role;
  /** Any subset of the traits, each 0..1; drives the prompt and the synthetic voice. */
  traits: Partial<Traits>;
  /** This character's flavor theme texts (from the bundle's themes, chosen per bot). */
  themes: readonly string[];
  /** Current goal in plain words ("find clean water"); '' when none. */
  goal: string;
  emotion: Emotion | null;
  /** A short memory summary (a few sentences); '' when none or when policy.memory is off. */
  memory: string;
}

export interface Emotion {
  /** A word such as "afraid", "angry", "calm". */
  name: string;
  /** 0..1; bucketed low / mid / high for the phrase cache. */
  intensity: number;
}

export interface NearbyPlayer {
  id: number;
  name: string;
  distance_m: number;
}

export interface HeardLine {
  /** Speaker id (snapshot.heard `from`); -1 for a voice-in transcript of unknown speaker. */
  from: number;
  /** Speaker name when known; otherwise the prompt says "someone". */
  name?: string;
  text: string;
  /** Game time the line was heard. */
  at_s: number;
}

export interface NotableEvent {
  /** A short stable word ("shot_at", "ally_down", "found_loot"): part of the cache signature. */
  kind: string;
  /** Free words for the prompt ("Alex fired from the tree line"). */
  detail?: string;
}

/** What onTick returns: the brain's Say intent, ready to append to the reply. */
export interface SayIntent {
  kind: 'Say';
  text: string;
  channel: 'proximity';
  line_id: string;
  audio_url?: string;
}

export type SituationKind = 'reply' | 'event' | 'greet' | 'idle';

/** The tier's view of the three plugins; supervisors implement them, tests may fake them. */
export interface LineSource {
  line(params: LineParams): Promise<LineResult>;
}
export interface Synthesizer {
  synthesize(params: SynthesizeParams): Promise<SynthesizeResult>;
}
export interface Transcriber {
  transcribe(params: TranscribeParams): Promise<TranscribeResult>;
}

/** Counters since the last drain, for telemetry (spec 001 §2.2, §2.4, §6). */
export interface DialogueCounters {
  /** Say intents returned. */
  spoke: number;
  /** New heard lines handled (snapshot.heard and voice-in). */
  heard: number;
  /** Lines served from the phrase cache. */
  cacheHits: number;
  /** Lines asked of the model. */
  llmRequests: number;
  llmErrors: number;
  llmPromptTokens: number;
  llmCompletionTokens: number;
  /** prompt + completion. */
  llmTokens: number;
  /** Characters sent to speech synthesis. */
  ttsCharacters: number;
  /** Voice-in clips transcribed. */
  transcriptions: number;
  /** Model spend from the price table, plus TTS spend when priced: llmUsd + ttsUsd. */
  spendUsd: number;
  /** The model's part of spendUsd. */
  llmUsd: number;
  /** Speech synthesis's part of spendUsd. */
  ttsUsd: number;
  /** Lines that arrived too late (older than lineTtlS of game time) or over the limits and were dropped. */
  dropped: number;
}

export function zeroCounters(): DialogueCounters {
  return {
    spoke: 0,
    heard: 0,
    cacheHits: 0,
    llmRequests: 0,
    llmErrors: 0,
    llmPromptTokens: 0,
    llmCompletionTokens: 0,
    llmTokens: 0,
    ttsCharacters: 0,
    transcriptions: 0,
    spendUsd: 0,
    llmUsd: 0,
    ttsUsd: 0,
    dropped: 0,
  };
}
