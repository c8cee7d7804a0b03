import {
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
  type Intent,
  type TickRequest,
  type TickResponse,
  type Traits,
  type Vec3,
} from '../../brain/index.js';

/**
 * A JSON /tick body read straight from its bytes into a TickRequest, validating while it
 * reads: no UTF-8 decode of the whole body, no intermediate object tree, no second walk.
 * JSON.parse alone cost more than the brain's whole tick.
 *
 * It is only the fast path. Whenever a body is anything but a well-formed, valid tick (a
 * syntax error, an escape inside a key, a value out of range, a list over its cap, nesting it
 * does not expect, a field missing), it answers null and the caller takes the exact path,
 * JSON.parse then parseTickRequest, which decides the status and names the field. So for
 * every body it accepts, the result equals parseTickRequest(JSON.parse(body)) field for
 * field, in the same key order (the tests hold it to that on generated and mutated bodies).
 *
 * The cursor is a field of a reader made per body: module-level `let` state measured twice
 * as slow (every access a context load with a hole check).
 */

const SAFE = Number.MAX_SAFE_INTEGER;

/** Thrown to leave the fast path; never escapes this module. */
const BAIL = { bail: true } as const;

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

function names(...list: string[]): Buffer[] {
  return list.map((s) => Buffer.from(s, 'latin1'));
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
const TARGET_KIND_NAMES: readonly TargetKind[] = ['player', 'ai', 'zombie', 'animal'];
const TARGET_KIND_BYTES = names(...TARGET_KIND_NAMES);
const ROLE_NAMES: readonly Role[] = ['survivor', 'bandit', 'guard', 'trader'];
const ROLE_BYTES = names(...ROLE_NAMES);

/** Skipped values nest at most this deep before the exact path is left to judge them. */
const MAX_SKIP_DEPTH = 32;

/** The request, or null when only the exact path can answer for this body. */
export function readTickJson(body: Uint8Array): TickRequest | null {
  const reader = new TickJsonReader(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  try {
    return reader.read();
  } catch (err) {
    if (err === BAIL) return null;
    throw err;
  }
}

function bail(): never {
  throw BAIL;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46));
}

// Trait values by TRAIT_NAMES index while their object is read, NaN when absent: the result
// is then built in TRAIT_NAMES order, as parseTickRequest builds it.
const traitValues = new Float64Array(TRAIT_NAMES.length);

class TickJsonReader {
  private i = 0;
  private readonly n: number;

  constructor(private readonly b: Buffer) {
    this.n = b.length;
  }

  private ws(): void {
    while (this.i < this.n) {
      const c = this.b[this.i]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else return;
    }
  }

  /** Consumes `{`; true when the object is empty (its `}` consumed too). */
  private open(): boolean {
    this.ws();
    if (this.b[this.i] !== 0x7b) bail();
    this.i++;
    this.ws();
    if (this.b[this.i] === 0x7d) {
      this.i++;
      return true;
    }
    return false;
  }

  /** After a member: true when another follows (`,` consumed), false at the closing `close`. */
  private more(close: number): boolean {
    this.ws();
    const c = this.b[this.i++];
    if (c === 0x2c) {
      this.ws();
      return true;
    }
    if (c === close) return false;
    return bail();
  }

  /** Reads a member's key and its colon; the key's index in `keys`, or -1 for a key the tick does not know. */
  private key(keys: readonly Buffer[], expected: number): number {
    const b = this.b;
    if (b[this.i] !== 0x22) bail();
    const start = this.i + 1;
    // A mod writes its fields in one order, so the key after the last one matched is tried
    // first, straight against the bytes, without scanning the key on its own.
    const count = keys.length;
    for (let tried = 0; tried < count; tried++) {
      const k = (expected + tried) % count;
      const name = keys[k]!;
      const len = name.length;
      if (b[start + len] !== 0x22) continue;
      let j = 0;
      while (j < len && name[j] === b[start + j]) j++;
      if (j !== len) continue;
      this.i = start + len + 1;
      this.colon();
      return k;
    }
    this.i = start;
    for (;;) {
      if (this.i >= this.n) bail();
      const c = b[this.i]!;
      if (c === 0x22) break;
      // An escaped key may spell a known one: only JSON.parse may say which.
      if (c === 0x5c || c < 0x20) bail();
      this.i++;
    }
    this.i++;
    this.colon();
    return -1;
  }

