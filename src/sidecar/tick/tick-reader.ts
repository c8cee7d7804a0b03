import { isUtf8 } from 'node:buffer';
import {
  HEARD_FIELDS,
  POI_FIELDS,
  PROFILE_FIELDS,
  SELF_STATE_FIELDS,
  SNAPSHOT_FIELDS,
  TARGET_FIELDS,
  TICK_LIMITS,
  TICK_REQUEST_FIELDS,
  TRAIT_FIELDS,
  VEC3_KEYS,
  type AgentId,
  type Fields,
  type HeardSpeech,
  type IntegerSpec,
  type NumberSpec,
  type PointOfInterest,
  type Profile,
  type Role,
  type SelfState,
  type Snapshot,
  type Target,
  type TargetKind,
  type TickRequest,
  type Traits,
  type Vec3,
} from '../../../brain/index.js';

/**
 * The shape of a /tick request, read from an encoded body straight into
 * the TickRequest the brain takes, validating while it reads: no decode of the whole body
 * into a generic tree and no second walk over it. JSON.parse or the MessagePack decoder alone
 * cost more than the brain's whole tick. Subclasses supply the encoding's tokens; this class
 * knows the fields and builds each object in the key order parseTickRequest gives it. The key
 * tables, ranges and caps come from the tick schema (brain/tick-schema.ts), built once at
 * load; a key the schema knows but no `case` below reads makes the reader bail, so a new
 * field is never dropped silently (and the schema guard test fails until it is read here).
 *
 * It is a fast path only. Whenever a body is anything but a well-formed, valid tick (a syntax
 * error, an escaped key, a value out of range, a list over its cap, nesting it does not
 * expect, a field missing), reading throws BAIL and the caller takes the exact path (the
 * generic decoder, then parseTickRequest), which decides the status and names the field. So
 * whatever a reader accepts equals the exact path's result field for field, in the same key
 * order; the tests hold both readers to that on generated, edge-case and mutated bodies.
 *
 * A reader is made per body: a cursor in its fields measured twice as fast as module-level
 * state (every access to a module `let` is a context load with a hole check).
 */

/** Thrown to leave the fast path; never escapes readOrNull. */
const BAIL = { bail: true } as const;

export function bail(): never {
  throw BAIL;
}

const MAX_COORDINATE = TICK_LIMITS.maxCoordinate;

/** A position within the world's bound (false for NaN); one past it is the exact path's to refuse. */
export function inWorld(x: number, y: number, z: number): boolean {
  return x <= MAX_COORDINATE && x >= -MAX_COORDINATE && y <= MAX_COORDINATE && y >= -MAX_COORDINATE && z <= MAX_COORDINATE && z >= -MAX_COORDINATE;
}

/** The request `reader` finds in its body, or null when only the exact path can answer for it. */
export function readOrNull(reader: TickReader): TickRequest | null {
  try {
    return reader.read();
  } catch (err) {
    if (err === BAIL) return null;
    throw err;
  }
}

/**
 * The requests of a batch body (an array of tick requests) read where they stand, in one
 * pass; null when only the exact path can answer for the body (a bad element, a malformed
 * array, more than `max` elements).
 */
export function readBatchOrNull(reader: TickReader, max: number): TickRequest[] | null {
  try {
    return reader.readBatch(max);
  } catch (err) {
    if (err === BAIL) return null;
    throw err;
  }
}

/** The body as a Buffer (for its string decoders), without a copy. */
export function asBuffer(body: Uint8Array): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * Bytes the readers match against body bytes: the bytes, and the same as little-endian
 * 32-bit words, so that a match compares four bytes at a time (the last word ends at the
 * end, overlapping the one before). Comparing byte by byte measured 15% of reading a tick.
 */
export class Spelling {
  readonly length: number;
  readonly bytes: Buffer;
  /** The first and the last four bytes (0 below four bytes): all of a spelling up to eight bytes. */
  readonly head: number;
  readonly tail: number;
  /** Beyond eight bytes, the words in between, at byte offsets 4, 8, …. */
  readonly middle: number[] = [];

  constructor(text: string) {
    this.bytes = Buffer.from(text, 'latin1');
    this.length = this.bytes.length;
    this.head = this.length < 4 ? 0 : this.bytes.readUInt32LE(0);
    this.tail = this.length < 4 ? 0 : this.bytes.readUInt32LE(this.length - 4);
    for (let at = 4; at < this.length - 4; at += 4) this.middle.push(this.bytes.readUInt32LE(at));
  }
}

