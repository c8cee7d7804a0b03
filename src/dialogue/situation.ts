import type { ConfigBundle } from '../../brain/types.js';
import type { LineParams } from '../../plugins/protocol.js';
import { MAX_SEEN_PLAYERS, type AgentSpeech, type Seen } from './agent-speech.js';
import type { DialogueContext, HeardLine, NearbyPlayer, NotableEvent, SituationKind } from './context.js';

/** Players named to the model in a line's situation (the nearest). */
export const MAX_NAMED_PLAYERS = 4;

/** The distances and times situationOf judges by. */
export interface SituationRules {
  /** Players within this many metres count as near. */
  rangeM: number;
  /** Heard speech older than this (game seconds) is no longer answered. */
  lineTtlS: number;
  /** A player out of range this long (game seconds) is greeted again on return. */
  greetAgainS: number;
  /** The least time (game seconds) between two lines a character volunteers (the economy's). */
  volunteerIntervalS: number;
}

/**
 * Makes room in a character's full list of players met: drops those gone longer than the
 * greet-again time (each would be greeted as a newcomer anyway), or, when none has, the
 * quarter first met longest ago.
 */
function forgetPlayers(seen: Map<number, Seen>, timeS: number, greetAgainS: number): void {
  for (const [id, s] of seen) if (timeS - s.at > greetAgainS) seen.delete(id);
  if (seen.size < MAX_SEEN_PLAYERS) return;
  let drop = MAX_SEEN_PLAYERS >> 2;
  for (const id of seen.keys()) {
    if (drop-- === 0) break;
    seen.delete(id);
  }
}

/**
 * What, if anything, warrants a line now: speech owed an answer (reply), a notable event,
 * a player newly in range (greet) or one still near (idle, no more often than the economy
 * allows). Refreshes when each near player was last seen.
 */
export function situationOf(
  st: AgentSpeech,
  timeS: number,
  players: readonly NearbyPlayer[],
  event: NotableEvent | null,
  rules: SituationRules,
): SituationKind | null {
  const owed = st.owed;
  if (owed !== null) {
    // Speech heard long ago and never answered is stale: answering it now would be odd.
    if (timeS - owed[owed.length - 1]!.at_s <= rules.lineTtlS) return 'reply';
    st.owed = null;
  }
  if (event) return 'event';
  let near = false;
  let newcomer = false;
  for (let i = 0; i < players.length; i++) {
    const p = players[i]!;
    if (!(p.distance_m <= rules.rangeM)) continue;
    near = true;
    const seen = (st.seen ??= new Map());
    const last = seen.get(p.id);
    if (last === undefined) {
      newcomer = true;
      if (seen.size >= MAX_SEEN_PLAYERS) forgetPlayers(seen, timeS, rules.greetAgainS);
      seen.set(p.id, { at: timeS });
    } else {
      if (timeS - last.at > rules.greetAgainS) newcomer = true;
      last.at = timeS;
    }
  }
  if (!near || timeS - st.lastVolunteerAt < rules.volunteerIntervalS) return null;
  return newcomer ? 'greet' : 'idle';
}

/** What the model is asked for one line: the game, the character, its memory and the situation. */
export function lineParams(
  bundle: Pick<ConfigBundle, 'policy' | 'game' | 'flavor'>,
  ctx: DialogueContext,
  kind: SituationKind,
  heard: readonly HeardLine[],
  event: NotableEvent | null,
  rangeM: number,
  maxChars: number,
): LineParams {
  const p = ctx.persona;
  const flavorOn = bundle.policy.flavor !== false && bundle.flavor.enabled;
  const traits: Record<string, number> = {};
  for (const [k, v] of Object.entries(p.traits)) if (typeof v === 'number') traits[k] = v;
  const near = ctx.players
    .filter((pl) => pl.distance_m <= rangeM * 3)
    .sort((a, b) => a.distance_m - b.distance_m)
    .slice(0, MAX_NAMED_PLAYERS);
  const emotion = p.emotion ? `${p.emotion.intensity >= 0.67 ? 'very ' : p.emotion.intensity < 0.34 ? 'a little ' : ''}${p.emotion.name}` : '';
  return {
    game: bundle.game ? { ...bundle.game } : null,
    character: { name: p.name, role: p.role, traits, themes: flavorOn ? [...p.themes] : [], goal: p.goal, emotion },
    flavor: flavorOn ? bundle.flavor.global : '',
    memory: bundle.policy.memory !== false ? p.memory : '',
    situation: {
      kind,
      doing: ctx.doing,
      players: near.map((pl) => ({ name: pl.name, distance_m: pl.distance_m })),
      heard: heard.map((h) => ({ from: h.name ?? (h.from >= 0 ? nameOf(ctx.players, h.from) : 'someone'), text: h.text })),
      event: event ? `${event.kind}${event.detail ? `: ${event.detail}` : ''}` : '',
    },
    max_chars: maxChars,
  };
}

function nameOf(players: readonly NearbyPlayer[], id: number): string {
  for (const p of players) if (p.id === id) return p.name;
  return `#${id}`;
}

/** The player names a line may mention (kept out of the phrase cache unless the bundle allows them). */
export function playerNames(players: readonly NearbyPlayer[], heard: readonly HeardLine[]): string[] {
  const names: string[] = [];
  for (const p of players) if (p.name) names.push(p.name);
  for (const h of heard) if (h.name) names.push(h.name);
  return names;
}
