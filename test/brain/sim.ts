import {
  DEFAULT_BUNDLE,
  POLICY_KEYS,
  type ConfigBundle,
  type Intent,
  type PolicyKey,
  type Profile,
  type SelfState,
  type Snapshot,
  type Target,
  type TickRequest,
  type TickResponse,
  type Vec3,
  type AgentId,
} from '../../brain/index.js';
import type { Brain } from '../../brain/index.js';

/** Test helpers: bundles with policies switched, snapshots, and a tiny deterministic world. */

export function bundle(policy: Partial<Record<PolicyKey, boolean>> = {}, patch: (b: ConfigBundle) => void = () => {}): ConfigBundle {
  const b = structuredClone(DEFAULT_BUNDLE);
  b.policy = { ...b.policy, ...policy };
  patch(b);
  return b;
}

export function allOff(): ConfigBundle {
  return bundle(Object.fromEntries(POLICY_KEYS.map((k) => [k, false])));
}

export function allOffExcept(...keys: PolicyKey[]): ConfigBundle {
  return bundle(Object.fromEntries(POLICY_KEYS.map((k) => [k, keys.includes(k)])));
}

export function self(pos: Vec3 = { x: 0, y: 8, z: 0 }, over: Partial<SelfState> = {}): SelfState {
  return { pos, heading_deg: 0, health: 100, blood: 5000, hunger: 20, thirst: 20, has_weapon: true, ammo: 30, ...over };
}

export function hostile(id: number, pos: Vec3, over: Partial<Target> = {}): Target {
  return { id, kind: 'player', pos, hostile: true, visible: true, ...over };
}

export function req(agent: number, time_s: number, self_state: SelfState, extra: Partial<Snapshot> = {}, profile: Profile = {}): TickRequest {
  return { snapshot: { agent: agent as AgentId, time_s, self_state, targets: [], ...extra }, profile };
}

export function kinds(r: TickResponse): string[] {
  return r.intents.map((i) => i.kind);
}

export function find<K extends Intent['kind']>(r: TickResponse, kind: K): Extract<Intent, { kind: K }> | undefined {
  return r.intents.find((i) => i.kind === kind) as Extract<Intent, { kind: K }> | undefined;
}

const SPEED_MPS = { walk: 1.5, jog: 3.5, sprint: 6 } as const;

/** Moves `pos` along the reply's MoveTo for dt seconds, as a game would. */
export function follow(pos: Vec3, r: TickResponse, dt: number): Vec3 {
  const m = find(r, 'MoveTo');
  if (m === undefined) return pos;
  const dx = m.to.x - pos.x;
  const dz = m.to.z - pos.z;
  const len = Math.hypot(dx, dz);
  const step = Math.min(len, SPEED_MPS[m.speed] * dt);
  if (len === 0) return pos;
  return { x: pos.x + (dx / len) * step, y: pos.y, z: pos.z + (dz / len) * step };
}

/** A small deterministic LCG for the test world (the brain has its own PRNG). */
export class Lcg {
  constructor(private s: number) {}
  next(): number {
    this.s = (Math.imul(this.s, 1664525) + 1013904223) >>> 0;
    return this.s / 4294967296;
  }
}

const FIELD_M = 500;

interface SimAgent {
  id: number;
  pos: Vec3;
  health: number;
  squad?: string;
  profile: Profile;
}

/**
 * A field with wandering hostiles, points of interest, speech and squads: every subsystem has
 * something to react to. Deterministic given its seed; the brain is fed in agent-id order.
 */
export class World {
  readonly agents: SimAgent[] = [];
  private hostiles: Array<{ id: number; pos: Vec3; hp: number }> = [];
  private readonly rnd: Lcg;
  time = 0;

