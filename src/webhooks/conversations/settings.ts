import { validationFailed } from '../../http/errors.js';
import { Fields, typeOf } from '../../http/validate.js';
import { guardUrl, registeredUrl, type Resolve } from '../../net/ssrf.js';
import { ALLOWED_ORIGINS_MAX, GREETING_MAX_CHARS, INSTRUCTIONS_MAX_CHARS, KNOWLEDGE_MAX_BYTES, type WidgetSettings } from './types.js';

const NAME_MAX = 200;
const MODEL_MAX = 200;
const BASE_URL_MAX = 512;
const API_KEY_MAX = 4096;
const COLOR = /^#[0-9a-fA-F]{6}$/;

/**
 * `https://shop.example` as a browser sends it in Origin: scheme, host, port; nothing else (no
 * path, query, fragment or credentials). Written another way that names the same origin
 * (`https://Shop.Example`, `:443`, an IDN host) it is stored as the browser will send it.
 */
function normalOrigin(raw: string): string | null {
  try {
    const u = new URL(raw);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
    if (u.username || u.password || u.pathname !== '/' || /[?#]/.test(raw) || !/^https?:\/\/[^/]+\/?$/i.test(raw)) return null;
    return u.origin;
  } catch {
    return null;
  }
}

/** The settings with a PATCH body applied, every field checked; a 422 naming each problem otherwise. */
export async function patchSettings(
  current: WidgetSettings,
  body: Record<string, unknown>,
  guard: { allowPrivate: boolean; resolve?: Resolve },
): Promise<WidgetSettings> {
  const f = new Fields(body);
  f.onlyKnown(['name', 'color', 'greeting', 'allowed_origins', 'agent']);
  for (const k of ['name', 'color', 'greeting', 'allowed_origins', 'agent'])
    if (body[k] === null) f.problem(k, 'must not be null; leave the field out to keep its value');
  const name = f.string('name', { min: 1, max: NAME_MAX, notBlank: true });
  const color = f.string('color', { pattern: COLOR, patternHint: 'must be a colour as #rrggbb' });
  const greeting = f.string('greeting', { max: GREETING_MAX_CHARS });
  let origins: string[] | undefined;
  const rawOrigins = body.allowed_origins;
  if (rawOrigins !== undefined && rawOrigins !== null) {
    if (!Array.isArray(rawOrigins)) f.problem('allowed_origins', `must be an array of origins, got ${typeOf(rawOrigins)}`);
    else if (rawOrigins.length > ALLOWED_ORIGINS_MAX)
      f.problem('allowed_origins', `must list at most ${ALLOWED_ORIGINS_MAX} origins, got ${rawOrigins.length}`);
    else {
      origins = [];
      rawOrigins.forEach((o, i) => {
        const n = typeof o === 'string' && o.length <= 300 ? normalOrigin(o) : null;
        if (n === null) f.problem(`allowed_origins[${i}]`, 'must be an origin: http(s)://host[:port], no path (as https://shop.example)');
        else if (!origins!.includes(n)) origins!.push(n);
      });
    }
  }
  const agent = { ...current.agent };
  const rawAgent = body.agent;
  if (rawAgent !== undefined && rawAgent !== null) {
    if (typeof rawAgent !== 'object' || Array.isArray(rawAgent)) f.problem('agent', `must be an object, got ${typeOf(rawAgent)}`);
    else {
      const a = rawAgent as Record<string, unknown>;
      const g = new Fields(a, 'agent');
      g.onlyKnown(['instructions', 'knowledge', 'model', 'base_url', 'api_key']);
      const instructions = g.string('instructions', { max: INSTRUCTIONS_MAX_CHARS });
      const knowledge = g.string('knowledge', { max: Number.MAX_SAFE_INTEGER });
      if (knowledge !== undefined && Buffer.byteLength(knowledge) > KNOWLEDGE_MAX_BYTES)
        g.problem('knowledge', `must be at most ${KNOWLEDGE_MAX_BYTES} bytes (UTF-8), got ${Buffer.byteLength(knowledge)}`);
      const model = g.string('model', { max: MODEL_MAX, oneLine: true });
      let baseUrl = g.string('base_url', { max: BASE_URL_MAX, oneLine: true });
      const apiKey = g.string('api_key', { max: API_KEY_MAX, oneLine: true });
      if (baseUrl) {
        const verdict = await guardUrl(baseUrl, {
          allowPrivate: guard.allowPrivate,
          admitUnresolved: true,
          ...(guard.resolve ? { resolve: guard.resolve } : {}),
        });
        const stored = verdict.ok ? registeredUrl(baseUrl, verdict.url) : verdict;
        if (stored.ok) baseUrl = stored.url;
        else g.problem('base_url', stored.reason);
      }
      f.details.push(...g.details);
      if (instructions !== undefined) agent.instructions = instructions;
      if (knowledge !== undefined) agent.knowledge = knowledge;
      // null (or '') clears the three model fields: back to SERVICE_LLM_* or the rule agent.
      if ('model' in a) agent.model = model || null;
      if ('base_url' in a) agent.baseUrl = baseUrl || null;
      if ('api_key' in a) agent.apiKey = apiKey || null;
    }
  }
  if (f.details.length > 0) throw validationFailed(f.details);
  return {
    name: name ?? current.name,
    color: color ?? current.color,
    greeting: greeting ?? current.greeting,
    allowedOrigins: origins ?? current.allowedOrigins,
    agent,
  };
}
