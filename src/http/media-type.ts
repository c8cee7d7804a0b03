/** The parameters of a media type (a Content-Type value), names lower-cased, values unquoted. */
export interface MediaParameters {
  readonly values: ReadonlyMap<string, string>;
  /**
   * The first parameter named twice, or null. `multipart/form-data; boundary=a; boundary=b`
   * says two things: a form parser takes the first and a proxy or a logger in front may take
   * the last, so the body splits differently for each.
   */
  readonly repeated: string | null;
}

/**
 * Reads the parameters after the type. Names are compared case-insensitively (`Boundary` and
 * `boundary` are one); a quoted value may hold `;` and `\"`. A parameter without `=` is
 * skipped: it names nothing.
 */
export function mediaParameters(value: string): MediaParameters {
  const values = new Map<string, string>();
  let repeated: string | null = null;
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
    i = eq + 1;
    while (value.charCodeAt(i) === 0x20 || value.charCodeAt(i) === 0x09) i++;
    let text = '';
    if (value.charCodeAt(i) === 0x22) {
      for (i++; i < value.length && value.charCodeAt(i) !== 0x22; i++) {
        if (value.charCodeAt(i) === 0x5c) i++;
        text += value.charAt(i);
      }
      i++;
    } else {
      const end = value.indexOf(';', i);
      text = value.slice(i, end < 0 ? value.length : end).trim();
    }
    if (values.has(name)) repeated ??= name;
    else values.set(name, text);
    i = value.indexOf(';', i);
  }
  return { values, repeated };
}
