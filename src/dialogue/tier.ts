import { mkdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigBundle, PolicyKey } from '../../brain/types.js';
import type { LineParams, TranscribeParams } from '../../plugins/protocol.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import {
  zeroCounters,
  type DialogueContext,
  type DialogueCounters,
  type HeardLine,
  type LineSource,
  type NearbyPlayer,
  type NotableEvent,
  type Persona,
  type SayIntent,
  type SituationKind,
  type Synthesizer,
  type Transcriber,
} from './context.js';
import { ECONOMY_PROFILES, type EconomyProfile } from './economy.js';
import { SpeechLimiter, SpeechWindows } from './limits.js';
import { emotionLevel, PhraseCache, situationSignature } from './phrase-cache.js';
import { PluginRequestError } from './supervisor.js';
import { voiceFor } from './voice.js';
import { seededRandom } from '../random.js';

/** The parts of a bundle the dialogue tier reads. */
export type DialogueBundle = Pick<ConfigBundle, 'policy' | 'game' | 'flavor' | 'speech'>;

export interface DialogueTierOptions {
  bundle: DialogueBundle;
  /** The dialogue plugin (or a fake); null when no model is configured: characters stay silent. */
  lines: LineSource | null;
  voiceOut?: Synthesizer | null;
  voiceIn?: Transcriber | null;
  /** Where synthesised WAV files and incoming voice clips go; needed for voice in and out. */
  audioDir?: string;
  /** URL path the sidecar serves audioDir under (see mountVoiceRoutes). Default "/audio". */
  audioUrlPrefix?: string;
  /** Synthesised files kept before the oldest are deleted. Default 512. */
  maxAudioFiles?: number;
  /** Players within this many metres count as "near" (greetings, idle remarks). Default 20. */
  rangeM?: number;
  /** Longest line, in characters. Default 120. */
  maxChars?: number;
  /** A line arriving more than this many game seconds after it was asked is dropped. Default 30. */
  lineTtlS?: number;
  /** A player out of range this long (game seconds) is greeted again on return. Default 600. */
  greetAgainS?: number;
  /** Back-off when the model fails without a hint, in wall-clock ms. Default 5000. */
  unavailableMs?: number;
  /** TTS price, USD per million characters (OpenAI tts-1 is 15). Default 0. */
  ttsUsdPerMChar?: number;
  /** Wall clock in ms, for model back-off only; speech limits use game time. */
  now?: () => number;
  /** Randomness for the cache-versus-model choice; default seeded from flavor.seed. */
  random?: () => number;
  logger?: Logger;
  /** Run by close(): the supervisors the factory started. */
  onClose?: () => Promise<void>;
}

/**
 * Speech state of one character. Lives as long as the tier or until forget(). Every tick of
 * the character reads this one object and nothing else of the tier's per-character state:
 * the fields a quiet tick tests come first, and what only some characters ever need (heard
 * lines owed an answer, queued voice-in text, players met, spoken-line windows) is allocated
 * on first use and dropped again when empty.
 */
class AgentSpeech {
  constructor(readonly id: number) {}
  pending = false;
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
}

/**
 * Bits of the one byte per character the quiet-tick test reads (agent ids 0 to DENSE_IDS - 1;
 * other ids always take the full path). A byte array of a few kB stays in the CPU's cache
 * where a map of records and the records themselves do not, and a busy server ticks most
 * characters while they can get no line.
 */
const KNOWN = 1;
/** AgentSpeech.inCombat. */
const IN_COMBAT = 2;
/** The record holds a ready line, heard lines owed an answer or voice-in text. */
const ATTENTION = 4;
const DENSE_IDS = 1 << 22;

function isDense(agentId: number): boolean {
  return agentId >= 0 && agentId < DENSE_IDS && Number.isInteger(agentId);
}

function flagsOf(st: AgentSpeech): number {
  return KNOWN | (st.inCombat ? IN_COMBAT : 0) | (st.ready !== null || st.owed !== null || st.voice !== null ? ATTENTION : 0);
}

/** When a player was last in range; a mutable box, so refreshing it every tick allocates nothing. */
interface Seen {
  at: number;
}

const MAX_OWED = 3;
const MAX_VOICE_QUEUE = 8;
const MAX_NAMED_PLAYERS = 4;
/** No heard lines to answer; never written to. */
const NO_LINES: HeardLine[] = [];


