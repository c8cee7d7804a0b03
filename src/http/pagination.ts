import { createHash } from 'node:crypto';
import { HttpError } from './errors.js';
import type { Request } from './server.js';
import { ID_DIGITS, limitParam } from './validate.js';

/** Page sizes of a `{data, next_cursor}` list: `?limit=` from 1 to 100, 20 when absent. */
export const DATA_PAGE_LIMIT = { default: 20, max: 100 } as const;

/**
 * Page sizes of a list whose body is a bare array (the specification's `Tenant[]`,
 * `ConfigVersion[]`): `?limit=` from 1 to 100 like every list, but 100 when absent, so a client
 * that knows nothing of pages (the specification names none) gets as much as any page holds.
 */
export const ARRAY_PAGE_LIMIT = { default: 100, max: 100 } as const;

/**
 * The one list a cursor pages. Its route path parameters (`/v1/widgets/{id}/webhooks`'s widget)
 * are part of it too, read from the request.
 */
export interface ListScope {
  /** The list's name, one per route (`properties`, `deliveries`). */
  list: string;
  /** Whose list it is: `tenant:7`, `user:3` (a user's own tokens), `widget:wid_…` (an endpoint's deliveries), `admin`. */
  owner: string;
  /** The filters its page was read with (absent ones undefined, null or ''), as the route read them. */
  filters?: Readonly<Record<string, string | number | null | undefined>>;
}

/** Bytes of the digest a cursor carries: enough that a cursor of another list never matches by chance. */
const DIGEST_BYTES = 12;
const CURSOR_FORM = /^v2:(\d{1,15}):([A-Za-z0-9_-]{16})$/;

/**
 * One page of one list: its size, where it starts, and the cursor of the page after it.
 *
 * A cursor is the position (an id, a version) the previous page ended on, with a digest of the
 * list it came from: the list's name, who read it, its path parameters and its filters. So a
 * cursor is taken only by the list that gave it: another list, another tenant's, the same list
 * with another filter, or a cursor with any character changed is a 400 that reads nothing. The
 * page size is not part of it: a client may change `?limit=` between pages. The digest is not a
 * secret (a client that recomputes one reaches only rows its own credential may read, since every
 * list is read for the credential's tenant); it makes a mixed-up or mangled cursor an error
 * rather than a silently wrong page.
 */
export class ListPage {
  readonly limit: number;
  /** The position `?cursor=` names (rows past it, in the list's order); null from the first. */
  readonly from: number | null;
  private readonly scope: string;

  constructor(
    private readonly req: Request,
    scope: ListScope,
    size: { default: number; max: number } = DATA_PAGE_LIMIT,
  ) {
    this.limit = limitParam(req, size.default, size.max);
    this.scope = scopeText(req, scope);
    this.from = this.decode(req.searchParams().get('cursor'));
  }

  /** The `next_cursor` of this page, whose last row is at `after` (null: the last page). */
  cursor(after: number | null): string | null {
    return after === null ? null : Buffer.from(`v2:${after}:${this.digest(after)}`).toString('base64url');
  }

  /**
   * The headers of this page of a list whose body is a bare array (the specification's
   * `Tenant[]`, `ConfigVersion[]`): `Link: <same path and query, cursor replaced>; rel="next"`
   * (RFC 8288) when there is a next page, nothing on the last.
   */
  nextPageHeaders(after: number | null): Record<string, string> {
    const cursor = this.cursor(after);
    if (cursor === null) return {};
    const query = new URLSearchParams(this.req.searchParams());
    query.set('cursor', cursor);
    return { link: `<${this.req.path}?${query.toString()}>; rel="next"` };
  }

  private digest(position: number): string {
    return createHash('sha256').update(`${this.scope}\n${position}`).digest().subarray(0, DIGEST_BYTES).toString('base64url');
  }

  /**
   * Only the exact text cursor() made for this list is a cursor: base64url decoding skips
   * characters it does not know and padding, and digits may carry leading zeros, so a cursor
   * with text added or changed would otherwise still name a page.
   */
  private decode(raw: string | null): number | null {
    if (raw === null || raw === '') return null;
    const text = Buffer.from(raw, 'base64url').toString('latin1');
    const m = CURSOR_FORM.exec(text);
    if (!m || !ID_DIGITS.test(m[1]!) || Buffer.from(text).toString('base64url') !== raw)
      throw new HttpError('bad_request', 'cursor is not one this API issued; pass the next_cursor of the previous page as it was given.');
    const position = Number(m[1]);
    if (m[2] !== this.digest(position))
      throw new HttpError(
        'bad_request',
        'cursor belongs to another list (another path, account or filter); page a list with the cursors it gave, keeping its filters.',
      );
    return position;
  }
}

/** The list as text: every part is named and one to a line, so no two lists read alike. */
function scopeText(req: Request, scope: ListScope): string {
  const parts = [`list=${scope.list}`, `owner=${scope.owner}`];
  for (const name of Object.keys(req.params).sort()) parts.push(`param.${name}=${req.params[name]}`);
  const filters = scope.filters ?? {};
  for (const name of Object.keys(filters).sort()) {
    const value = filters[name];
    // Empty is not given, as on every list's filter (a form's unselected filter sends `status=`).
    if (value !== undefined && value !== null && value !== '') parts.push(`filter.${name}=${value}`);
  }
  return `brainstem list cursor v2\n${parts.map((p) => JSON.stringify(p)).join('\n')}`;
}
