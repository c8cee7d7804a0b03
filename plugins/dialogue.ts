/**
 * The dialogue plugin: one short in-character line per request, from any OpenAI-compatible
 * chat-completions server (SERVICE_LLM_BASE_URL, SERVICE_LLM_MODEL, SERVICE_LLM_KEY).
 * Runs as a child process of the sidecar; see plugins/protocol.ts.
 */
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { Backoff, PluginError, describeError, runPlugin, type HealthResult, type LineParams, type LineResult } from './protocol.js';

const DEFAULT_FRAMING = {
  name: 'Survival',
  premise: 'An open world after a collapse: survivors scavenge, trade, band together or prey on each other.',
  goal: 'Stay alive.',
};

interface Price {
  input: number;
  output: number;
}
interface PriceTable {
  default: Price;
  models: Record<string, Price>;
}

function isPrice(v: unknown): v is Price {
  const p = v as Price;
  return typeof p === 'object' && p !== null && Number.isFinite(p.input) && Number.isFinite(p.output) && p.input >= 0 && p.output >= 0;
}

/**
 * The price table: SERVICE_LLM_PRICES (a file path, or the JSON itself) over the bundled
 * plugins/prices.json. Prices are USD per million tokens.
 */
function loadPrices(env: NodeJS.ProcessEnv): PriceTable {
  const bundled = JSON.parse(readFileSync(new URL('../../plugins/prices.json', import.meta.url), 'utf8')) as PriceTable;
  const override = env.SERVICE_LLM_PRICES?.trim();
  if (!override) return bundled;
  const text = override.startsWith('{') ? override : readFileSync(override, 'utf8');
  const parsed = JSON.parse(text) as Partial<PriceTable>;
  const table: PriceTable = { default: parsed.default ?? bundled.default, models: { ...bundled.models, ...parsed.models } };
  if (!isPrice(table.default)) throw new Error('SERVICE_LLM_PRICES: "default" must be {"input": number, "output": number} in USD per million tokens');
  for (const [model, price] of Object.entries(table.models)) {
    if (!isPrice(price)) throw new Error(`SERVICE_LLM_PRICES: models["${model}"] must be {"input": number, "output": number}`);
  }
  return table;
}

/** Exact model name first, then the longest listed prefix (dated snapshots), then the default. */
function priceFor(table: PriceTable, model: string): Price {
  const exact = table.models[model];
  if (exact) return exact;
  let best: string | null = null;
  for (const name of Object.keys(table.models)) if (model.startsWith(name) && (best === null || name.length > best.length)) best = name;
  return best ? table.models[best]! : table.default;
}

function describeTraits(traits: Record<string, number>): string {
  const words: string[] = [];
  for (const [name, v] of Object.entries(traits)) {
    if (!Number.isFinite(v)) continue;
    if (v >= 0.7) words.push(`high ${name}`);
    else if (v <= 0.3) words.push(`low ${name}`);
  }
  return words.length ? words.join(', ') : 'unremarkable';
}

