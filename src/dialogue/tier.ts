import type { ConfigBundle, PolicyKey } from '../../brain/types.js';
import type { TranscribeParams } from '../../plugins/protocol.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { AgentSpeech, ATTENTION, flagsOf, IN_COMBAT, isDense, KNOWN, RECENT } from './agent-speech.js';
import { ModelBackoff } from './backoff.js';
import {
  zeroCounters,
  type DialogueContext,
  type DialogueCounters,
  type HeardLine,
  type LineSource,
  type NotableEvent,
  type Persona,
  type SayIntent,
  type SituationKind,
  type Synthesizer,
  type Transcriber,
} from './context.js';
import { ECONOMY_PROFILES, type EconomyProfile } from './economy.js';
import { SpeechLimiter, SpeechWindows } from './limits.js';
import { PhraseCache } from './phrase-cache.js';
import { lineParams, playerNames, situationOf, type SituationRules } from './situation.js';
import { voiceFor } from './voice.js';
import { MAX_VOICE_CLIPS, VoiceFiles } from './voice-files.js';
import { seededRandom } from '../random.js';

/** The parts of a bundle the dialogue tier reads. */
export type DialogueBundle = Pick<ConfigBundle, 'policy' | 'game' | 'flavor' | 'speech'>;

/** Where a tier's lines come from, as the sidecar reports it (the dashboard says so beside the dialogue switch). */
export interface LinesFrom {
  source: 'model' | 'demo' | 'none';
  /** The model's name (SERVICE_LLM_MODEL), when known. */
  model?: string;
}

