import { encode } from '@msgpack/msgpack';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { startSidecar, type Sidecar, type SidecarOptions, type SidecarTelemetry } from '../../src/sidecar/service.js';

export type Enc = 'json' | 'msgpack';

/** A telemetry report of a sidecar with two characters, one player and dialogue off; `over` replaces any of its fields. */
export function quietTelemetry(over: Partial<SidecarTelemetry> = {}): SidecarTelemetry {
  return {
    events: {},
    roster: [],
    agents: 2,
    playersOnline: 1,
    linesSpoken: 0,
    llmTokens: 0,
    ttsCharacters: 0,
    spendUsd: 0,
    llmUsd: 0,
    ttsUsd: 0,
    cacheHits: 0,
    dialogue: null,
    linesFrom: { source: 'none' },
    ...over,
  };
}

export function startTest(options: Partial<SidecarOptions> = {}): Promise<Sidecar> {
  return startSidecar({ host: '127.0.0.1', port: 0, source: new DefaultsSource(), workers: 0, ...options });
}

export interface Answer {
  status: number;
  contentType: string | null;
  bytes: Buffer;
  json(): unknown;
}

export function post(url: string, body: unknown, enc: Enc = 'json', headers: Record<string, string> = {}): Promise<Answer> {
  return postTo(`${url}/tick`, body, enc, headers);
}

/** POSTs a body (encoded from a value unless it is already a string or bytes) to any URL. */
export async function postTo(target: string, body: unknown, enc: Enc = 'json', headers: Record<string, string> = {}): Promise<Answer> {
  const payload = typeof body === 'string' || body instanceof Uint8Array ? body : enc === 'json' ? JSON.stringify(body) : encode(body);
  const res = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': enc === 'json' ? 'application/json' : 'application/msgpack', ...headers },
    body: payload,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, contentType: res.headers.get('content-type'), bytes, json: () => JSON.parse(bytes.toString('utf8')) };
}

/** A valid tick with every optional part present. */
export function fullTick(agent = 17): Record<string, unknown> {
  return {
    snapshot: {
      agent,
      time_s: 812.5,
      self_state: {
        pos: { x: 1200, y: 8, z: 4400 },
        heading_deg: 90,
        health: 100,
        blood: 5000,
        hunger: 50,
        thirst: 50,
        has_weapon: true,
        ammo: 30,
      },
      targets: [{ id: 3, kind: 'player', pos: { x: 1210, y: 8, z: 4405 }, hostile: true, visible: true, name: 'Alex', health: 80 }],
      route: [
        { x: 1200, y: 8, z: 4400 },
        { x: 1300, y: 8, z: 4400 },
      ],
      poi: [{ id: 'well', kind: 'water', pos: { x: 1250, y: 8, z: 4380 } }],
      heard: [{ from: 3, text: 'hello there', at_s: 811.9 }],
      squad: 'alpha',
    },
    profile: { name: 'Mira', role: 'survivor', coward: false, traits: { openness: 0.6, neuroticism: 0.3 } },
  };
}
