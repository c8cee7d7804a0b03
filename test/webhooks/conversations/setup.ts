import { ADMIN_TOKEN, startTestServer, tenantSession, type TestServer } from '../../helpers/embedded.js';
import type { EmbeddedOptions } from '../../../src/embedded/start.js';

export const PAGE = 'https://shop.example';

export interface Frame {
  event: string;
  data: any;
  id: string | null;
}

/** Parses a whole server-sent-events text into frames (comments and retry lines skipped). */
export function parseFrames(text: string): Frame[] {
  const out: Frame[] = [];
  for (const block of text.split('\n\n')) {
    let event = 'message';
    let data = '';
    let id: string | null = null;
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
      else if (line.startsWith('id: ')) id = line.slice(4);
    }
    if (data) out.push({ event, data: JSON.parse(data), id });
  }
  return out;
}

/** A live event stream: frames as they arrive, and a wait for one that matches. */
export async function openStream(url: string, token: string, origin = PAGE) {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, origin }, signal: controller.signal });
  const frames: Frame[] = [];
  const waiters: { test: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
  let ended = false;
  const done = (async () => {
    if (!res.body) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          for (const f of parseFrames(buf.slice(0, cut + 2))) {
            frames.push(f);
            for (const w of [...waiters])
              if (w.test(f)) {
                waiters.splice(waiters.indexOf(w), 1);
                w.resolve(f);
              }
          }
          buf = buf.slice(cut + 2);
        }
      }
    } catch {
      // aborted by close()
    }
    ended = true;
  })();
  return {
    res,
    frames,
    get ended() {
      return ended;
    },
    next(test: (f: Frame) => boolean): Promise<Frame> {
      const found = frames.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
    done,
    close() {
      controller.abort();
    },
  };
}

/** A server with a tenant, a session and one widget whose allowed origins list PAGE. */
export async function widgetServer(options: Partial<EmbeddedOptions> = {}) {
  const s: TestServer = await startTestServer({ allowPrivateWebhooks: true, ...options });
  const { token, tenantId } = await tenantSession(s);
  const w = await s.call('POST', '/v1/widgets', { token, body: { name: 'Shop' } });
  if (w.status !== 201) throw new Error(`create widget: ${w.status} ${JSON.stringify(w.body)}`);
  const widgetId = w.body.id as string;
  const patch = async (body: Record<string, unknown>) => {
    const r = await s.call('PATCH', `/v1/widgets/${widgetId}`, { token, body });
    if (r.status !== 200) throw new Error(`patch widget: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await patch({ allowed_origins: [PAGE] });
  /** A visitor call from a page of `origin`. */
  const visitor = async (method: string, path: string, opts: { token?: string; body?: unknown; origin?: string } = {}) => {
    const headers: Record<string, string> = { origin: opts.origin ?? PAGE };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(s.url + path, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    return {
      status: res.status,
      headers: res.headers,
      body: type.includes('json') && text ? JSON.parse(text) : text,
      frames: type.includes('event-stream') ? parseFrames(text) : [],
    };
  };
  const start = async (visitorId?: string) => {
    const r = await visitor('POST', `/v1/widgets/${widgetId}/conversations`, { body: visitorId ? { visitor_id: visitorId } : {} });
    if (r.status !== 201) throw new Error(`start: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { conversation_id: string; visitor_id: string; token: string };
  };
  const say = (c: { conversation_id: string; token: string }, text: string) =>
    visitor('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: c.token, body: { text } });
  const suspend = () => s.call('POST', `/v1/admin/tenants/${tenantId}/suspend`, { token: ADMIN_TOKEN });
  return { s, token, tenantId, widgetId, patch, visitor, start, say, suspend };
}