/**
 * A key or enum value, with the spellings compact JSON gives it: a key quoted and followed by
 * its colon, a value quoted. The JSON reader matches those first, one comparison that takes
 * the key and its colon (or the whole string) at once.
 */
export class Name extends Spelling {
  readonly jsonKey: Spelling;
  readonly jsonString: Spelling;

  constructor(text: string) {
    super(text);
    this.jsonKey = new Spelling(`"${text}":`);
    this.jsonString = new Spelling(`"${text}"`);
  }
}

function names(list: readonly string[]): Name[] {
  return list.map((s) => new Name(s));
}

/** The keys of an object a reader matches, in the schema's order, and the order a client last wrote them in. */
export interface Keys {
  readonly names: readonly Name[];
  /**
   * At k + 1, the key that followed key k last time (at 0, the first key), tried first: a
   * client writes its keys in one order, and not always the schema's. Starts as the schema's order.
   */
  readonly follows: Int8Array;
}

export function keysOf(list: readonly string[]): Keys {
  const follows = new Int8Array(list.length + 1);
  for (let k = 0; k <= list.length; k++) follows[k] = k;
  return { names: names(list), follows };
}

/** A schema object's keys, and each key's index among them. */
interface KeyTable<F extends Fields> extends Keys {
  readonly at: { readonly [K in keyof F]: number };
}

function keyTable<F extends Fields>(fields: F): KeyTable<F> {
  const keys = Object.keys(fields);
  return { ...keysOf(keys), at: Object.fromEntries(keys.map((k, i) => [k, i])) as KeyTable<F>['at'] };
}

// One DataView per underlying ArrayBuffer, reused while bodies keep coming from the same one
// (a batch's shared buffer, uWS's receive buffer): a view per body is an allocation per tick.
let viewed: ArrayBufferLike | null = null;
let wholeView: DataView | null = null;

function viewOf(b: Buffer): DataView {
  if (b.buffer !== viewed) {
    viewed = b.buffer;
    wholeView = new DataView(b.buffer);
  }
  return wholeView!;
}

// The key tables, derived from the schema once at load. A reader's `case T.name:` ties each
// branch to its field by name, whatever the field's place in the schema.
const TOP_KEYS = keyTable(TICK_REQUEST_FIELDS);
const SNAPSHOT_KEYS = keyTable(SNAPSHOT_FIELDS);
const SELF_KEYS = keyTable(SELF_STATE_FIELDS);
const TARGET_KEYS = keyTable(TARGET_FIELDS);
const POI_KEYS = keyTable(POI_FIELDS);
const HEARD_KEYS = keyTable(HEARD_FIELDS);
const PROFILE_KEYS = keyTable(PROFILE_FIELDS);
const TRAIT_KEYS = keyTable(TRAIT_FIELDS);
const VEC_KEYS = keysOf(VEC3_KEYS);
const TOP = TOP_KEYS.at;
const SNAPSHOT = SNAPSHOT_KEYS.at;
const SELF = SELF_KEYS.at;
const TARGET = TARGET_KEYS.at;
const POI = POI_KEYS.at;
const HEARD = HEARD_KEYS.at;
const PROFILE = PROFILE_KEYS.at;
const TRAIT = TRAIT_KEYS.at;
const TARGET_KINDS = TARGET_FIELDS.kind.values;
const TARGET_KIND_NAMES = names(TARGET_KINDS);
const ROLES = PROFILE_FIELDS.role.values;
const ROLE_NAMES = names(ROLES);

/** ASCII strings up to this many bytes are looked up in the text cache before one is built. */
export const CACHED_TEXT_BYTES = 24;
/** Slots of the text cache, a power of two: at most this many strings are kept. */
export const TEXT_CACHE_SLOTS = 1024;

/**
 * Recent short ASCII strings by their bytes. Names, squad ids and the ids and kinds of
 * points of interest repeat from tick to tick: one found here is neither built again nor
 * held twice. A slot keeps the last string hashed to it, so a collision costs only a build.
 */
class TextCache {
  readonly bytes = new Uint8Array(TEXT_CACHE_SLOTS * CACHED_TEXT_BYTES);
  /** Each slot's length in bytes; 0 when empty (the empty string is never looked up). */
  readonly lengths = new Uint8Array(TEXT_CACHE_SLOTS);
  readonly strings: string[] = new Array<string>(TEXT_CACHE_SLOTS).fill('');
}

