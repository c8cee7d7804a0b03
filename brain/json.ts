/** A JSON object as parsed: what validators narrow `unknown` to before reading fields. */
export type Obj = Record<string, unknown>;

/** A non-null, non-array object. */
export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
