// A bench receiver in its own process, so the dispatcher under test has its core to itself:
// answers 204 to every request and prints its port on the first stdout line.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let count = 0;
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    count++;
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('message', (m) => {
  if (m === 'count') process.send?.({ count });
});
process.on('disconnect', () => process.exit(0));
