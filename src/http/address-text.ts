// Apart from server.ts so that `webhooks listen`, a node:http server, does not load uWebSockets.

/** `host:port` as an address is written, IPv6 in brackets. */
export function addressText(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
