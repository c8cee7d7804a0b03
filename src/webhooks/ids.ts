import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A prefixed random id (`wid_`, `ep_`, `evt_`, `dlv_`, `wk_`): 20 characters of [0-9a-z], ~103 bits. */
export function newId<T extends string>(prefix: string): T {
  const bytes = randomBytes(20);
  let out = prefix;
  for (const b of bytes) out += ALPHABET[b % 36];
  return out as T;
}