const TEXT_CACHE = new TextCache();

/** The text cache's hash of a string's bytes (FNV-1a), `byte` folded into the hash so far (0 before the first). */
export function textHash(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, 0x01000193);
}

/** What a `default:` of a reader's switch does: skips a key the tick does not know (-1), bails on one the schema knows but no case reads. */
const UNKNOWN = -1;

/** Skipped values nest at most this deep before the exact path is left to judge them. */
export const MAX_SKIP_DEPTH = 32;

export abstract class TickReader {
  /** The cursor, and the body's length. */
  protected i = 0;
  protected readonly n: number;
  /** The body's ArrayBuffer as a DataView, and where the body starts in it. */
  protected readonly view: DataView;
  protected readonly base: number;
  private readonly texts = TEXT_CACHE;

  constructor(protected readonly b: Buffer) {
    this.n = b.length;
    this.view = viewOf(b);
    this.base = b.byteOffset;
  }

  /** The whole body as one tick request; throws BAIL when only the exact path may answer. */
  read(): TickRequest {
    const request = this.top();
    this.end();
    return request;
  }

  /**
   * The whole body as an array of tick requests, each read where it stands (no pass to find
   * the elements first); throws BAIL when only the exact path may answer, and past `max`
   * elements (the caller then says why the body is refused).
   */
  readBatch(max: number): TickRequest[] {
    const out: TickRequest[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === max) bail();
      out.push(this.top());
    }
    this.end();
    return out;
  }

  /** Starts an object: 0 when it is empty, else how many members are left (1 when the encoding does not say). */
  protected abstract openObject(): number;
  /** After a member: how many are left (0 at the object's end). */
  protected abstract afterMember(left: number): number;
  /** Starts a list, as openObject. */
  protected abstract openList(): number;
  protected abstract afterItem(left: number): number;
  /**
   * A member's key: its index among `keys` (the one that followed `previous` last time tried
   * first, and learnt when another did), or -1 for a key the tick does not know.
   */
  protected abstract key(keys: Keys, previous: number): number;
  /** A finite number. */
  protected abstract number(): number;
  protected abstract boolean(): boolean;
  protected abstract string(maxLength: number): string;
  /** One of `choices`, returned as the constant string rather than a fresh copy. */
  protected abstract oneOf<T extends string>(names: readonly Name[], choices: readonly T[]): T;
  /** Any value, checked only as far as the exact path would refuse it. */
  protected abstract skip(depth: number): void;
  /** Nothing may follow the request. */
  protected abstract end(): void;

  /** Whether bytes [start, start + len) of the body spell `name`; the caller has checked that they are in the body. */
  protected spells(name: Spelling, start: number, len: number): boolean {
    if (name.length !== len) return false;
    if (len < 4) {
      const b = this.b;
      const bytes = name.bytes;
      for (let j = 0; j < len; j++) if (bytes[j] !== b[start + j]) return false;
      return true;
    }
    return this.wordsAt(name, start);
  }

  /**
   * Whether the body spells `s` from byte `start` on, four bytes at a time. False for a
   * spelling under four bytes, which only `spells` compares.
   */
  protected spelledAt(s: Spelling, start: number): boolean {
    return s.length >= 4 && start + s.length <= this.n && this.wordsAt(s, start);
  }

  /** Whether the words of `s` (four bytes or more) are the body's from byte `start` on; the caller has checked that they are in the body. */
  private wordsAt(s: Spelling, start: number): boolean {
    const view = this.view;
    const at = this.base + start;
    if (view.getUint32(at, true) !== s.head || view.getUint32(at + s.length - 4, true) !== s.tail) return false;
    const middle = s.middle;
    for (let j = 0; j < middle.length; j++) if (view.getUint32(at + 4 + 4 * j, true) !== middle[j]) return false;
    return true;
  }

  /** The constant of `choices` whose name is bytes [start, start + len) of the body. */
  protected choice<T extends string>(names: readonly Name[], choices: readonly T[], start: number, len: number): T {
    for (let k = 0; k < names.length; k++) if (this.spells(names[k]!, start, len)) return choices[k]!;
    return bail();
  }

  /** Bails unless bytes [start, end) are valid UTF-8 (the exact path refuses a body that is not). */
  protected utf8(start: number, end: number): void {
    if (!this.isAscii(start, end) && !isUtf8(this.b.subarray(start, end))) bail();
  }

  protected isAscii(start: number, end: number): boolean {
    const b = this.b;
    for (let k = start; k < end; k++) if (b[k]! >= 0x80) return false;
    return true;
  }

  /**
   * Bytes [start, end) as a string of at most maxLength characters. Valid UTF-8 decodes the
   * same everywhere; anything else is the exact path's to judge.
   */
  protected text(start: number, end: number, ascii: boolean, maxLength: number): string {
    const b = this.b;
    if (ascii) {
      if (end - start > maxLength) bail();
      return end - start <= CACHED_TEXT_BYTES ? this.cached(start, end) : b.toString('latin1', start, end);
    }
    if (!isUtf8(b.subarray(start, end))) bail();
    const s = b.toString('utf8', start, end);
    if (s.length > maxLength) bail();
    return s;
  }

  /** ASCII bytes [start, end), at most CACHED_TEXT_BYTES of them, as a string: the one in the text cache when it holds them. */
  private cached(start: number, end: number): string {
    const b = this.b;
    let hash = 0;
    for (let k = start; k < end; k++) hash = textHash(hash, b[k]!);
    return this.cachedAs(start, end, hash);
  }

  /** cached() for a caller that hashed the bytes with textHash() on its way over them. */
  protected cachedAs(start: number, end: number, hash: number): string {
    const b = this.b;
    const len = end - start;
    const cache = this.texts;
    const slot = (hash >>> 0) & (TEXT_CACHE_SLOTS - 1);
    const bytes = cache.bytes;
    const at = slot * CACHED_TEXT_BYTES;
    if (cache.lengths[slot] === len) {
      let k = 0;
      while (k < len && bytes[at + k] === b[start + k]) k++;
      if (k === len) return cache.strings[slot]!;
    }
    // Short strings are built faster in JavaScript than by a call into the decoder; longer
    // ones are built flat by it (adding characters makes a rope past 12).
    let s = '';
    if (len > 12) s = b.toString('latin1', start, end);
    else for (let k = start; k < end; k++) s += String.fromCharCode(b[k]!);
    for (let k = 0; k < len; k++) bytes[at + k] = b[start + k]!;
    cache.lengths[slot] = len;
    cache.strings[slot] = s;
    return s;
  }

  private within(spec: NumberSpec): number {
    const v = this.number();
    if (v < spec.min || v > spec.max) bail();
    return v;
  }

  private integer(spec: IntegerSpec): number {
    const v = this.number();
    if (v < spec.min || v > spec.max || !Number.isInteger(v)) bail();
    return v;
  }

  /** A key the tick does not know is skipped; one the schema knows that no case reads leaves the fast path. */
  private other(k: number): void {
    if (k !== UNKNOWN) bail();
    this.skip(0);
  }

  protected vec3(): Vec3 {
    let x = NaN;
    let y = NaN;
    let z = NaN;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(VEC_KEYS, next))) {
        case 0:
          x = this.number();
          break;
        case 1:
          y = this.number();
          break;
        case 2:
          z = this.number();
          break;
        default:
          this.other(next);
      }
    }
    // NaN is what a missing coordinate left (the parser itself never yields one), and fails these too.
    if (!inWorld(x, y, z)) bail();
    return { x, y, z };
  }

  private selfState(): SelfState {
    const F = SELF_STATE_FIELDS;
    let pos: Vec3 | undefined;
    let heading = NaN;
    let health = NaN;
    let blood = NaN;
    let hunger = NaN;
    let thirst = NaN;
    let hasWeapon: boolean | undefined;
    let ammo = NaN;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(SELF_KEYS, next))) {
        case SELF.pos:
          pos = this.vec3();
          break;
        case SELF.heading_deg:
          heading = this.within(F.heading_deg);
          break;
        case SELF.health:
          health = this.within(F.health);
          break;
        case SELF.blood:
          blood = this.within(F.blood);
          break;
        case SELF.hunger:
          hunger = this.within(F.hunger);
          break;
        case SELF.thirst:
          thirst = this.within(F.thirst);
          break;
        case SELF.has_weapon:
          hasWeapon = this.boolean();
          break;
        case SELF.ammo:
          ammo = this.integer(F.ammo);
          break;
        default:
          this.other(next);
      }
    }
    if (
      pos === undefined ||
      hasWeapon === undefined ||
      heading !== heading ||
      health !== health ||
      blood !== blood ||
      hunger !== hunger ||
      thirst !== thirst ||
      ammo !== ammo
    )
      bail();
    return { pos, heading_deg: heading, health, blood, hunger, thirst, has_weapon: hasWeapon, ammo };
  }

  private target(): Target {
    const F = TARGET_FIELDS;
    let id = NaN;
    let kind: TargetKind | undefined;
    let pos: Vec3 | undefined;
    let hostile: boolean | undefined;
    let visible: boolean | undefined;
    let name: string | undefined;
    let health = NaN;
    let hasHealth = false;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(TARGET_KEYS, next))) {
        case TARGET.id:
          id = this.integer(F.id);
          break;
        case TARGET.kind:
          kind = this.oneOf(TARGET_KIND_NAMES, TARGET_KINDS);
          break;
        case TARGET.pos:
          pos = this.vec3();
          break;
        case TARGET.hostile:
          hostile = this.boolean();
          break;
        case TARGET.visible:
          visible = this.boolean();
          break;
        case TARGET.name:
          name = this.string(F.name.maxLength);
          break;
        case TARGET.health:
          health = this.within(F.health);
          hasHealth = true;
          break;
        default:
          this.other(next);
      }
    }
    if (id !== id || kind === undefined || pos === undefined || hostile === undefined || visible === undefined) bail();
    // One literal per set of optional fields, in the schema's order: adding a field to a
    // built object moves it to a new shape and allocates room for the fields added.
    if (name !== undefined) return hasHealth ? { id, kind, pos, hostile, visible, name, health } : { id, kind, pos, hostile, visible, name };
    return hasHealth ? { id, kind, pos, hostile, visible, health } : { id, kind, pos, hostile, visible };
  }

  private poi(): PointOfInterest {
    const F = POI_FIELDS;
    let id: string | undefined;
    let kind: string | undefined;
    let pos: Vec3 | undefined;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(POI_KEYS, next))) {
        case POI.id:
          id = this.string(F.id.maxLength);
          break;
        case POI.kind:
          kind = this.string(F.kind.maxLength);
          break;
        case POI.pos:
          pos = this.vec3();
          break;
        default:
          this.other(next);
      }
    }
    if (id === undefined || kind === undefined || pos === undefined) bail();
    return { id, kind, pos };
  }

  private heard(): HeardSpeech {
    const F = HEARD_FIELDS;
    let from = NaN;
    let text: string | undefined;
    let at = NaN;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(HEARD_KEYS, next))) {
        case HEARD.from:
          from = this.integer(F.from);
          break;
        case HEARD.text:
          text = this.string(F.text.maxLength);
          break;
        case HEARD.at_s:
          at = this.within(F.at_s);
          break;
        default:
          this.other(next);
      }
    }
    if (from !== from || text === undefined || at !== at) bail();
    return { from, text, at_s: at };
  }

  private targets(): Target[] {
    const max = SNAPSHOT_FIELDS.targets.max;
    const out: Target[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === max) bail();
      out.push(this.target());
    }
    return out;
  }

  private route(): Vec3[] {
    const max = SNAPSHOT_FIELDS.route.max;
    const out: Vec3[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === max) bail();
      out.push(this.vec3());
    }
    return out;
  }

  private pois(): PointOfInterest[] {
    const max = SNAPSHOT_FIELDS.poi.max;
    const out: PointOfInterest[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === max) bail();
      out.push(this.poi());
    }
    return out;
  }

  private heardList(): HeardSpeech[] {
    const max = SNAPSHOT_FIELDS.heard.max;
    const out: HeardSpeech[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === max) bail();
      out.push(this.heard());
    }
    return out;
  }

  private snapshot(): Snapshot {
    const F = SNAPSHOT_FIELDS;
    let agent = NaN;
    let time = NaN;
    let self: SelfState | undefined;
    let seen: Target[] | undefined;
    let path: Vec3[] | undefined;
    let places: PointOfInterest[] | undefined;
    let speech: HeardSpeech[] | undefined;
    let squad: string | undefined;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(SNAPSHOT_KEYS, next))) {
        case SNAPSHOT.agent:
          agent = this.integer(F.agent);
          break;
        case SNAPSHOT.time_s:
          time = this.within(F.time_s);
          break;
        case SNAPSHOT.self_state:
          self = this.selfState();
          break;
        case SNAPSHOT.targets:
          seen = this.targets();
          break;
        case SNAPSHOT.route:
          path = this.route();
          break;
        case SNAPSHOT.poi:
          places = this.pois();
          break;
        case SNAPSHOT.heard:
          speech = this.heardList();
          break;
        case SNAPSHOT.squad:
          squad = this.string(F.squad.maxLength);
          break;
        default:
          this.other(next);
      }
    }
    if (agent !== agent || time !== time || self === undefined || seen === undefined) bail();
    const s: Snapshot = { agent: agent as AgentId, time_s: time, self_state: self, targets: seen };
    if (path !== undefined) s.route = path;
    if (places !== undefined) s.poi = places;
    if (speech !== undefined) s.heard = speech;
    if (squad !== undefined) s.squad = squad;
    return s;
  }

  private traits(): Partial<Traits> {
    const F = TRAIT_FIELDS;
    let openness = NaN;
    let conscientiousness = NaN;
    let extraversion = NaN;
    let agreeableness = NaN;
    let neuroticism = NaN;
    let afk = NaN;
    let breaks = NaN;
    let fatigue = NaN;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(TRAIT_KEYS, next))) {
        case TRAIT.openness:
          openness = this.within(F.openness);
          break;
        case TRAIT.conscientiousness:
          conscientiousness = this.within(F.conscientiousness);
          break;
        case TRAIT.extraversion:
          extraversion = this.within(F.extraversion);
          break;
        case TRAIT.agreeableness:
          agreeableness = this.within(F.agreeableness);
          break;
        case TRAIT.neuroticism:
          neuroticism = this.within(F.neuroticism);
          break;
        case TRAIT.afk_proneness:
          afk = this.within(F.afk_proneness);
          break;
        case TRAIT.break_proneness:
          breaks = this.within(F.break_proneness);
          break;
        case TRAIT.fatigue_rate:
          fatigue = this.within(F.fatigue_rate);
          break;
        default:
          this.other(next);
      }
    }
    // Named stores in the schema's order, present traits only, as parseTickRequest adds them:
    // a loop of keyed stores measured as the reader's costliest object.
    const out: Partial<Traits> = {};
    if (openness === openness) out.openness = openness;
    if (conscientiousness === conscientiousness) out.conscientiousness = conscientiousness;
    if (extraversion === extraversion) out.extraversion = extraversion;
    if (agreeableness === agreeableness) out.agreeableness = agreeableness;
    if (neuroticism === neuroticism) out.neuroticism = neuroticism;
    if (afk === afk) out.afk_proneness = afk;
    if (breaks === breaks) out.break_proneness = breaks;
    if (fatigue === fatigue) out.fatigue_rate = fatigue;
    return out;
  }

  private profile(): Profile {
    const F = PROFILE_FIELDS;
    let name: string | undefined;
    let role: Role | undefined;
    let coward: boolean | undefined;
    let traitSet: Partial<Traits> | undefined;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(PROFILE_KEYS, next))) {
        case PROFILE.name:
          name = this.string(F.name.maxLength);
          break;
        case PROFILE.role:
          role = this.oneOf(ROLE_NAMES, ROLES);
          break;
        case PROFILE.coward:
          coward = this.boolean();
          break;
        case PROFILE.traits:
          traitSet = this.traits();
          break;
        default:
          this.other(next);
      }
    }
    // A profile usually has all four: one literal, without a shape change per field.
    if (name !== undefined && role !== undefined && coward !== undefined && traitSet !== undefined) return { name, role, coward, traits: traitSet };
    const out: Profile = {};
    if (name !== undefined) out.name = name;
    if (role !== undefined) out.role = role;
    if (coward !== undefined) out.coward = coward;
    if (traitSet !== undefined) out.traits = traitSet;
    return out;
  }

  private top(): TickRequest {
    let snap: Snapshot | undefined;
    let prof: Profile | undefined;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(TOP_KEYS, next))) {
        case TOP.snapshot:
          snap = this.snapshot();
          break;
        case TOP.profile:
          prof = this.profile();
          break;
        default:
          this.other(next);
      }
    }
    if (snap === undefined) bail();
    return { snapshot: snap, profile: prof ?? {} };
  }
}
