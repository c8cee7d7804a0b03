import { CliError } from './util.js';

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
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new CliError(`cannot reach the control plane at ${url.origin} (${cause}); check --url or BRAINSTEM_URL`, this.exitCode);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // A non-JSON body (a proxy's error page) is reported as text below.
    }
    return { status: res.status, body: parsed };
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
