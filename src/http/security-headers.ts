// Apart from server.ts so that `webhooks listen`, a node:http server, does not load uWebSockets.

/**
 * On every response of every service: no browser may guess a type other than the declared
 * one (a JSON error echoing input must never run as a script or style).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };
