import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local stand-in for api.stripe.com speaking its wire format for Checkout Sessions. */
export async function fakeStripe() {
  const seen: { method: string; path: string; auth: string | undefined; form: URLSearchParams }[] = [];
  const sessions = new Map<string, { id: string; object: string; status: string; url: string; mode: string }>();
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString();
  };
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const form = new URLSearchParams(await read(req));
    seen.push({ method: req.method!, path: req.url!, auth: req.headers.authorization, form });
    res.setHeader('content-type', 'application/json');
    if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
      const id = `cs_test_${sessions.size + 1}`;
      const session = { id, object: 'checkout.session', status: 'open', url: `https://checkout.stripe.test/c/pay/${id}`, mode: form.get('mode') ?? '' };
      sessions.set(id, session);
      res.end(JSON.stringify(session));
      return;
    }
    const m = /^\/v1\/checkout\/sessions\/([^/?]+)$/.exec(req.url ?? '');
    if (req.method === 'GET' && m && sessions.has(m[1]!)) {
      res.end(JSON.stringify(sessions.get(m[1]!)));
      return;
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'No such resource' } }));
  };
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, sessions, close: () => new Promise<void>((r) => server.close(() => r())) };
}
