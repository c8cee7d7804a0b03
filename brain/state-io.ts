import { fieldsAddedAfter } from './agent-fields.js';
import type { AgentState } from './state.js';
import { STATE_SCHEMA, fromPlain, toPlain, type Field, type PlainAgent, type Schema } from './state-schema.js';
import { isObj } from './json.js';
import type { Problem } from './types.js';

/**
 * The brain's persistent state as a JSON-serialisable, versioned document, so the sidecar can
 * keep memory across restarts. Import checks every field: a document from a newer version, a
 * hand-edited file or a truncated write is refused whole with the problems listed, never half
 * applied.
 */

export const STATE_FORMAT = 'brainstem.brain-state';
export const STATE_VERSION = 5;
/** Layouts this brain reads: 1 lacks the believable-behaviour clocks, 2 the pause and detour clocks, 3 the squad leader's stray clock, 4 the kept coward flag; missing fields load as "nothing under way" (not flagged a coward). */
const READS_VERSIONS: readonly number[] = [1, 2, 3, 4, 5];
/** More agents than any store would keep: a document above it is not ours. */
const MAX_AGENTS_IN_STATE = 1_000_000;

export interface BrainState {
  format: typeof STATE_FORMAT;
  version: typeof STATE_VERSION;
  agents: PlainAgent[];
}

export class BrainStateError extends Error {
  readonly code = 'invalid_brain_state';
  constructor(readonly problems: Problem[]) {
    super(
      `invalid brain state: ${problems
        .slice(0, 5)
        .map((p) => `${p.path || '(root)'} ${p.message}`)
        .join('; ')}${problems.length > 5 ? ` (+${problems.length - 5} more)` : ''}`,
    );
    this.name = 'BrainStateError';
  }
}

/** A deep copy of the agents, ordered by id so two exports of equal state are equal text. */
export function exportAgents(agents: Iterable<AgentState>): BrainState {
  const list = [...agents].sort((a, b) => a.id - b.id).map(toPlain);
  return { format: STATE_FORMAT, version: STATE_VERSION, agents: list };
}

const MAX_PROBLEMS = 50;

function check(v: unknown, f: Field, path: string, out: Problem[]): void {
  if (out.length >= MAX_PROBLEMS) return;
  if (typeof f === 'string') {
    switch (f) {
      case 'num':
        if (typeof v !== 'number' || !Number.isFinite(v)) out.push({ path, message: 'must be a finite number' });
        return;
      case 'int':
        if (typeof v !== 'number' || !Number.isSafeInteger(v)) out.push({ path, message: 'must be an integer' });
        return;
      case 'str':
        if (typeof v !== 'string') out.push({ path, message: 'must be a string' });
        return;
      case 'bool':
        if (typeof v !== 'boolean') out.push({ path, message: 'must be a boolean' });
        return;
    }
  }
  if ('intIn' in f) {
    const [lo, hi] = f.intIn;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < lo || v > hi) out.push({ path, message: `must be an integer from ${lo} to ${hi}` });
  } else if ('unit' in f) {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) out.push({ path, message: 'must be a number between 0 and 1' });
  } else if ('enum' in f) {
    if (typeof v !== 'string' || !f.enum.includes(v)) out.push({ path, message: `must be one of ${f.enum.map((s) => JSON.stringify(s)).join(', ')}` });
  } else if ('arr' in f) {
    if (!Array.isArray(v)) out.push({ path, message: 'must be an array' });
    else if (v.length > f.max) out.push({ path, message: `must have at most ${f.max} items` });
    else v.forEach((item, i) => check(item, f.arr, `${path}[${i}]`, out));
  } else if ('nullable' in f) {
    if (v !== null) check(v, f.nullable, path, out);
  } else {
    checkObject(v, f.obj, path, out);
  }
}

function checkObject(v: unknown, schema: Schema, path: string, out: Problem[]): void {
  if (!isObj(v)) {
    out.push({ path, message: 'must be an object' });
    return;
  }
  for (const key of Object.keys(schema)) {
    if (!(key in v)) out.push({ path: `${path}.${key}`, message: 'is required' });
    else check(v[key], schema[key]!, `${path}.${key}`, out);
  }
  for (const key of Object.keys(v)) if (!(key in schema)) out.push({ path: `${path}.${key}`, message: 'is not a known field' });
}

/** Checks a document and returns its agents (fresh copies); throws BrainStateError otherwise. */
export function parseState(value: unknown): AgentState[] {
  const problems: Problem[] = [];
  if (!isObj(value)) throw new BrainStateError([{ path: '', message: 'must be an object' }]);
  if (value.format !== STATE_FORMAT) problems.push({ path: 'format', message: `must be ${JSON.stringify(STATE_FORMAT)}` });
  if (typeof value.version !== 'number' || !READS_VERSIONS.includes(value.version))
    problems.push({ path: 'version', message: `must be one of ${READS_VERSIONS.join(', ')} (the layouts this brain reads)` });
  let agents = value.agents;
  // An older agent gains the later layouts' fields at their defaults; a copy, the caller's document is not touched.
  if (typeof value.version === 'number' && value.version < STATE_VERSION && Array.isArray(agents)) {
    const defaults = fieldsAddedAfter(value.version);
    agents = agents.map((a) => (isObj(a) ? { ...defaults, ...a } : a));
  }
  if (!Array.isArray(agents)) problems.push({ path: 'agents', message: 'must be an array' });
  else if (agents.length > MAX_AGENTS_IN_STATE) problems.push({ path: 'agents', message: `must have at most ${MAX_AGENTS_IN_STATE} items` });
  else {
    const seen = new Set<unknown>();
    agents.forEach((a, i) => {
      checkObject(a, STATE_SCHEMA, `agents[${i}]`, problems);
      const id = isObj(a) ? a.id : undefined;
      if (seen.has(id)) problems.push({ path: `agents[${i}].id`, message: 'is a duplicate' });
      seen.add(id);
    });
  }
  if (problems.length > 0) throw new BrainStateError(problems);
  return (agents as PlainAgent[]).map(fromPlain);
}
