import { CliError } from './util.js';

/** The longest a call may take, answer read included. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The few control-plane calls the CLI makes as a user (a session or a personal access token).
 * Every failure becomes one CliError line that names what to do, with the server's own message.
 */
export class ControlPlaneApi {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly exitCode = 1,
  ) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
    const url = new URL(path, this.baseUrl);
    let status: number;
    let type: string;
    let text: string;
    // The body is read inside the same guard as the request: a connection cut (or the timeout
    // reached) while the answer is read fails like one cut before it, as one line with this
    // command's exit code, never as an unexplained exit with nothing printed.
    try {
      const res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      status = res.status;
      type = res.headers.get('content-type') ?? '';
      text = await res.text();
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new CliError(`cannot reach the control plane at ${url.origin} (${cause}); check --url or BRAINSTEM_URL`, this.exitCode);
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch (err) {
      // A JSON answer that does not parse was cut short: nothing of it may be taken for data.
      if (type.includes('json'))
        throw new CliError(`${method} ${url.pathname}: the control plane's answer (${status}) is not whole JSON: ${(err as Error).message}`, this.exitCode);
      // A non-JSON body (a proxy's error page) is reported as text below.
    }
    if (status >= 200 && status < 300 && (parsed === null || typeof parsed !== 'object'))
      throw new CliError(
        `${method} ${url.pathname}: the control plane answered ${status} without a JSON body; is ${url.origin} a brainstem control plane?`,
        this.exitCode,
      );
    return { status, body: parsed };
  }

  /** The error line for a non-2xx answer, with the hint that fits its status. */
  failure(what: string, status: number, body: unknown): CliError {
    const err = (body as { error?: { code?: string; message?: string } } | null)?.error;
    const said = err ? `${err.code}: ${err.message}` : `HTTP ${status}`;
    const hint =
      status === 401
        ? ' (pass a personal access token with --token or BRAINSTEM_TOKEN; create one on the Keys page of the dashboard, #/access)'
        : status === 403 && err?.code === 'forbidden'
          ? ' (the token lacks a scope this needs: config:read to pull and diff, config:write to publish)'
          : '';
    return new CliError(`${what} failed: ${said}${hint}`, this.exitCode);
  }
}
