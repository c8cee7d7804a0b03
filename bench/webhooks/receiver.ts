// A bench receiver in its own process, so the dispatcher under test has its core to itself:
// answers 204 to every request and prints its port on the first stdout line. It counts requests
// and distinct delivery ids (webhook-id), so a delivery received twice shows. Told a failure
// fraction (`fail` message), it answers 503 to that fraction of first attempts (chosen by the
// delivery id, so a retry succeeds). It checks order: a conversation's deliveries to one path
// carry data.n = 0, 1, 2, …, and one accepted before an earlier one is counted out of order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';

let count = 0;
let failFraction = 0;
let failed = 0;
let outOfOrder = 0;
const seen = new Set<string>();
/** The highest data.n accepted per path and conversation. */
const last = new Map<string, number>();

function failsFirst(id: string): boolean {
  return failFraction > 0 && createHash('sha256').update(id).digest().readUInt32BE(0) / 2 ** 32 < failFraction;
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    count++;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') {
      if (!seen.has(id) && failsFirst(id)) {
        seen.add(id);
        failed++;
        res.writeHead(503);
        res.end();
        return;
      }
      seen.add(id);
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { conversation_id?: string; n?: number } };
    if (typeof body.data?.n === 'number') {
      const key = `${req.url} ${body.data.conversation_id}`;
      const before = last.get(key) ?? -1;
      if (body.data.n < before) outOfOrder++;
      else last.set(key, body.data.n);
    }
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('message', (m: unknown) => {
  if (m === 'count') process.send?.({ count, distinct: seen.size, failed, outOfOrder });
  else if (typeof m === 'object' && m !== null && 'fail' in m) {
    failFraction = Number((m as { fail: number }).fail);
    count = 0;
    seen.clear();
    failed = 0;
    outOfOrder = 0;
    last.clear();
    process.send?.('ok');
  }
});
process.on('disconnect', () => process.exit(0));