const AUDIO_EXT: Record<string, string> = { 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/ogg': 'ogg', 'audio/webm': 'webm' };

/**
 * The dialogue tier as the tick handler sees it: `onTick` answers at once with a line that
 * arrived since the last tick, or null, and when the situation warrants a line and the limits
 * allow, it starts (at most one per agent) an asynchronous request to the phrase cache or the
 * dialogue plugin. Nothing here ever waits on a plugin.
 */
export class DialogueTier {
  private bundle: DialogueBundle;
  private profile: EconomyProfile;
  private readonly limiter: SpeechLimiter;
  private readonly cache: PhraseCache;
  /** Records of agent ids outside the dense range. */
  private readonly agents = new Map<number, AgentSpeech>();
  /** Records of dense agent ids, indexed by id: one load where a map look-up takes several. */
  private readonly denseAgents: Array<AgentSpeech | undefined> = [];
  /** Per dense agent id, the KNOWN / IN_COMBAT / ATTENTION bits; grown on demand. */
  private flags = new Uint8Array(1024);
  /** Characters ticked or heard since the start or their forget(): status().agents. */
  private known = 0;
  private counters: DialogueCounters = zeroCounters();
  private unavailableUntil = 0;
  private seq = 0;
  private readonly idPrefix: string;
  private readonly audioFiles: string[] = [];
  private readonly lines: LineSource | null;
  private readonly voiceOut: Synthesizer | null;
  private readonly voiceIn: Transcriber | null;
  private readonly audioDir: string | null;
  private readonly audioUrlPrefix: string;
  private readonly maxAudioFiles: number;
  private readonly rangeM: number;
  private readonly maxChars: number;
  private readonly lineTtlS: number;
  private readonly greetAgainS: number;
  private readonly unavailableMs: number;
  private readonly ttsUsdPerMChar: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly logger: Logger;
  private readonly onClose: (() => Promise<void>) | undefined;
  private tickErrorLogged = false;

  constructor(options: DialogueTierOptions) {
    this.bundle = options.bundle;
    this.profile = ECONOMY_PROFILES[options.bundle.speech.limits.economy];
    this.lines = options.lines;
    this.voiceOut = options.voiceOut ?? null;
    this.voiceIn = options.voiceIn ?? null;
    this.audioDir = options.audioDir ?? null;
    if ((this.voiceOut || this.voiceIn) && !this.audioDir) throw new Error('DialogueTier: audioDir is required when voiceOut or voiceIn is given');
    this.audioUrlPrefix = (options.audioUrlPrefix ?? '/audio').replace(/\/+$/, '');
    this.maxAudioFiles = options.maxAudioFiles ?? 512;
    this.rangeM = options.rangeM ?? 20;
    this.maxChars = options.maxChars ?? 120;
    this.lineTtlS = options.lineTtlS ?? 30;
    this.greetAgainS = options.greetAgainS ?? 600;
    this.unavailableMs = options.unavailableMs ?? 5000;
    this.ttsUsdPerMChar = options.ttsUsdPerMChar ?? 0;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? seededRandom(options.bundle.flavor.seed ^ 0x5eed);
    this.logger = options.logger ?? silentLogger;
    this.onClose = options.onClose;
    const positive = { rangeM: this.rangeM, maxChars: this.maxChars, lineTtlS: this.lineTtlS, greetAgainS: this.greetAgainS, unavailableMs: this.unavailableMs, maxAudioFiles: this.maxAudioFiles };
    for (const [key, value] of Object.entries(positive)) {
      if (!(Number.isFinite(value) && value > 0)) throw new Error(`DialogueTier option ${key} must be a positive number, got ${value}`);
    }
    if (!(this.ttsUsdPerMChar >= 0)) throw new Error(`DialogueTier option ttsUsdPerMChar must be 0 or more, got ${this.ttsUsdPerMChar}`);
    this.limiter = new SpeechLimiter(options.bundle.speech.limits);
    this.cache = new PhraseCache(options.bundle.speech.phrase_cache, this.random);
    this.idPrefix = Math.floor(this.random() * 36 ** 4).toString(36).padStart(4, '0');
  }

  /** Applies a new bundle (limits, economy, cache settings, policy) from the next tick on. */
  setBundle(bundle: DialogueBundle): void {
    this.bundle = bundle;
    this.profile = ECONOMY_PROFILES[bundle.speech.limits.economy];
    this.limiter.setLimits(bundle.speech.limits);
    this.cache.configure(bundle.speech.phrase_cache);
  }

  private on(key: PolicyKey): boolean {
    return this.bundle.policy[key] !== false;
  }

  /** Whether characters may speak at all: a model configured, policy.llm_dialogue on, economy not Silent. */
  get enabled(): boolean {
    return this.lines !== null && this.on('llm_dialogue') && this.profile.speaks;
  }

  /** Whether the model is currently asked; false while it backs off after failures. */
  modelAvailable(): boolean {
    return this.lines !== null && this.now() >= this.unavailableUntil;
  }

  status(): { enabled: boolean; modelAvailable: boolean; retryInMs: number; cachedLines: number; agents: number } {
    return {
      enabled: this.enabled,
      modelAvailable: this.modelAvailable(),
      retryInMs: Math.max(0, this.unavailableUntil - this.now()),
      cachedLines: this.cache.lines,
      agents: this.known,
    };
  }

  /**
   * Called once per tick per agent, on the tick path: cheap, synchronous, never throws.
   * Returns a Say intent for this agent when one is ready, else null.
   */
  onTick(agentId: number, timeS: number, context: DialogueContext): SayIntent | null {
    try {
      if (!isDense(agentId)) return this.tick(this.record(agentId, false), timeS, context);
      // A quiet tick changes nothing and says nothing: no record is read for it.
      const f = this.know(agentId);
      if ((f & ATTENTION) === 0 && (f & IN_COMBAT) === ((context.combat ?? null) !== null ? IN_COMBAT : 0) && this.quiet(context)) return null;
      const st = this.record(agentId, true);
      try {
        return this.tick(st, timeS, context);
      } finally {
        this.flags[agentId] = flagsOf(st);
      }
    } catch (err) {
      if (!this.tickErrorLogged) {
        this.tickErrorLogged = true;
        this.logger.error('dialogue tier failed on a tick; the character stays silent', { agent: agentId, error: err instanceof Error ? err.message : String(err) });
      }
      return null;
    }
  }

  /**
   * Whether this tick can neither start nor deliver a line nor change a character whose
   * record holds nothing to deliver or answer and whose fight-or-flight state is the same as
   * on its previous tick: nothing heard, no event, no player in range. The full path would
   * return null for it without changing anything.
   */
  private quiet(ctx: DialogueContext): boolean {
    if (ctx.event !== null || ctx.heard.length > 0) return false;
    const players = ctx.players;
    for (let i = 0; i < players.length; i++) if (players[i]!.distance_m <= this.rangeM) return false;
    return true;
  }

  /** The flags of a dense agent id, marking it known (and counted) on first sight. */
  private know(agentId: number): number {
    let flags = this.flags;
    if (agentId >= flags.length) {
      let size = flags.length;
      while (size <= agentId) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(flags);
      this.flags = flags = grown;
    }
    const f = flags[agentId]!;
    if ((f & KNOWN) !== 0) return f;
    this.known++;
    flags[agentId] = f | KNOWN;
    return f | KNOWN;
  }

  private record(agentId: number, dense: boolean): AgentSpeech {
    if (dense) {
      let st = this.denseAgents[agentId];
      if (st === undefined) {
        this.denseAgents[agentId] = st = new AgentSpeech(agentId);
        this.know(agentId);
      }
      return st;
    }
    let st = this.agents.get(agentId);
    if (st === undefined) {
      this.agents.set(agentId, (st = new AgentSpeech(agentId)));
      this.known++;
    }
    return st;
  }

  /** A record changed outside a tick (a line became ready, voice-in text arrived): its next tick takes the full path. */
  private attend(st: AgentSpeech): void {
    if (isDense(st.id) && this.denseAgents[st.id] === st) this.flags[st.id]! |= ATTENTION;
  }

  private tick(st: AgentSpeech, timeS: number, ctx: DialogueContext): SayIntent | null {
    let event = ctx.event;
    const combat = ctx.combat ?? null;
    if (combat !== null) {
      if (!st.inCombat) {
        st.inCombat = true;
        if (event === null) event = combat;
      }
    } else if (st.inCombat) st.inCombat = false;
    const heard = ctx.heard;
    if (heard.length > 0 || st.voice !== null) this.takeHeard(st, timeS, heard);
    if (!this.enabled) {
      st.owed = null;
      st.ready = null;
      return null;
    }
    if (st.ready !== null) {
      const say = st.ready;
      st.ready = null;
      const age = timeS - st.readyAskedAt;
      if (age < 0 || age > this.lineTtlS || !this.limiter.allowsIn(st.windows, timeS)) this.counters.dropped++;
      else return this.emit(st, timeS, say);
    }
    if (st.pending) return null;
    const kind = this.situation(st, timeS, ctx.players, event);
    if (kind === null || !this.limiter.allowsIn(st.windows, timeS)) return null;
    return this.begin(st, timeS, ctx, kind, event);
  }

  private emit(st: AgentSpeech, timeS: number, say: SayIntent): SayIntent {
    this.limiter.recordIn((st.windows ??= new SpeechWindows()), timeS);
    this.counters.spoke++;
    st.lastText = say.text;
    return say;
  }

  private takeHeard(st: AgentSpeech, timeS: number, heard: readonly HeardLine[]): void {
    const since = st.heardAt;
    for (let i = 0; i < heard.length; i++) {
      const h = heard[i]!;
      if (!(h.at_s > since)) continue;
      if (h.at_s > st.heardAt) st.heardAt = h.at_s;
      this.counters.heard++;
      // Copied: the caller may reuse its heard objects on the next tick.
      this.owe(st, h.name === undefined ? { from: h.from, text: h.text, at_s: h.at_s } : { from: h.from, name: h.name, text: h.text, at_s: h.at_s });
    }
    const voice = st.voice;
    if (voice !== null) {
      st.voice = null;
      for (const text of voice) {
        this.counters.heard++;
        this.owe(st, { from: -1, text, at_s: timeS });
      }
    }
  }

  private owe(st: AgentSpeech, h: HeardLine): void {
    const owed = (st.owed ??= []);
    if (owed.length >= MAX_OWED) owed.shift();
    owed.push(h);
  }

  /** What, if anything, warrants a line now. */
  private situation(st: AgentSpeech, timeS: number, players: readonly NearbyPlayer[], event: NotableEvent | null): SituationKind | null {
    const owed = st.owed;
    if (owed !== null) {
      // Speech heard long ago and never answered is stale: answering it now would be odd.
      if (timeS - owed[owed.length - 1]!.at_s <= this.lineTtlS) return 'reply';
      st.owed = null;
    }
    if (event) return 'event';
    let near = false;
    let newcomer = false;
    for (let i = 0; i < players.length; i++) {
      const p = players[i]!;
      if (!(p.distance_m <= this.rangeM)) continue;
      near = true;
      const seen = (st.seen ??= new Map());
      const last = seen.get(p.id);
      if (last === undefined) {
        newcomer = true;
        seen.set(p.id, { at: timeS });
      } else {
        if (timeS - last.at > this.greetAgainS) newcomer = true;
        last.at = timeS;
      }
    }
    if (!near || timeS - st.lastVolunteerAt < this.profile.volunteerIntervalS) return null;
    return newcomer ? 'greet' : 'idle';
  }

  /**
   * The tick path while the model is backing off (a full queue, an outage) is the common case
   * under load: every character owed a line lands here on every tick. Only the phrase cache
   * can answer then, so these checks come first and cost no allocation: an empty cache, or
   * the same signature already found unusable with the cache unchanged since, ends it.
   */
  private begin(st: AgentSpeech, timeS: number, ctx: DialogueContext, kind: SituationKind, event: NotableEvent | null): SayIntent | null {
    const modelUp = this.modelAvailable();
    const cacheOn = this.on('phrase_cache');
    if (!modelUp && (!cacheOn || this.cache.lines === 0)) return null;
    const persona = ctx.persona;
    const signature = this.signature(st, persona, kind, event?.kind ?? '');
    if (!modelUp && st.unusableAt === this.cache.changes && st.unusableSig === signature) return null;
    const preference = this.profile.cachePreference * (kind === 'reply' ? 0.5 : 1);
    let cached: string | null = null;
    if (cacheOn && this.cache.prefers(signature, preference, modelUp)) cached = this.cache.take(signature, st.lastText);
    if (cached === null && !modelUp) {
      st.unusableSig = signature;
      st.unusableAt = this.cache.changes;
      return null;
    }
    let heard: HeardLine[] = NO_LINES;
    if (kind === 'reply') {
      heard = st.owed!;
      st.owed = null;
    }
    if (kind === 'greet' || kind === 'idle') st.lastVolunteerAt = timeS;
    if (cached !== null) {
      this.counters.cacheHits++;
      if (!this.voiceOn()) return this.emit(st, timeS, this.say(cached));
      st.pending = true;
      this.voice(st, cached, timeS, persona);
      return null;
    }
    st.pending = true;
    const params = this.params(ctx, kind, heard, event);
    const names = playerNames(ctx.players, heard);
    this.counters.llmRequests++;
    attempt(() => this.lines!.line(params)).then(
      (result) => {
        this.counters.llmPromptTokens += result.usage.prompt_tokens;
        this.counters.llmCompletionTokens += result.usage.completion_tokens;
        this.counters.llmTokens += result.usage.prompt_tokens + result.usage.completion_tokens;
        this.counters.spendUsd += result.cost_usd;
        this.counters.llmUsd += result.cost_usd;
        if (!result.text) {
          st.pending = false;
          return;
        }
        if (this.on('phrase_cache')) this.cache.add(signature, result.text, names);
        this.voice(st, result.text, timeS, params.character);
      },
      (err: unknown) => {
        st.pending = false;
        this.counters.llmErrors++;
        const e = err instanceof PluginRequestError ? err : null;
        if (e?.code === 'bad_request') return;
        // A full queue is our own congestion, not the model's: a short pause is enough.
        const wait = e?.retryAfterMs ?? (e?.code === 'queue_full' ? 1000 : this.unavailableMs);
        this.unavailableUntil = Math.max(this.unavailableUntil, this.now() + Math.max(wait, 100));
        this.logger.warn('dialogue model unavailable; characters stay silent until it recovers', { code: e?.code ?? 'internal', message: err instanceof Error ? err.message : String(err), retryInMs: wait });
      },
    );
    return null;
  }

  /** situationSignature, rebuilt only when one of its parts changed since this agent's last one. */
  private signature(st: AgentSpeech, p: Persona, kind: SituationKind, eventKind: string): string {
    const e = p.emotion;
    const level = emotionLevel(e);
    const emotion = e ? e.name : '';
    if (st.sigLevel !== level || st.sigKind !== kind || st.sigRole !== p.role || st.sigGoal !== p.goal || st.sigEvent !== eventKind || st.sigEmotion !== emotion) {
      st.sig = situationSignature(p.role, p.goal, kind, eventKind, e);
      st.sigLevel = level;
      st.sigKind = kind;
      st.sigRole = p.role;
      st.sigGoal = p.goal;
      st.sigEvent = eventKind;
      st.sigEmotion = emotion;
    }
    return st.sig;
  }

  private voiceOn(): boolean {
    return this.voiceOut !== null && this.on('voice_out');
  }

  private say(text: string, audioUrl?: string): SayIntent {
    const line_id = `l_${this.idPrefix}${(++this.seq).toString(36)}`;
    return audioUrl === undefined ? { kind: 'Say', text, channel: 'proximity', line_id } : { kind: 'Say', text, channel: 'proximity', line_id, audio_url: audioUrl };
  }

  /** Makes the line ready for the next tick, with synthesised audio when voice out is on. */
  private voice(st: AgentSpeech, text: string, askedAt: number, who: Pick<Persona, 'name' | 'traits'>): void {
    const ready = (say: SayIntent): void => {
      st.ready = say;
      st.readyAskedAt = askedAt;
      st.pending = false;
      this.attend(st);
    };
    if (!this.voiceOn()) return ready(this.say(text));
    const plain = this.say(text);
    const file = `${plain.line_id}.wav`;
    const voice = voiceFor(who.name, who.traits);
    attempt(() => this.voiceOut!.synthesize({ text, file, dir: this.audioDir!, voice })).then(
      (r) => {
        this.counters.ttsCharacters += r.characters;
        const ttsUsd = (r.characters * this.ttsUsdPerMChar) / 1e6;
        this.counters.spendUsd += ttsUsd;
        this.counters.ttsUsd += ttsUsd;
        this.keepAudio(r.file);
        ready({ ...plain, audio_url: `${this.audioUrlPrefix}/${r.file}` });
      },
      (err: unknown) => {
        this.logger.warn('speech synthesis failed; the line goes out without audio', { error: err instanceof Error ? err.message : String(err) });
        ready(plain);
      },
    );
  }

  private keepAudio(file: string): void {
    this.audioFiles.push(file);
    while (this.audioFiles.length > this.maxAudioFiles) {
      const old = this.audioFiles.shift()!;
      unlink(join(this.audioDir!, old)).catch(() => {});
    }
  }

  private params(ctx: DialogueContext, kind: SituationKind, heard: readonly HeardLine[], event: NotableEvent | null): LineParams {
    const p = ctx.persona;
    const flavorOn = this.on('flavor') && this.bundle.flavor.enabled;
    const traits: Record<string, number> = {};
    for (const [k, v] of Object.entries(p.traits)) if (typeof v === 'number') traits[k] = v;
    const near = ctx.players.filter((pl) => pl.distance_m <= this.rangeM * 3).sort((a, b) => a.distance_m - b.distance_m).slice(0, MAX_NAMED_PLAYERS);
    const emotion = p.emotion ? `${p.emotion.intensity >= 0.67 ? 'very ' : p.emotion.intensity < 0.34 ? 'a little ' : ''}${p.emotion.name}` : '';
    return {
      game: this.bundle.game ? { ...this.bundle.game } : null,
      character: { name: p.name, role: p.role, traits, themes: flavorOn ? [...p.themes] : [], goal: p.goal, emotion },
      flavor: flavorOn ? this.bundle.flavor.global : '',
      memory: this.on('memory') ? p.memory : '',
      situation: {
        kind,
        doing: ctx.doing,
        players: near.map((pl) => ({ name: pl.name, distance_m: pl.distance_m })),
        heard: heard.map((h) => ({ from: h.name ?? (h.from >= 0 ? nameOf(ctx.players, h.from) : 'someone'), text: h.text })),
        event: event ? `${event.kind}${event.detail ? `: ${event.detail}` : ''}` : '',
      },
      max_chars: this.maxChars,
    };
  }

  /** Voice-in: a transcript becomes this agent's heard speech on its next tick. */
  hear(agentId: number, text: string): void {
    const t = text.trim();
    if (!t) return;
    const st = this.record(agentId, isDense(agentId));
    const voice = (st.voice ??= []);
    if (voice.length >= MAX_VOICE_QUEUE) voice.shift();
    voice.push(t);
    this.attend(st);
  }

  get audioDirectory(): string | null {
    return this.audioDir;
  }

  get audioPrefix(): string {
    return this.audioUrlPrefix;
  }

  /** Whether POST /voice/:agent can be served (a transcriber, an audio dir and policy.voice_in on). */
  voiceInAvailable(): boolean {
    return this.voiceIn !== null && this.audioDir !== null && this.on('voice_in');
  }

  /**
   * Transcribes one voice clip (already checked for type and size) and queues the text as the
   * agent's heard speech. Resolves when done; the HTTP route does not wait for it.
   */
  async transcribe(agentId: number, audio: Buffer, mime: string): Promise<void> {
    if (!this.voiceInAvailable()) throw new Error('voice input is not available');
    const dir = join(this.audioDir!, 'incoming');
    await mkdir(dir, { recursive: true });
    const path = join(dir, `v_${this.idPrefix}${(++this.seq).toString(36)}.${AUDIO_EXT[mime] ?? 'bin'}`);
    await writeFile(path, audio);
    const params: TranscribeParams = { path, mime };
    try {
      const { text } = await this.voiceIn!.transcribe(params);
      this.counters.transcriptions++;
      this.hear(agentId, text);
    } finally {
      unlink(path).catch(() => {});
    }
  }

  /** Counters since the last call, then zeroed. */
  drainCounters(): DialogueCounters {
    const c = this.counters;
    this.counters = zeroCounters();
    return c;
  }

  /** Drops an agent's speech state (it logged off or despawned). */
  forget(agentId: number): void {
    if (!isDense(agentId)) {
      if (this.agents.delete(agentId)) this.known--;
      return;
    }
    if (agentId < this.denseAgents.length) this.denseAgents[agentId] = undefined;
    if (agentId < this.flags.length && (this.flags[agentId]! & KNOWN) !== 0) {
      this.known--;
      this.flags[agentId] = 0;
    }
  }

  async close(): Promise<void> {
    await this.onClose?.();
  }
}

/** A call's promise, with a synchronous throw turned into a rejection so the agent's slot is always freed. */
function attempt<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (err) {
    return Promise.reject(err);
  }
}

function nameOf(players: readonly NearbyPlayer[], id: number): string {
  for (const p of players) if (p.id === id) return p.name;
  return `#${id}`;
}

function playerNames(players: readonly NearbyPlayer[], heard: readonly HeardLine[]): string[] {
  const names: string[] = [];
  for (const p of players) if (p.name) names.push(p.name);
  for (const h of heard) if (h.name) names.push(h.name);
  return names;
}