  private colon(): void {
    this.ws();
    if (this.b[this.i] !== 0x3a) bail();
    this.i++;
    this.ws();
  }


  /**
   * A JSON number, to the same double JSON.parse gives: up to 15 significant digits and 22
   * decimals, the integer mantissa divided by an exact power of ten is correctly rounded (both
   * operands are exact doubles); anything longer or with an exponent goes through Number(),
   * which rounds correctly too.
   */
  private number(): number {
    const b = this.b;
    const n = this.n;
    let i = this.i;
    const start = i;
    let c = i < n ? b[i]! : 0;
    const negative = c === 0x2d;
    if (negative) c = ++i < n ? b[i]! : 0;
    let mantissa = 0;
    let digits = 0;
    if (c === 0x30) c = ++i < n ? b[i]! : 0;
    else if (c >= 0x31 && c <= 0x39) {
      do {
        mantissa = mantissa * 10 + (c - 0x30);
        digits++;
        c = ++i < n ? b[i]! : 0;
      } while (c >= 0x30 && c <= 0x39);
    } else bail();
    let scale = 0;
    if (c === 0x2e) {
      c = ++i < n ? b[i]! : 0;
      if (!(c >= 0x30 && c <= 0x39)) bail();
      do {
        mantissa = mantissa * 10 + (c - 0x30);
        digits++;
        scale++;
        c = ++i < n ? b[i]! : 0;
      } while (c >= 0x30 && c <= 0x39);
    }
    let exact = digits <= 15 && scale <= 22;
    if (c === 0x65 || c === 0x45) {
      c = ++i < n ? b[i]! : 0;
      if (c === 0x2b || c === 0x2d) c = ++i < n ? b[i]! : 0;
      if (!(c >= 0x30 && c <= 0x39)) bail();
      do c = ++i < n ? b[i]! : 0;
      while (c >= 0x30 && c <= 0x39);
      exact = false;
    } else if (c >= 0x30 && c <= 0x39) bail();
    this.i = i;
    if (!exact) {
      const v = Number(b.toString('latin1', start, i));
      if (!Number.isFinite(v)) bail();
      return v;
    }
    const v = scale === 0 ? mantissa : mantissa / POW10[scale]!;
    return negative ? -v : v;
  }


  private finite(): number {
    this.ws();
    return this.number();
  }

  private within(min: number, max: number): number {
    const v = this.finite();
    if (v < min || v > max) bail();
    return v;
  }

  private integer(min: number, max: number): number {
    const v = this.finite();
    if (v < min || v > max || !Number.isInteger(v)) bail();
    return v;
  }

  private boolean(): boolean {
    this.ws();
    const c = this.b[this.i];
    if (c === 0x74 && this.b[this.i + 1] === 0x72 && this.b[this.i + 2] === 0x75 && this.b[this.i + 3] === 0x65) {
      this.i += 4;
      return true;
    }
    if (c === 0x66 && this.b[this.i + 1] === 0x61 && this.b[this.i + 2] === 0x6c && this.b[this.i + 3] === 0x73 && this.b[this.i + 4] === 0x65) {
      this.i += 5;
      return false;
    }
    return bail();
  }

