import { HttpError } from './errors.js';
import type { Request } from './server.js';
import { ID_DIGITS, limitParam } from './validate.js';

/**
 * Page sizes of a list whose body is a bare array (the specification's `Tenant[]`,
 * `ConfigVersion[]`): `?limit=` from 1 to 100 like every list, but 100 when absent, so a client
 * that knows nothing of pages (the specification names none) gets as much as any page holds.
 */
export const ARRAY_PAGE_LIMIT = { default: 100, max: 100 } as const;

/** What a bare-array list's request asks for: `?limit=` (ARRAY_PAGE_LIMIT) and the position `?cursor=` names. */
export function arrayPageRead(req: Request): { limit: number; from: number | null } {
  return { limit: limitParam(req, ARRAY_PAGE_LIMIT.default, ARRAY_PAGE_LIMIT.max), from: decodeCursor(req) };
}

/**
 * Cursors are opaque to clients: the position (an id, a version) the previous page ended on,
 * versioned so the format can change. Every paginated list of every service uses this one form.
 */
export function encodeCursor(after: number | null): string | null {
  return after === null ? null : Buffer.from(`v1:${after}`).toString('base64url');
}

/**
 * The position `?cursor=` names, null when absent. Only the exact text encodeCursor makes is
 * one: base64url decoding skips characters it does not know and padding, and digits may carry
 * leading zeros, so a cursor with text added or changed would otherwise still name a page.
 */
export function decodeCursor(req: Request): number | null {
  const raw = req.searchParams().get('cursor');
  if (raw === null || raw === '') return null;
  const m = /^v1:(\d{1,15})$/.exec(Buffer.from(raw, 'base64url').toString('latin1'));
  if (!m || !ID_DIGITS.test(m[1]!) || encodeCursor(Number(m[1])) !== raw)
    throw new HttpError('bad_request', 'cursor is not one this API issued; pass the cursor of the previous page as it was given.');
  return Number(m[1]);
}

/**
 * The headers of one page of a list whose body is a bare array (the specification's `Tenant[]`,
 * `ConfigVersion[]`): `Link: <same path and query, cursor replaced>; rel="next"` (RFC 8288) when
 * there is a next page, nothing on the last.
 */
export function nextPageHeaders(req: Request, next: number | null): Record<string, string> {
  const cursor = encodeCursor(next);
  if (cursor === null) return {};
  const query = new URLSearchParams(req.searchParams());
  query.set('cursor', cursor);
  return { link: `<${req.path}?${query.toString()}>; rel="next"` };
}
