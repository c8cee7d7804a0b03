import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { fixtures } from '../helpers/paths.js';
import { createSender } from '../../src/net/sender.js';

test('HTTPS deliveries connect to the pinned address and still verify the certificate against the host name', async () => {
  const cert = readFileSync(join(fixtures, 'webhooks', 'receiver-cert.pem'), 'utf8');
  const key = readFileSync(join(fixtures, 'webhooks', 'receiver-key.pem'), 'utf8');
  const server = https.createServer({ cert, key }, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end(`host=${req.headers.host}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sender = createSender({ ca: [cert] });
  const pinned = [{ address: '127.0.0.1', family: 4 as const }];
  try {
    const ok = await sender.send({ url: new URL(`https://receiver.test:${port}/in`), addresses: pinned, headers: {}, body: '{}', timeoutMs: 5000 });
    assert.equal(ok.kind, 'response');
    assert.equal(ok.kind === 'response' && ok.status, 200);
    assert.equal(ok.kind === 'response' && ok.excerpt, `host=receiver.test:${port}`);
    const wrong = await sender.send({ url: new URL(`https://elsewhere.test:${port}/in`), addresses: pinned, headers: {}, body: '{}', timeoutMs: 5000 });
    assert.equal(wrong.kind, 'error');
    assert.match(wrong.kind === 'error' ? wrong.error : '', /ERR_TLS_CERT_ALTNAME_INVALID/);
  } finally {
    sender.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('sends sharing one abort signal put one listener on it; aborting it ends every send in flight, and a send under an aborted signal never connects', async () => {
  let arrived = 0;
  let threeArrived: () => void = () => {};
  const three = new Promise<void>((resolve) => (threeArrived = resolve));
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    if (++arrived === 3) threeArrived();
    req.resume();
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sender = createSender();
  const abort = new AbortController();
  const request = () =>
    sender.send({
      url: new URL(`http://127.0.0.1:${port}/in`),
      addresses: [{ address: '127.0.0.1', family: 4 }],
      headers: {},
      body: '{}',
      timeoutMs: 60_000,
      signal: abort.signal,
    });
  try {
    const sends = [request(), request(), request()];
    await three;
    assert.equal(getEventListeners(abort.signal, 'abort').length, 1);
    abort.abort();
    for (const outcome of await Promise.all(sends)) assert.equal(outcome.kind, 'error');
    const late = await request();
    assert.deepEqual([late.kind, late.kind === 'error' && late.error], ['error', 'aborted']);
    assert.equal(arrived, 3, 'the send under an aborted signal made no request');
  } finally {
    sender.close();
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('the sender writes Host from the URL (with its port) and Content-Length from the body, replacing any given, and validates every header', async () => {
  const seen: string[][] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.rawHeaders);
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sender = createSender();
  const send = (headers: Record<string, string>) =>
    sender.send({
      url: new URL(`http://receiver.test:${port}/in?x=1`),
      addresses: [{ address: '127.0.0.1', family: 4 }],
      headers,
      body: '{"é":1}',
      timeoutMs: 5000,
    });
  try {
    const ok = await send({ 'content-type': 'application/json', Host: 'evil.test', 'Content-Length': '1' });
    assert.equal(ok.kind === 'response' && ok.status, 204);
    const headers = seen[0]!;
    const values = (name: string) => headers.filter((_, i) => i % 2 === 1 && headers[i - 1]!.toLowerCase() === name);
    assert.deepEqual(values('host'), [`receiver.test:${port}`]);
    assert.deepEqual(values('content-length'), ['8'], 'UTF-8 bytes of the body');
    assert.deepEqual(values('content-type'), ['application/json']);
    await assert.rejects(send({ 'x-bad': 'a\r\nx-injected: 1' }), { code: 'ERR_INVALID_CHAR' });
    assert.equal(seen.length, 1);
  } finally {
    sender.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