  /**
   * Scans a string's body from after its opening quote to its closing quote (not consumed),
   * rejecting what JSON.parse rejects (control characters, unknown escapes). Returns 0 for
   * plain ASCII, 1 with non-ASCII bytes, 2 with escapes.
   */
  private scanString(): number {
    let kind = 0;
    for (;;) {
      if (this.i >= this.n) bail();
      const c = this.b[this.i]!;
      if (c === 0x22) return kind;
      if (c < 0x20) bail();
      if (c === 0x5c) {
        kind = 2;
        const e = this.b[this.i + 1];
        if (e === 0x75) {
          if (!isHex(this.b[this.i + 2]) || !isHex(this.b[this.i + 3]) || !isHex(this.b[this.i + 4]) || !isHex(this.b[this.i + 5])) bail();
          this.i += 6;
        } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) this.i += 2;
        else bail();
        continue;
      }
      if (c >= 0x80 && kind === 0) kind = 1;
      this.i++;
    }
  }

  private string(maxLength: number): string {
    this.ws();
    if (this.b[this.i] !== 0x22) bail();
    const start = ++this.i;
    const kind = this.scanString();
    const end = this.i++;
    let s: string;
    if (kind === 0) {
      if (end - start > maxLength) bail();
      if (end - start <= 12) {
        s = '';
        for (let k = start; k < end; k++) s += String.fromCharCode(this.b[k]!);
      } else s = this.b.toString('latin1', start, end);
      return s;
    }
    if (kind === 1) s = this.b.toString('utf8', start, end);
    else {
      try {
        s = JSON.parse(this.b.toString('utf8', start - 1, end + 1)) as string;
      } catch {
        return bail();
      }
    }
    // A replacement character may stand for bytes that were not UTF-8: the exact path decides.
    if (s.length > maxLength || s.includes('\ufffd')) bail();
    return s;
  }

  /** One of `choices`, returned as the constant string rather than a fresh copy. */
  private oneOf<T extends string>(bytes: readonly Buffer[], choices: readonly T[]): T {
    this.ws();
    if (this.b[this.i] !== 0x22) bail();
    const start = ++this.i;
    if (this.scanString() !== 0) bail();
    const len = this.i - start;
    this.i++;
    for (let k = 0; k < bytes.length; k++) {
      const name = bytes[k]!;
      if (name.length !== len) continue;
      let j = 0;
      while (j < len && name[j] === this.b[start + j]) j++;
      if (j === len) return choices[k]!;
    }
    return bail();
  }

  /** Any JSON value, checked for syntax only. */
  private skip(depth: number): void {
    this.ws();
    const c = this.b[this.i];
    if (c === 0x22) {
      this.i++;
      this.scanString();
      this.i++;
    } else if (c === 0x7b) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      this.i++;
      this.ws();
      if (this.b[this.i] === 0x7d) {
        this.i++;
        return;
      }
      do {
        if (this.b[this.i] !== 0x22) bail();
        this.i++;
        this.scanString();
        this.i++;
        this.ws();
        if (this.b[this.i] !== 0x3a) bail();
        this.i++;
        this.skip(depth + 1);
      } while (this.more(0x7d));
    } else if (c === 0x5b) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      this.i++;
      this.ws();
      if (this.b[this.i] === 0x5d) {
        this.i++;
        return;
      }
      do this.skip(depth + 1);
      while (this.more(0x5d));
    } else if (c === 0x74 || c === 0x66) this.boolean();
    else if (c === 0x6e && this.b[this.i + 1] === 0x75 && this.b[this.i + 2] === 0x6c && this.b[this.i + 3] === 0x6c) this.i += 4;
    else this.number();
  }

  /** Consumes `[`; true when the array is empty (its `]` consumed too). */
  private openList(): boolean {
    this.ws();
    if (this.b[this.i] !== 0x5b) bail();
    this.i++;
    this.ws();
    if (this.b[this.i] === 0x5d) {
      this.i++;
      return true;
    }
    return false;
  }

  private vec3(): Vec3 {
    let x = NaN;
    let y = NaN;
    let z = NaN;
    let next = -1;
    if (!this.open()) {
      do {
        switch ((next = this.key(VEC_KEYS, next + 1))) {
          case 0: x = this.finite(); break;
          case 1: y = this.finite(); break;
          case 2: z = this.finite(); break;
          default: this.skip(0);
        }
      } while (this.more(0x7d));
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
    if (!this.open()) {
      do {
        switch ((next = this.key(SELF_KEYS, next + 1))) {
          case 0: pos = this.vec3(); break;
          case 1: heading = this.finite(); break;
          case 2: health = this.within(0, 100); break;
          case 3: blood = this.within(0, 5000); break;
          case 4: hunger = this.within(0, 100); break;
          case 5: thirst = this.within(0, 100); break;
          case 6: hasWeapon = this.boolean(); break;
          case 7: ammo = this.integer(0, SAFE); break;
          default: this.skip(0);
        }
      } while (this.more(0x7d));
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
    if (!this.open()) {
      do {
        switch ((next = this.key(TARGET_KEYS, next + 1))) {
          case 0: id = this.integer(-SAFE, SAFE); break;
          case 1: kind = this.oneOf(TARGET_KIND_BYTES, TARGET_KIND_NAMES); break;
          case 2: pos = this.vec3(); break;
          case 3: hostile = this.boolean(); break;
          case 4: visible = this.boolean(); break;
          case 5: name = this.string(TICK_LIMITS.maxName); break;
          case 6: health = this.within(0, 100); hasHealth = true; break;
          default: this.skip(0);
        }
      } while (this.more(0x7d));
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
    if (!this.open()) {
      do {
        switch ((next = this.key(POI_KEYS, next + 1))) {
          case 0: id = this.string(TICK_LIMITS.maxPoiField); break;
          case 1: kind = this.string(TICK_LIMITS.maxPoiField); break;
          case 2: pos = this.vec3(); break;
          default: this.skip(0);
        }
      } while (this.more(0x7d));
    }
    if (id === undefined || kind === undefined || pos === undefined) bail();
    return { id, kind, pos };
  }

  private heard(): HeardSpeech {
    let from = NaN;
    let text: string | undefined;
    let at = NaN;
    let next = -1;
    if (!this.open()) {
      do {
        switch ((next = this.key(HEARD_KEYS, next + 1))) {
          case 0: from = this.integer(-SAFE, SAFE); break;
          case 1: text = this.string(TICK_LIMITS.maxHeardText); break;
          case 2: at = this.finite(); break;
          default: this.skip(0);
        }
      } while (this.more(0x7d));
    }
    if (from !== from || text === undefined || at !== at) bail();
    return { from, text, at_s: at };
  }

  private targets(): Target[] {
    const out: Target[] = [];
    if (this.openList()) return out;
    do {
      if (out.length === TICK_LIMITS.maxTargets) bail();
      out.push(this.target());
    } while (this.more(0x5d));
    return out;
  }

  private route(): Vec3[] {
    const out: Vec3[] = [];
    if (this.openList()) return out;
    do {
      if (out.length === TICK_LIMITS.maxRoute) bail();
      out.push(this.vec3());
    } while (this.more(0x5d));
    return out;
  }

  private pois(): PointOfInterest[] {
    const out: PointOfInterest[] = [];
    if (this.openList()) return out;
    do {
      if (out.length === TICK_LIMITS.maxPoi) bail();
      out.push(this.poi());
    } while (this.more(0x5d));
    return out;
  }

  private heardList(): HeardSpeech[] {
    const out: HeardSpeech[] = [];
    if (this.openList()) return out;
    do {
      if (out.length === TICK_LIMITS.maxHeard) bail();
      out.push(this.heard());
    } while (this.more(0x5d));
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
    if (!this.open()) {
      do {
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
      } while (this.more(0x7d));
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
    traitValues.fill(NaN);
    let next = -1;
    if (!this.open()) {
      do {
        const k = (next = this.key(TRAIT_KEYS, next + 1));
        if (k < 0) this.skip(0);
        else traitValues[k] = this.within(0, 1);
      } while (this.more(0x7d));
    }
    const out: Partial<Traits> = {};
    for (let k = 0; k < TRAIT_NAMES.length; k++) {
      const v = traitValues[k]!;
      if (v === v) out[TRAIT_NAMES[k]!] = v;
    }
    return out;
  }

  private profile(): Profile {
    let name: string | undefined;
    let role: Role | undefined;
    let coward: boolean | undefined;
    let traitSet: Partial<Traits> | undefined;
    let next = -1;
    if (!this.open()) {
      do {
        switch ((next = this.key(PROFILE_KEYS, next + 1))) {
          case 0: name = this.string(TICK_LIMITS.maxName); break;
          case 1: role = this.oneOf(ROLE_BYTES, ROLE_NAMES); break;
          case 2: coward = this.boolean(); break;
          case 3: traitSet = this.traits(); break;
          default: this.skip(0);
        }
      } while (this.more(0x7d));
    }
    const out: Profile = {};
    if (name !== undefined) out.name = name;
    if (role !== undefined) out.role = role;
    if (coward !== undefined) out.coward = coward;
    if (traitSet !== undefined) out.traits = traitSet;
    return out;
  }

  /** The whole body as one tick request. */
  read(): TickRequest {
    const request = this.top();
    this.ws();
    if (this.i !== this.n) bail();
    return request;
  }

  private top(): TickRequest {
    let snap: Snapshot | undefined;
    let prof: Profile | undefined;
    let next = -1;
    if (!this.open()) {
      do {
        switch ((next = this.key(TOP_KEYS, next + 1))) {
          case 0: snap = this.snapshot(); break;
          case 1: prof = this.profile(); break;
          default: this.skip(0);
        }
      } while (this.more(0x7d));
    }
    if (snap === undefined) bail();
    return { snapshot: snap, profile: prof ?? {} };
  }


}

/**
 * The JSON text of a reply, byte for byte what JSON.stringify gives for it (the tests hold it
 * to that), at a fifth of the cost: the shapes are known, so only numbers and free text need
 * converting. An intent kind this does not know is stringified whole.
 */
export function writeTickJson(response: TickResponse): string {
  let s = '{"agent":' + num(response.agent) + ',"posture":' + JSON.stringify(response.posture) + ',"intents":[';
  const intents = response.intents;
  for (let k = 0; k < intents.length; k++) {
    if (k > 0) s += ',';
    s += intent(intents[k]!);
  }
  return s + ']}';
}

function num(v: number): string {
  return Number.isFinite(v) ? '' + v : 'null';
}

function vec(v: Vec3): string {
  return '{"x":' + num(v.x) + ',"y":' + num(v.y) + ',"z":' + num(v.z) + '}';
}

function intent(it: Intent): string {
  switch (it.kind) {
    case 'MoveTo':
      return '{"kind":"MoveTo","to":' + vec(it.to) + ',"speed":' + JSON.stringify(it.speed) + '}';
    case 'Engage':
      return '{"kind":"Engage","target":' + num(it.target) + ',"fire":' + (it.fire ? 'true' : 'false') + '}';
    case 'Face':
      return '{"kind":"Face","yaw_deg":' + num(it.yaw_deg) + '}';
    case 'Flee':
      return '{"kind":"Flee","from":' + num(it.from) + '}';
    case 'Investigate':
      return '{"kind":"Investigate","at":' + vec(it.at) + '}';
    case 'Idle':
      return '{"kind":"Idle","reason":' + JSON.stringify(it.reason) + '}';
    case 'Emote':
      return '{"kind":"Emote","name":' + JSON.stringify(it.name) + '}';
    case 'Logoff':
      return '{"kind":"Logoff"}';
    default:
      return JSON.stringify(it);
  }
}
