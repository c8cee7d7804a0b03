import { isIP } from 'node:net';

/**
 * True when a host name or address can only reach this machine: `localhost` (and names under
 * `.localhost`), 127.0.0.0/8, ::1 and the IPv4-mapped form of 127.0.0.0/8. Plain HTTP is
 * admitted only there, because nothing on a loopback interface leaves the machine.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || h.startsWith('::ffff:127.') || /^::ffff:7f[0-9a-f]{2}:/.test(h);
  return false;
}
