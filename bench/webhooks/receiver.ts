// A bench receiver in its own process, so the dispatcher under test has its core to itself:
// answers 204 to every request and prints its port on the first stdout line. It counts requests
// and distinct delivery ids (webhook-id), so a delivery received twice shows.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let count = 0;
const seen = new Set<string>();
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    count++;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') seen.add(id);
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('message', (m) => {
  if (m === 'count') process.send?.({ count, distinct: seen.size });
});
process.on('disconnect', () => process.exit(0));
