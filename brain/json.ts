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

/** The most characters of a sent key or value an error quotes; past it the text is cut with '…'. */
export const MAX_QUOTED_CHARS = 64;

/** `text` as an error quotes it: at most MAX_QUOTED_CHARS characters (code points), never the megabytes a body may hold. */
export function quotedText(text: string): string {
  if (text.length <= MAX_QUOTED_CHARS) return text;
  let end = 0;
  for (let n = 0; n < MAX_QUOTED_CHARS && end < text.length; n++) end += (text.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  return end < text.length ? `${text.slice(0, end)}…` : text;
}

/** A sent value as an error quotes it: its JSON, cut as quotedText cuts. */
export function quotedValue(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(quotedText(v)) : quotedText(JSON.stringify(v) ?? String(v));
}
