/** A JSON object as parsed: what validators narrow `unknown` to before reading fields. */
export type Obj = Record<string, unknown>;

/**
 * A plain object (what JSON.parse and the MessagePack decoder make of a map); arrays, binary
 * data and extension values are not, though typeof calls them objects.
 */
export function isObj(v: unknown): v is Obj {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
