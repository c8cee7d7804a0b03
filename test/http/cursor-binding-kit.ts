import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../helpers/embedded.js';
import { repoRoot } from '../helpers/paths.js';

/** The lists of the property-video API, checked by cursor-binding-video.test.ts. */
export const VIDEO_LISTS = ['assets', 'audio', 'properties', 'videos'];

/** Every list a route of src/ pages with ListPage, by its name. */
export function pagedLists(): string[] {
  const paged = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) for (const m of readFileSync(path, 'utf8').matchAll(/new ListPage\(req, \{ list: '([a-z-]+)'/g)) paged.add(m[1]!);
    }
  };
  walk(join(repoRoot, 'src'));
  return [...paged].sort();
}

/** A list as one caller reads it: its path (with any filters) and the credential. */
export interface ListRead {
  /** The list's name in its route (ListPage's scope), on the first of each pair. */
  list?: string;
  name: string;
  path: string;
  token: string;
}

export type Call = TestServer['call'];

/** The cursor of the first page of a list read one item a page, from next_cursor or the Link header. */
export async function firstCursor(call: Call, l: ListRead): Promise<string> {
  const r = await call('GET', `${l.path}${l.path.includes('?') ? '&' : '?'}limit=1`, { token: l.token });
  assert.equal(r.status, 200, `${l.name}: ${JSON.stringify(r.body)}`);
  // A bare array, and the drill-down (a tenant with one page of its servers), name the next page in a Link header.
  if (!('next_cursor' in r.body)) {
    const link = r.headers.get('link') ?? '';
    const m = /[?&]cursor=([^&>]+)/.exec(link);
    assert.ok(m, `${l.name}: a Link to the next page (${link})`);
    return decodeURIComponent(m[1]!);
  }
  assert.equal(typeof r.body.next_cursor, 'string', `${l.name}: a next_cursor`);
  return r.body.next_cursor as string;
}

export function withCursor(l: ListRead, cursor: string, limit = 1): string {
  return `${l.path}${l.path.includes('?') ? '&' : '?'}limit=${limit}&cursor=${encodeURIComponent(cursor)}`;
}

export async function refused(call: Call, l: ListRead, cursor: string, why: string): Promise<void> {
  const r = await call('GET', withCursor(l, cursor), { token: l.token });
  assert.equal(r.status, 400, `${why}: ${l.name} took it (${JSON.stringify(r.body)})`);
  assert.deepEqual(Object.keys(r.body), ['error'], why);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message'], why);
  assert.equal(r.body.error.code, 'bad_request', why);
}

export const ok = (r: { status: number; body: unknown }, what: string, status = 201) => {
  assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
  return r.body as any;
};

/**
 * Each list with the same list as someone else reads it ([own, foreign]): its cursor pages it
 * (whatever the page size), and the foreign list, every other list, and the cursor with a
 * character changed are refused.
 */
export async function checkLists(call: Call, lists: [ListRead, ListRead][]): Promise<void> {
  const cursors = new Map<string, string>();
  for (const [own, foreign] of lists) {
    const cursor = await firstCursor(call, own);
    cursors.set(own.name, cursor);
    const next = await call('GET', withCursor(own, cursor, 2), { token: own.token });
    assert.equal(next.status, 200, `${own.name}: ${JSON.stringify(next.body)}`);
    await refused(call, foreign, cursor, `${own.name}'s cursor on ${foreign.name}`);
    // A character changed (at the start, in the position, in the digest) is no cursor.
    for (const i of [0, Math.floor(cursor.length / 3), Math.floor((2 * cursor.length) / 3), cursor.length - 1]) {
      const flipped = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
      await refused(call, own, flipped, `${own.name}'s cursor changed at ${i}`);
    }
  }
  for (const [own] of lists) for (const [from] of lists) if (from.name !== own.name) await refused(call, own, cursors.get(from.name)!, `${from.name}'s cursor`);
}

/** A filtered list's cursor pages it (and the list with its empty filters left out), and the same list with other filters refuses it. */
export async function checkFilters(call: Call, filtered: [ListRead, string[]][]): Promise<void> {
  for (const [own, others] of filtered) {
    const cursor = await firstCursor(call, own);
    assert.equal((await call('GET', withCursor(own, cursor), { token: own.token })).status, 200, own.name);
    const bare = own.path.replace(/[?&][a-z_]+=(?=&|$)/g, '');
    if (bare !== own.path)
      assert.equal((await call('GET', withCursor({ ...own, path: bare }, cursor), { token: own.token })).status, 200, `${own.name} without its empty filter`);
    for (const path of others) await refused(call, { ...own, path }, cursor, `${own.name}'s cursor on ${path}`);
  }
}
