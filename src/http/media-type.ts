/**
 * The first parameter a media type (a Content-Type value) names twice, lower-cased, or null.
 * `multipart/form-data; boundary=a; boundary=b` says two things: a form parser takes the first
 * and a proxy or a logger in front may take the last, so the body splits differently for each.
 * Names are compared case-insensitively (`Boundary` and `boundary` are one); a quoted value may
 * hold `;` and `\"`. A parameter without `=` is skipped: it names nothing.
 */
export function repeatedParameter(value: string): string | null {
  const seen = new Set<string>();
  let i = value.indexOf(';');
  while (i >= 0) {
    const start = i + 1;
    const eq = value.indexOf('=', start);
    const semi = value.indexOf(';', start);
    if (eq < 0 || (semi >= 0 && semi < eq)) {
      i = semi;
      continue;
    }
    const name = value.slice(start, eq).trim().toLowerCase();
    if (seen.has(name)) return name;
    seen.add(name);
    i = eq + 1;
    while (value.charCodeAt(i) === 0x20 || value.charCodeAt(i) === 0x09) i++;
    if (value.charCodeAt(i) === 0x22) {
      for (i++; i < value.length && value.charCodeAt(i) !== 0x22; i++) if (value.charCodeAt(i) === 0x5c) i++;
      i++;
    }
    i = value.indexOf(';', i);
  }
  return null;
}
