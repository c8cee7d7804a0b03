/**
 * Micro-benchmark of the /tick hot functions, old and new side by side on the same corpus:
 * the generic codec's decode (depth and poisoned-key pre-scans) against decodeTick, the exact
 * decode-and-validate path against the fast JSON reader, and reply encoding. Times are per call, best of several rounds.
 */
import { encode } from '@msgpack/msgpack';
import { parseTickRequest, type TickResponse } from '../../brain/index.js';
import { decodeBody, encodeBody } from '../../src/http/codec.js';
import { encodeTick } from '../../src/sidecar/tick/handler.js';
import { decodeTick } from '../../src/sidecar/tick/tick-exact.js';
import { readTickJson } from '../../src/sidecar/tick/tick-json.js';
import { readTickMsgpack } from '../../src/sidecar/tick/tick-msgpack.js';
import { generateTicks } from './scenarios.js';

export interface MicroRow {
  name: string;
  ns_per_call: number;
}

function time(calls: number, rounds: number, fn: (i: number) => unknown): number {
  let sink: unknown;
  for (let i = 0; i < calls; i++) sink = fn(i);
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) sink = fn(i);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / calls);
  }
  if (sink === Symbol.for('never')) process.stdout.write('');
  return Math.round(best);
}

export function runTickMicro(calls = 50_000, rounds = 5): MicroRow[] {
  const ticks = generateTicks({ agents: 1000, count: 1000, seed: 7 });
  const json = ticks.map((t) => Buffer.from(JSON.stringify(t)));
  const msgpack = ticks.map((t) => Buffer.from(encode(t)));
  const values = ticks.map((t) => JSON.parse(JSON.stringify(t)) as unknown);
  const n = ticks.length;
  const reply: TickResponse = {
    agent: 17,
    posture: 'crouched',
    intents: [
      { kind: 'Face', yaw_deg: 87.5 },
      { kind: 'Engage', target: 3, fire: true },
      { kind: 'MoveTo', to: { x: 1205, y: 8, z: 4402 }, speed: 'jog' },
    ],
  };
  return [
    { name: 'decode JSON: generic codec (baseline)', ns_per_call: time(calls, rounds, (i) => decodeBody(json[i % n]!, 'application/json')) },
    { name: 'decode JSON: decodeTick', ns_per_call: time(calls, rounds, (i) => decodeTick(json[i % n]!, 'application/json')) },
    { name: 'decode msgpack: generic codec (baseline)', ns_per_call: time(calls, rounds, (i) => decodeBody(msgpack[i % n]!, 'application/msgpack')) },
    { name: 'decode msgpack: decodeTick', ns_per_call: time(calls, rounds, (i) => decodeTick(msgpack[i % n]!, 'application/msgpack')) },
    { name: 'parseTickRequest', ns_per_call: time(calls, rounds, (i) => parseTickRequest(values[i % n])) },
    {
      name: 'decode + validate JSON: exact path, decodeTick + parseTickRequest (baseline)',
      ns_per_call: time(calls, rounds, (i) => parseTickRequest(decodeTick(json[i % n]!, 'application/json').value)),
    },
    { name: 'decode + validate JSON: readTickJson (fast path)', ns_per_call: time(calls, rounds, (i) => readTickJson(json[i % n]!)) },
    {
      name: 'decode + validate msgpack: exact path, decodeTick + parseTickRequest (baseline)',
      ns_per_call: time(calls, rounds, (i) => parseTickRequest(decodeTick(msgpack[i % n]!, 'application/msgpack').value)),
    },
    { name: 'decode + validate msgpack: readTickMsgpack (fast path)', ns_per_call: time(calls, rounds, (i) => readTickMsgpack(msgpack[i % n]!)) },
    { name: 'encode msgpack reply: generic codec (baseline)', ns_per_call: time(calls, rounds, () => encodeBody(reply, 'msgpack')) },
    { name: 'encode msgpack reply: encodeTick', ns_per_call: time(calls, rounds, () => encodeTick(reply, 'msgpack')) },
    { name: 'encode JSON reply: JSON.stringify (baseline)', ns_per_call: time(calls, rounds, () => JSON.stringify(reply)) },
    { name: 'encode JSON reply: encodeTick', ns_per_call: time(calls, rounds, () => encodeTick(reply, 'json')) },
  ];
}

export function formatMicro(rows: MicroRow[]): string {
  return ['| function | ns/call |', '|---|--:|', ...rows.map((r) => `| ${r.name} | ${r.ns_per_call} |`)].join('\n');
}
