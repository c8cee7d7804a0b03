import { isUtf8 } from 'node:buffer';
import {
  ROLES,
  TARGET_KINDS,
  TICK_LIMITS,
  TRAIT_NAMES,
  type AgentId,
  type HeardSpeech,
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
 * The shape of a /tick request (BRAIN.md §Request), read from an encoded body straight into
 * the TickRequest the brain takes, validating while it reads: no decode of the whole body
 * into a generic tree and no second walk over it. JSON.parse or the MessagePack decoder alone
 * cost more than the brain's whole tick. Subclasses supply the encoding's tokens; this class
 * knows the fields, their ranges and caps, and builds each object in the key order
 * parseTickRequest gives it.
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

const SAFE = Number.MAX_SAFE_INTEGER;

/** The request `reader` finds in its body, or null when only the exact path can answer for it. */
export function readOrNull(reader: TickReader): TickRequest | null {
  try {
    return reader.read();
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
 * A key or enum value the readers match against body bytes: its bytes, and the same as
 * little-endian 32-bit words, so that a match compares four bytes at a time (the last word
 * ends at the name's end, overlapping the one before). Comparing byte by byte measured 15%
 * of reading a tick.
 */
export class Name {
  readonly length: number;
  readonly bytes: Buffer;
  /** The first and the last four bytes (0 below four bytes): all of a name up to eight bytes. */
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

function names(...list: string[]): Name[] {
  return list.map((s) => new Name(s));
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

const TOP_KEYS = names('snapshot', 'profile');
const SNAPSHOT_KEYS = names('agent', 'time_s', 'self_state', 'targets', 'route', 'poi', 'heard', 'squad');
const SELF_KEYS = names('pos', 'heading_deg', 'health', 'blood', 'hunger', 'thirst', 'has_weapon', 'ammo');
const VEC_KEYS = names('x', 'y', 'z');
const TARGET_KEYS = names('id', 'kind', 'pos', 'hostile', 'visible', 'name', 'health');
const POI_KEYS = names('id', 'kind', 'pos');
const HEARD_KEYS = names('from', 'text', 'at_s');
const PROFILE_KEYS = names('name', 'role', 'coward', 'traits');
const TRAIT_KEYS = names(...TRAIT_NAMES);
const TARGET_KIND_BYTES = names(...TARGET_KINDS);
const ROLE_BYTES = names(...ROLES);

/** Skipped values nest at most this deep before the exact path is left to judge them. */
export const MAX_SKIP_DEPTH = 32;


export abstract class TickReader {
  /** The cursor, and the body's length. */
  protected i = 0;
  protected readonly n: number;
  /** The body's ArrayBuffer as a DataView, and where the body starts in it. */
  private readonly view: DataView;
  private readonly base: number;

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

  /** Starts an object: 0 when it is empty, else how many members are left (1 when the encoding does not say). */
  protected abstract openObject(): number;
  /** After a member: how many are left (0 at the object's end). */
  protected abstract afterMember(left: number): number;
  /** Starts a list, as openObject. */
  protected abstract openList(): number;
  protected abstract afterItem(left: number): number;
  /**
   * A member's key: its index in `keys` (tried from `expected` on, since a client writes its
   * fields in one order), or -1 for a key the tick does not know.
   */
  protected abstract key(keys: readonly Name[], expected: number): number;
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
  protected spells(name: Name, start: number, len: number): boolean {
    if (name.length !== len) return false;
    if (len < 4) {
      const b = this.b;
      const bytes = name.bytes;
      for (let j = 0; j < len; j++) if (bytes[j] !== b[start + j]) return false;
      return true;
    }
    const view = this.view;
    const at = this.base + start;
    if (view.getUint32(at, true) !== name.head || view.getUint32(at + len - 4, true) !== name.tail) return false;
    const middle = name.middle;
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
      // Short strings are built faster in JavaScript than by a call into the decoder.
      if (end - start > 12) return b.toString('latin1', start, end);
      let s = '';
      for (let k = start; k < end; k++) s += String.fromCharCode(b[k]!);
      return s;
    }
    if (!isUtf8(b.subarray(start, end))) bail();
    const s = b.toString('utf8', start, end);
    if (s.length > maxLength) bail();
    return s;
  }

  private within(min: number, max: number): number {
    const v = this.number();
    if (v < min || v > max) bail();
    return v;
  }

  private integer(min: number, max: number): number {
    const v = this.number();
    if (v < min || v > max || !Number.isInteger(v)) bail();
    return v;
  }

  private vec3(): Vec3 {
    let x = NaN;
    let y = NaN;
    let z = NaN;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(VEC_KEYS, next + 1))) {
        case 0: x = this.number(); break;
        case 1: y = this.number(); break;
        case 2: z = this.number(); break;
        default: this.skip(0);
      }
    }
    // NaN is what a missing coordinate left: the parser itself never yields one.
    if (x !== x || y !== y || z !== z) bail();
    return { x, y, z };
  }

  private selfState(): SelfState {
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
      switch ((next = this.key(SELF_KEYS, next + 1))) {
        case 0: pos = this.vec3(); break;
        case 1: heading = this.number(); break;
        case 2: health = this.within(0, 100); break;
        case 3: blood = this.within(0, 5000); break;
        case 4: hunger = this.within(0, 100); break;
        case 5: thirst = this.within(0, 100); break;
        case 6: hasWeapon = this.boolean(); break;
        case 7: ammo = this.integer(0, SAFE); break;
        default: this.skip(0);
      }
    }
    if (pos === undefined || hasWeapon === undefined || heading !== heading || health !== health || blood !== blood || hunger !== hunger || thirst !== thirst || ammo !== ammo) bail();
    return { pos, heading_deg: heading, health, blood, hunger, thirst, has_weapon: hasWeapon, ammo };
  }

  private target(): Target {
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
      switch ((next = this.key(TARGET_KEYS, next + 1))) {
        case 0: id = this.integer(-SAFE, SAFE); break;
        case 1: kind = this.oneOf(TARGET_KIND_BYTES, TARGET_KINDS); break;
        case 2: pos = this.vec3(); break;
        case 3: hostile = this.boolean(); break;
        case 4: visible = this.boolean(); break;
        case 5: name = this.string(TICK_LIMITS.maxName); break;
        case 6: health = this.within(0, 100); hasHealth = true; break;
        default: this.skip(0);
      }
    }
    if (id !== id || kind === undefined || pos === undefined || hostile === undefined || visible === undefined) bail();
    const t: Target = { id, kind, pos, hostile, visible };
    if (name !== undefined) t.name = name;
    if (hasHealth) t.health = health;
    return t;
  }

  private poi(): PointOfInterest {
    let id: string | undefined;
    let kind: string | undefined;
    let pos: Vec3 | undefined;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(POI_KEYS, next + 1))) {
        case 0: id = this.string(TICK_LIMITS.maxPoiField); break;
        case 1: kind = this.string(TICK_LIMITS.maxPoiField); break;
        case 2: pos = this.vec3(); break;
        default: this.skip(0);
      }
    }
    if (id === undefined || kind === undefined || pos === undefined) bail();
    return { id, kind, pos };
  }

  private heard(): HeardSpeech {
    let from = NaN;
    let text: string | undefined;
    let at = NaN;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(HEARD_KEYS, next + 1))) {
        case 0: from = this.integer(-SAFE, SAFE); break;
        case 1: text = this.string(TICK_LIMITS.maxHeardText); break;
        case 2: at = this.number(); break;
        default: this.skip(0);
      }
    }
    if (from !== from || text === undefined || at !== at) bail();
    return { from, text, at_s: at };
  }

  private targets(): Target[] {
    const out: Target[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === TICK_LIMITS.maxTargets) bail();
      out.push(this.target());
    }
    return out;
  }

  private route(): Vec3[] {
    const out: Vec3[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === TICK_LIMITS.maxRoute) bail();
      out.push(this.vec3());
    }
    return out;
  }

  private pois(): PointOfInterest[] {
    const out: PointOfInterest[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === TICK_LIMITS.maxPoi) bail();
      out.push(this.poi());
    }
    return out;
  }

  private heardList(): HeardSpeech[] {
    const out: HeardSpeech[] = [];
    for (let left = this.openList(); left > 0; left = this.afterItem(left)) {
      if (out.length === TICK_LIMITS.maxHeard) bail();
      out.push(this.heard());
    }
    return out;
  }

  private snapshot(): Snapshot {
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
      switch ((next = this.key(SNAPSHOT_KEYS, next + 1))) {
        case 0: agent = this.integer(-SAFE, SAFE); break;
        case 1: time = this.within(0, Infinity); break;
        case 2: self = this.selfState(); break;
        case 3: seen = this.targets(); break;
        case 4: path = this.route(); break;
        case 5: places = this.pois(); break;
        case 6: speech = this.heardList(); break;
        case 7: squad = this.string(TICK_LIMITS.maxSquad); break;
        default: this.skip(0);
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
      switch ((next = this.key(TRAIT_KEYS, next + 1))) {
        case 0: openness = this.within(0, 1); break;
        case 1: conscientiousness = this.within(0, 1); break;
        case 2: extraversion = this.within(0, 1); break;
        case 3: agreeableness = this.within(0, 1); break;
        case 4: neuroticism = this.within(0, 1); break;
        case 5: afk = this.within(0, 1); break;
        case 6: breaks = this.within(0, 1); break;
        case 7: fatigue = this.within(0, 1); break;
        default: this.skip(0);
      }
    }
    // Named stores in TRAIT_NAMES order, present traits only, as parseTickRequest adds them:
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
    let name: string | undefined;
    let role: Role | undefined;
    let coward: boolean | undefined;
    let traitSet: Partial<Traits> | undefined;
    let next = -1;
    for (let left = this.openObject(); left > 0; left = this.afterMember(left)) {
      switch ((next = this.key(PROFILE_KEYS, next + 1))) {
        case 0: name = this.string(TICK_LIMITS.maxName); break;
        case 1: role = this.oneOf(ROLE_BYTES, ROLES); break;
        case 2: coward = this.boolean(); break;
        case 3: traitSet = this.traits(); break;
        default: this.skip(0);
      }
    }
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
      switch ((next = this.key(TOP_KEYS, next + 1))) {
        case 0: snap = this.snapshot(); break;
        case 1: prof = this.profile(); break;
        default: this.skip(0);
      }
    }
    if (snap === undefined) bail();
    return { snapshot: snap, profile: prof ?? {} };
  }
}
