export type RangeRequest = { kind: 'whole' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Reads a `Range: bytes=…` header for a file of `size` bytes. One range is served as a 206;
 * several ranges, other units or malformed headers are ignored (the whole file, as RFC 9110
 * allows); a well-formed range that starts past the end is unsatisfiable.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (!header) return { kind: 'whole' };
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'whole' };
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}

/** Whether If-None-Match names this ETag (weak comparison, as RFC 9110 asks for it). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (t: string): string => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => opaque(t) === opaque(etag));
}