function buildMessages(p: LineParams): Array<{ role: 'system' | 'user'; content: string }> {
  const game = p.game ?? DEFAULT_FRAMING;
  const c = p.character;
  const system = [
    `You voice one character in the game "${game.name}". ${game.premise} The player's goal: ${game.goal}`,
    p.flavor ? `The world: ${p.flavor}` : '',
    `You are ${c.name}, a ${c.role}. Personality: ${describeTraits(c.traits)}.`,
    c.themes.length ? `About you: ${c.themes.join('; ')}.` : '',
    c.goal ? `Your current goal: ${c.goal}.` : '',
    c.emotion ? `You feel ${c.emotion}.` : '',
    p.memory ? `You remember: ${p.memory}` : '',
    `Answer with exactly one short spoken line (at most ${p.max_chars} characters), in character, no quotes, no stage directions, no narration.`,
  ]
    .filter(Boolean)
    .join('\n');
  const s = p.situation;
  const user = [
    `Situation: ${s.kind}.`,
    s.doing ? `You are ${s.doing}.` : '',
    s.players.length ? `Near you: ${s.players.map((pl) => `${pl.name} (${Math.round(pl.distance_m)} m)`).join(', ')}.` : 'Nobody is near you.',
    s.heard.length ? `You just heard:\n${s.heard.map((h) => `${h.from}: "${h.text}"`).join('\n')}` : '',
    s.event ? `What just happened: ${s.event}.` : '',
    s.heard.length ? 'Reply to what you heard.' : 'Say something that fits.',
  ]
    .filter(Boolean)
    .join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

const QUOTES = /^["'“”‘’«»`]+|["'“”‘’«»`]+$/g;

/** One spoken line: first non-empty line, no speaker prefix or surrounding quotes, capped at maxChars. */
function cleanLine(raw: string, speaker: string, maxChars: number): string {
  const first =
    raw
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  let line = first.replace(/\s+/g, ' ').replace(QUOTES, '').trim();
  const prefix = `${speaker}:`;
  if (speaker && line.toLowerCase().startsWith(prefix.toLowerCase())) line = line.slice(prefix.length).trim().replace(QUOTES, '').trim();
  if (line.length > maxChars) {
    const cut = line.slice(0, Math.max(1, maxChars - 1));
    const space = cut.lastIndexOf(' ');
    line = `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '')}…`;
  }
  return line;
}

interface Config {
  baseURL: string;
  model: string;
  key: string;
  timeoutMs: number;
  maxTokens: number;
}

function readConfig(env: NodeJS.ProcessEnv): { config: Config | null; problems: string[] } {
  const problems: string[] = [];
  const baseURL = env.SERVICE_LLM_BASE_URL?.trim() ?? '';
  const model = env.SERVICE_LLM_MODEL?.trim() ?? '';
  if (!baseURL) problems.push('SERVICE_LLM_BASE_URL is not set (the OpenAI-compatible server, for example http://127.0.0.1:11434/v1)');
  else if (!/^https?:\/\//.test(baseURL)) problems.push(`SERVICE_LLM_BASE_URL must be an http(s) URL, got "${baseURL}"`);
  if (!model) problems.push('SERVICE_LLM_MODEL is not set (the model name the server knows, for example gpt-4o-mini)');
  const timeoutMs = Number(env.SERVICE_LLM_TIMEOUT_MS ?? 15_000);
  const maxTokens = Number(env.SERVICE_LLM_MAX_TOKENS ?? 80);
  if (!(timeoutMs > 0)) problems.push(`SERVICE_LLM_TIMEOUT_MS must be a positive number of ms, got "${env.SERVICE_LLM_TIMEOUT_MS}"`);
  if (!(maxTokens > 0)) problems.push(`SERVICE_LLM_MAX_TOKENS must be a positive integer, got "${env.SERVICE_LLM_MAX_TOKENS}"`);
  if (problems.length) return { config: null, problems };
  return { config: { baseURL, model, key: env.SERVICE_LLM_KEY ?? '', timeoutMs, maxTokens: Math.floor(maxTokens) }, problems };
}

runPlugin('dialogue', (ctx) => {
  const { config, problems: configProblems } = readConfig(process.env);
  let prices: PriceTable | null = null;
  let priceProblem = '';
  try {
    prices = loadPrices(process.env);
  } catch (err) {
    priceProblem = `price table unusable: ${err instanceof Error ? err.message : String(err)}`;
  }
  // Retries are ours (Backoff), not the SDK's: a retry inside the SDK would hold the request
  // while the tier should already know the model is unavailable.
  const client = config ? new OpenAI({ baseURL: config.baseURL, apiKey: config.key || 'unused', maxRetries: 0, timeout: config.timeoutMs }) : null;
  const backoff = new Backoff('the model server');

  return {
    async health(): Promise<HealthResult> {
      const problems = [...configProblems];
      if (priceProblem) problems.push(priceProblem);
      const info: HealthResult['info'] = {};
      if (config && client) {
        info.base_url = config.baseURL;
        info.model = config.model;
        info.key_set = config.key !== '';
        if (prices) {
          const price = priceFor(prices, config.model);
          info.price_input_per_mtok = price.input;
          info.price_output_per_mtok = price.output;
        }
        try {
          const models = await client.models.list({ timeout: 5000 });
          info.model_listed = models.data.some((m) => m.id === config.model);
        } catch (err) {
          const status = (err as { status?: unknown }).status;
          if (status === 401 || status === 403) problems.push(`the model server at ${config.baseURL} rejected the key (${status}); check SERVICE_LLM_KEY`);
          else if (typeof status !== 'number') problems.push(`the model server at ${config.baseURL} is unreachable: ${describeError(err)}`);
          else info.models_status = status;
        }
      }
      return { ok: problems.length === 0, problems, info };
    },

    async line(params: LineParams): Promise<LineResult> {
      if (!config || !client) throw new PluginError('unavailable', configProblems.join('; '), 60_000);
      backoff.check();
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client.chat.completions.create({
          model: config.model,
          messages: buildMessages(params),
          max_tokens: config.maxTokens,
          temperature: 0.9,
        });
      } catch (err) {
        const e = backoff.failed(err);
        ctx.log('warn', 'model request failed', { code: e.code, message: e.message });
        throw e;
      }
      backoff.succeeded();
      // An empty answer still cost tokens: it comes back with text "" so the spend is counted.
      const text = cleanLine(completion.choices[0]?.message?.content ?? '', params.character.name, params.max_chars);
      const usage = { prompt_tokens: completion.usage?.prompt_tokens ?? 0, completion_tokens: completion.usage?.completion_tokens ?? 0 };
      const price = prices ? priceFor(prices, completion.model || config.model) : { input: 0, output: 0 };
      const cost = (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1e6;
      return { text, model: completion.model || config.model, usage, cost_usd: cost };
    },
  };
});