export interface DialogueTierOptions {
  bundle: DialogueBundle;
  /** The dialogue plugin (or a fake); null when no model is configured: characters stay silent. */
  lines: LineSource | null;
  /** What `lines` is; default `model` when there are lines, else `none`. */
  linesFrom?: LinesFrom;
  voiceOut?: Synthesizer | null;
  voiceIn?: Transcriber | null;
  /** Where synthesised WAV files and incoming voice clips go; needed for voice in and out. */
  audioDir?: string;
  /** URL path the sidecar serves audioDir under (see mountVoiceRoutes). Default "/audio". */
  audioUrlPrefix?: string;
  /** Synthesised files kept before the oldest are deleted. Default 512. */
  maxAudioFiles?: number;
  /** Characters whose speech state is kept; beyond it those not ticked for longest lose it. Default MAX_SPEECH_AGENTS. */
  maxAgents?: number;
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
 * Characters whose speech state (lines owed, limits' windows, players met) the tier keeps.
 * Agent ids are the mod's to choose and the brain forgets an agent it evicts, so without a
 * bound a stream of new ids would grow this state for as long as the process lives.
 */
export const MAX_SPEECH_AGENTS = 50_000;

/** No heard lines to answer; never written to. */
const NO_LINES: HeardLine[] = [];

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
  /** AgentSpeech records held, dense and not. */
  private records = 0;
  private readonly maxAgents: number;
  private counters: DialogueCounters = zeroCounters();
  private readonly backoff: ModelBackoff;
  private readonly rules: SituationRules;
  private seq = 0;
  private readonly idPrefix: string;
  /** Synthesised and incoming audio; null without an audio directory. */
  private readonly files: VoiceFiles | null;
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
  /** Voice clips between their acceptance and the end of their transcription. */
  private clips = 0;

  /** Where this tier's lines come from (see DialogueTierOptions.linesFrom). */
  readonly linesFrom: LinesFrom;

  constructor(options: DialogueTierOptions) {
    this.bundle = options.bundle;
    this.linesFrom = options.linesFrom ?? { source: options.lines ? 'model' : 'none' };
    this.profile = ECONOMY_PROFILES[options.bundle.speech.limits.economy];
    this.lines = options.lines;
    this.voiceOut = options.voiceOut ?? null;
    this.voiceIn = options.voiceIn ?? null;
    this.audioDir = options.audioDir ?? null;
    if ((this.voiceOut || this.voiceIn) && !this.audioDir) throw new Error('DialogueTier: audioDir is required when voiceOut or voiceIn is given');
    this.audioUrlPrefix = (options.audioUrlPrefix ?? '/audio').replace(/\/+$/, '');
    this.maxAudioFiles = options.maxAudioFiles ?? 512;
    this.maxAgents = options.maxAgents ?? MAX_SPEECH_AGENTS;
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
    const positive = {
      rangeM: this.rangeM,
      maxChars: this.maxChars,
      lineTtlS: this.lineTtlS,
      greetAgainS: this.greetAgainS,
      unavailableMs: this.unavailableMs,
      maxAudioFiles: this.maxAudioFiles,
      maxAgents: this.maxAgents,
    };
    for (const [key, value] of Object.entries(positive)) {
      if (!(Number.isFinite(value) && value > 0)) throw new Error(`DialogueTier option ${key} must be a positive number, got ${value}`);
    }
    if (!(this.ttsUsdPerMChar >= 0)) throw new Error(`DialogueTier option ttsUsdPerMChar must be 0 or more, got ${this.ttsUsdPerMChar}`);
    this.backoff = new ModelBackoff(this.now, this.unavailableMs);
    this.rules = { rangeM: this.rangeM, lineTtlS: this.lineTtlS, greetAgainS: this.greetAgainS, volunteerIntervalS: this.profile.volunteerIntervalS };
    this.files = this.audioDir === null ? null : new VoiceFiles(this.audioDir, this.maxAudioFiles);
    this.limiter = new SpeechLimiter(options.bundle.speech.limits);
    this.cache = new PhraseCache(options.bundle.speech.phrase_cache, this.random);
    this.idPrefix = Math.floor(this.random() * 36 ** 4)
      .toString(36)
      .padStart(4, '0');
  }

  /** Applies a new bundle (limits, economy, cache settings, policy) from the next tick on. */
  setBundle(bundle: DialogueBundle): void {
    this.bundle = bundle;
    this.profile = ECONOMY_PROFILES[bundle.speech.limits.economy];
    this.rules.volunteerIntervalS = this.profile.volunteerIntervalS;
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
    return this.lines !== null && this.backoff.available();
  }

  status(): { enabled: boolean; modelAvailable: boolean; retryInMs: number; cachedLines: number; agents: number } {
    return {
      enabled: this.enabled,
      modelAvailable: this.modelAvailable(),
      retryInMs: this.backoff.retryInMs(),
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
      if ((f & ATTENTION) === 0 && (f & IN_COMBAT) === ((context.combat ?? null) !== null ? IN_COMBAT : 0) && this.quiet(context)) {
        if ((f & RECENT) === 0) this.flags[agentId] = f | RECENT;
        return null;
      }
      const st = this.record(agentId, true);
      try {
        return this.tick(st, timeS, context);
      } finally {
        this.flags[agentId] = flagsOf(st) | RECENT;
      }
    } catch (err) {
      if (!this.tickErrorLogged) {
        this.tickErrorLogged = true;
        this.logger.error('dialogue tier failed on a tick; the character stays silent', {
          agent: agentId,
          error: err instanceof Error ? err.message : String(err),
        });
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
        if (this.records >= this.maxAgents) this.evict();
        this.denseAgents[agentId] = st = new AgentSpeech(agentId);
        this.records++;
        this.know(agentId);
      }
      return st;
    }
    let st = this.agents.get(agentId);
    if (st === undefined) {
      if (this.records >= this.maxAgents) this.evict();
      this.agents.set(agentId, (st = new AgentSpeech(agentId)));
      this.records++;
      this.known++;
    } else st.recent = true;
    return st;
  }

  /**
   * Makes room for new records (a second-chance sweep, run once per quarter of maxAgents new
   * characters): forgets every character not ticked since the previous sweep and clears the
   * mark of the others; if that leaves more than three quarters, forgets more, lowest ids
   * first. A line still being made for a forgotten character is dropped when it arrives.
   */
  private evict(): void {
    const keep = this.maxAgents - (this.maxAgents >> 2);
    for (const [id, st] of this.agents) {
      if (st.recent) st.recent = false;
      else this.forget(id);
    }
    const flags = this.flags;
    const dense = this.denseAgents;
    const n = Math.min(flags.length, dense.length);
    for (let id = 0; id < n; id++) {
      const f = flags[id]!;
      if ((f & KNOWN) === 0 || dense[id] === undefined) continue;
      if ((f & RECENT) !== 0) flags[id] = f & ~RECENT;
      else this.forget(id);
    }
    for (const id of this.agents.keys()) {
      if (this.records <= keep) return;
      this.forget(id);
    }
    for (let id = 0; id < n && this.records > keep; id++) if (dense[id] !== undefined) this.forget(id);
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
    if (heard.length > 0 || st.voice !== null) this.counters.heard += st.takeHeard(timeS, heard, ctx.players);
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
    const kind = situationOf(st, timeS, ctx.players, event, this.rules);
    if (kind === null || !this.limiter.allowsIn(st.windows, timeS)) return null;
    return this.begin(st, timeS, ctx, kind, event);
  }

  private emit(st: AgentSpeech, timeS: number, say: SayIntent): SayIntent {
    this.limiter.recordIn((st.windows ??= new SpeechWindows()), timeS);
    this.counters.spoke++;
    st.lastText = say.text;
    return say;
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
    const signature = st.signature(persona, kind, event?.kind ?? '');
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
    const params = lineParams(this.bundle, ctx, kind, heard, event, this.rangeM, this.maxChars);
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
        const failure = this.backoff.failed(err);
        if (failure.kind === 'refused') return;
        this.logger.warn('dialogue model unavailable; characters stay silent until it recovers', {
          code: failure.code,
          message: err instanceof Error ? err.message : String(err),
          retryInMs: failure.waitMs,
        });
      },
    );
    return null;
  }

  private voiceOn(): boolean {
    return this.voiceOut !== null && this.on('voice_out');
  }

  private say(text: string, audioUrl?: string): SayIntent {
    const line_id = `l_${this.idPrefix}${(++this.seq).toString(36)}`;
    return audioUrl === undefined
      ? { kind: 'Say', text, channel: 'proximity', line_id }
      : { kind: 'Say', text, channel: 'proximity', line_id, audio_url: audioUrl };
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
        this.files!.keep(r.file);
        ready({ ...plain, audio_url: `${this.audioUrlPrefix}/${r.file}` });
      },
      (err: unknown) => {
        this.logger.warn('speech synthesis failed; the line goes out without audio', { error: err instanceof Error ? err.message : String(err) });
        ready(plain);
      },
    );
  }

  /** Voice-in: a transcript becomes this agent's heard speech on its next tick. */
  hear(agentId: number, text: string): void {
    const t = text.trim();
    if (!t) return;
    const st = this.record(agentId, isDense(agentId));
    st.queueVoice(t);
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
    this.clips++;
    try {
      const path = await this.files!.writeIncoming(`v_${this.idPrefix}${(++this.seq).toString(36)}`, audio, mime);
      const params: TranscribeParams = { path, mime };
      try {
        const { text } = await this.voiceIn!.transcribe(params);
        this.counters.transcriptions++;
        this.hear(agentId, text);
      } finally {
        this.files!.dropIncoming(path);
      }
    } finally {
      this.clips--;
    }
  }

  /** Whether MAX_VOICE_CLIPS clips are being written or transcribed: POST /voice answers 503. */
  voiceInBusy(): boolean {
    return this.clips >= MAX_VOICE_CLIPS;
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
      if (this.agents.delete(agentId)) {
        this.known--;
        this.records--;
      }
      return;
    }
    if (this.denseAgents[agentId] !== undefined) {
      // Deleted, not set to undefined: the array is sparse, and a slot kept per id ever seen would grow with them.
      Reflect.deleteProperty(this.denseAgents, agentId);
      this.records--;
    }
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
