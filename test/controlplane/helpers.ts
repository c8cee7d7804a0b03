import { signRequest } from '../../src/signing/request.js';
import type { TestServer } from '../helpers/embedded.js';

export interface Sidecar {
  serverId: number;
  key: string;
  keyId: number;
}

/** Creates a server for a session and issues it a key. */
export async function serverWithKey(s: TestServer, token: string, name = 'alpha'): Promise<Sidecar> {
  const created = await s.call('POST', '/v1/servers', { token, body: { name } });
  if (created.status !== 201) throw new Error(`create server: ${created.status} ${JSON.stringify(created.body)}`);
  const key = await s.call('POST', `/v1/servers/${created.body.id}/keys`, { token });
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${JSON.stringify(key.body)}`);
  return { serverId: created.body.id, key: key.body.key, keyId: key.body.id };
}

export interface SignedOptions {
  body?: unknown;
  /** Clock used for the signature (ms); default Date.now(). */
  at?: number;
  headers?: Record<string, string>;
  /** Rewrites the signed request before it is sent (to tamper with it). */
  tamper?: (r: { target: string; body: string | undefined; headers: Record<string, string> }) => void;
  /** Sign with this key instead of the bearer key. */
  signWith?: string;
  /** Sign this target instead of the one sent. */
  signTarget?: string;
}

/**
 * A signed sidecar request as spec 001 §5 describes it. Two identical requests in the same
 * second carry the same signature and the second is a replay, so tests that repeat a request
 * vary it with a `&n=` query parameter (covered by the signature, ignored by the route).
 */
export async function signed(s: TestServer, key: string, method: string, target: string, o: SignedOptions = {}) {
  const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  const sig = signRequest(o.signWith ?? key, { method, target: o.signTarget ?? target, ...(body !== undefined ? { body } : {}) }, o.at ?? Date.now());
  const headers: Record<string, string> = { ...sig, authorization: `Bearer ${key}`, ...o.headers };
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const req = { target, body, headers };
  o.tamper?.(req);
  const res = await fetch(s.url + req.target, { method, headers: req.headers, body: req.body });
  const text = await res.text();
  const parsed: any = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A valid telemetry report for a server, with overrides. */
export function report(serverId: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    serverId: String(serverId),
    ts: '2026-11-25T12:00:00Z',
    botCount: 12,
    playersOnline: 30,
    linesSpoken: 40,
    spendUsd: 0.25,
    events: [
      { kind: 'spoke', count: 40 },
      { kind: 'spawn', count: 2 },
    ],
    ...extra,
  };
}

/**
 * Limits for tests that send reports back to back: the default of 2 reports a second per
 * server (and 120 signed requests a minute per key) would refuse them; each such test raises
 * them explicitly with this.
 */
export const BURST_LIMITS = {
  serverKey: { limit: 100_000, windowMs: 60_000 },
  telemetryReports: { limit: 100_000, windowMs: 1000 },
};
