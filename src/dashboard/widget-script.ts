import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpError } from '../http/errors.js';
import type { Reply } from '../http/reply.js';
import type { HttpServer, Request } from '../http/server.js';
import type { Logger } from '../log.js';

/** The repository root, from this file compiled at dist/src/dashboard/widget-script.js. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The widget script is at most this many bytes gzipped (checked by test/widget/size.test.ts). */
export const WIDGET_SCRIPT_MAX_GZIP_BYTES = 25 * 1024;
const WIDGET_ID = /^wid_[a-z0-9]{1,64}$/;

/**
 * Serves the chat widget: `GET /widget.js` (the one script a site embeds, built from widget/
 * into dist/widget/widget.js), and `GET /demo/widget?widget=wid_…`, a page that embeds it as a
 * customer's site would (the README's tour opens it). Any site may load the script; the visitor
 * API behind it checks the page's origin against the widget's allowed origins.
 */
export function mountWidgetScript(server: HttpServer, options: { root?: string; logger?: Logger } = {}): void {
  const anyone = server.scoped('public');
  const file = join(options.root ?? ROOT, 'dist', 'widget', 'widget.js');
  let cached: { mtimeMs: number; body: Buffer; etag: string } | null = null;
  anyone.get(
    '/widget.js',
    (req: Request): Reply => {
      let stat;
      try {
        stat = statSync(file);
      } catch {
        options.logger?.warn('widget: dist/widget/widget.js is missing; run `npm run build` (tsc -p widget)');
        throw new HttpError('not_found', 'The widget script is not built on this server.');
      }
      if (!cached || cached.mtimeMs !== stat.mtimeMs) {
        const body = readFileSync(file);
        cached = { mtimeMs: stat.mtimeMs, body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
      }
      const headers = {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=300',
        etag: cached.etag,
        // Any page may load it (a script tag needs no CORS, but a subresource-integrity check does).
        'access-control-allow-origin': '*',
        'cross-origin-resource-policy': 'cross-origin',
      };
      if (req.headers['if-none-match'] === cached.etag) return { status: 304, headers };
      return { status: 200, headers, body: cached.body };
    },
    { body: 'none' },
  );

  anyone.get(
    '/demo/widget',
    (req: Request): Reply => {
      const id = req.searchParams().get('widget') ?? '';
      if (!WIDGET_ID.test(id)) throw new HttpError('bad_request', 'Give the widget to show: /demo/widget?widget=wid_…');
      const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo shop</title>
<style>body{font-family:Georgia,serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}h1{color:#7a2e0e}</style>
</head>
<body>
<main>
<h1>Demo shop</h1>
<p>This page stands in for a customer's site. It embeds the chat widget with one tag:</p>
<pre>&lt;script src="/widget.js" data-widget="${id}" async&gt;&lt;/script&gt;</pre>
<p>Open the chat with the button at the bottom right and ask a question.</p>
</main>
<script src="/widget.js" data-widget="${id}" async></script>
</body>
</html>
`;
      return {
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
        body: page,
      };
    },
    { body: 'none' },
  );
}
