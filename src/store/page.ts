/**
 * One page of a list read with `LIMIT limit + 1`: the first `limit` rows, and the position of
 * the last of them when the extra row shows that more follow (null on the last page).
 */
export function pageOf<T>(rows: T[], limit: number, position: (row: T) => number): { data: T[]; nextCursor: number | null } {
  if (rows.length <= limit) return { data: rows, nextCursor: null };
  const data = rows.slice(0, limit);
  return { data, nextCursor: position(data[limit - 1]!) };
}

/** Where a list read starts and how many rows it takes: rows past `from` (null: from the first) in the list's own order. */
export interface PageRead {
  limit: number;
  from: number | null;
}