  constructor(seed: number, agents: number, opts: { squads?: boolean; hostiles?: number } = {}) {
    this.rnd = new Lcg(seed);
    for (let i = 0; i < agents; i++) {
      this.agents.push({
        id: i + 1,
        pos: { x: this.rnd.next() * FIELD_M, y: 8, z: this.rnd.next() * FIELD_M },
        health: 100,
        ...(opts.squads ? { squad: `s${i % 3}` } : {}),
        profile: i % 5 === 0 ? { role: 'guard' } : {},
      });
    }
    for (let h = 0; h < (opts.hostiles ?? 3); h++)
      this.hostiles.push({ id: 1000 + h, hp: 100, pos: { x: this.rnd.next() * FIELD_M, y: 8, z: this.rnd.next() * FIELD_M } });
  }

  request(a: SimAgent): TickRequest {
    const targets: Target[] = [];
    for (const h of this.hostiles) {
      const d = Math.hypot(h.pos.x - a.pos.x, h.pos.z - a.pos.z);
      if (d < 150) targets.push({ id: h.id, kind: 'zombie', pos: { ...h.pos }, hostile: true, visible: d < 80 });
    }
    const friend = this.agents[a.id % this.agents.length]!;
    targets.push({ id: 500 + friend.id, kind: 'player', pos: { ...friend.pos }, hostile: false, visible: true, name: `P${friend.id}` });
    const snapshot: Snapshot = {
      agent: a.id as AgentId,
      time_s: this.time,
      self_state: self({ ...a.pos }, { health: a.health, hunger: (this.time / 20) % 100, thirst: (this.time / 15) % 100, ammo: a.id % 7 === 0 ? 0 : 30 }),
      targets,
      poi: [
        { id: 'well', kind: 'water', pos: { x: 50, y: 8, z: 50 } },
        { id: 'shop', kind: 'food', pos: { x: 150, y: 8, z: 40 } },
        { id: 'crate', kind: 'loot', pos: { x: 100, y: 8, z: 160 } },
        { id: 'clinic', kind: 'medical', pos: { x: 20, y: 8, z: 180 } },
      ],
      heard: [{ from: 500 + friend.id, text: `hello at ${Math.floor(this.time / 10)}`, at_s: Math.floor(this.time / 10) * 10 }],
      ...(a.id % 4 === 0
        ? {
            route: [
              { x: 10, y: 8, z: 10 },
              { x: 60, y: 8, z: 10 },
            ],
          }
        : {}),
      ...(a.squad !== undefined ? { squad: a.squad } : {}),
    };
    return { snapshot, profile: a.profile };
  }

  /** One round: every agent ticks once (in id order), follows its MoveTo, hostiles wander. */
  step(brain: Brain, dt: number, onReply?: (r: TickResponse) => void): void {
    for (const a of this.agents) {
      const r = brain.tick(this.request(a));
      onReply?.(r);
      const shot = find(r, 'Engage');
      const h = shot?.fire ? this.hostiles.find((x) => x.id === shot.target) : undefined;
      if (h !== undefined && (h.hp -= 10) <= 0) {
        // Killed: another one turns up somewhere else.
        h.hp = 100;
        h.pos = { x: this.rnd.next() * FIELD_M, y: 8, z: this.rnd.next() * FIELD_M };
      }
      a.pos = follow(a.pos, r, dt);
      const near = this.hostiles.some((h) => Math.hypot(h.pos.x - a.pos.x, h.pos.z - a.pos.z) < 20);
      if (near && this.rnd.next() < 0.2) a.health = Math.max(1, a.health - 10);
      else if (a.health < 100 && this.rnd.next() < 0.05) a.health = Math.min(100, a.health + 5);
    }
    for (const h of this.hostiles) {
      h.pos = {
        x: Math.min(FIELD_M, Math.max(0, h.pos.x + (this.rnd.next() - 0.5) * 6 * dt)),
        y: 8,
        z: Math.min(FIELD_M, Math.max(0, h.pos.z + (this.rnd.next() - 0.5) * 6 * dt)),
      };
    }
    this.time += dt;
  }
}
