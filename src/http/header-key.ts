/**
 * Fixed text handed to uWS on every request of a hot route (a header name to look up, a
 * prepared status block), as bytes of its own. uWS converts a string argument to UTF-8 on every
 * call (V8 measures it, then copies it out, into memory it allocates when the text is long);
 * an ArrayBuffer is read where it lies. About 50 ns a header read (bench/RESULTS.md, issue #36).
 */
export function headerKey(text: string): ArrayBuffer {
  return new TextEncoder().encode(text).buffer as ArrayBuffer;
}

/** `Content-Encoding`, read before the body on every route that takes one (see contentCodingRefusal). */
export const CONTENT_ENCODING = headerKey('content-encoding');
