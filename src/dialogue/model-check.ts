/** How long the start-up check waits for the model server's model list. */
export const MODEL_CHECK_TIMEOUT_MS = 5_000;
/** Model ids the warning lists when the configured one is missing. */
const LISTED_MAX = 8;

/**
 * Asks an OpenAI-compatible server for its models (GET {baseUrl}/models) and says what is
 * wrong for the dialogue tier: null when the model is served (or the server has no model
 * list to ask, which some compatible servers lack: then nothing is known to be wrong),
 * otherwise one sentence: unreachable, refused the key, or does not serve the model.
 */
export async function modelServerProblem(
  baseUrl: string,
  model: string,
  key: string | undefined,
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): Promise<string | null> {
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  let res: Response;
  try {
    res = await (options.fetch ?? fetch)(url, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: AbortSignal.timeout(options.timeoutMs ?? MODEL_CHECK_TIMEOUT_MS),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return e.name === 'TimeoutError'
      ? `unreachable: no answer within ${options.timeoutMs ?? MODEL_CHECK_TIMEOUT_MS} ms`
      : `unreachable (${e.cause?.code ?? e.message})`;
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    return `refused the key with HTTP ${res.status} (check SERVICE_LLM_KEY)`;
  }
  if (res.status === 404 || res.status === 405) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    return `answered GET /models with HTTP ${res.status}`;
  }
  let ids: string[];
  try {
    const body = (await res.json()) as { data?: { id?: unknown }[] };
    ids = (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
  } catch {
    return null;
  }
  if (ids.length === 0 || ids.includes(model)) return null;
  const shown = ids.slice(0, LISTED_MAX).join(', ') + (ids.length > LISTED_MAX ? `, … (${ids.length} in all)` : '');
  return `does not serve the model "${model}" (SERVICE_LLM_MODEL); it serves: ${shown}`;
}
