import type OpenAI from 'openai';
import type { Logger } from '../../log.js';
import { pinnedFetch } from '../../net/pinned-fetch.js';
import type { Resolve } from '../../net/ssrf.js';
import { storableText } from '../../http/validate.js';
import type { MessageRole, WidgetSettings } from './types.js';

/** What the agent produces while it answers: text as it streams, and the tools it runs. */
export type AgentEvent = { kind: 'delta'; text: string } | { kind: 'tool'; name: ToolName; reason: string | null };
export type ToolName = 'escalate_to_human' | 'show_lead_form';

export interface AgentTurn {
  settings: WidgetSettings;
  /** The conversation so far, oldest first, the visitor's new message last. */
  history: { role: MessageRole; text: string }[];
}

/** How much of the conversation the model sees (the newest messages). */
export const AGENT_HISTORY_MESSAGES = 30;
/** A model that sends nothing for this long is given up on, and the visitor answered without it. */
export const MODEL_FIRST_TOKEN_TIMEOUT_MS = 15_000;
/** The longest a model's whole reply may take. */
export const MODEL_REPLY_TIMEOUT_MS = 60_000;
/** The longest reply a model may stream (characters); beyond, the reply is cut. */
export const REPLY_MAX_CHARS = 4000;

export const TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'escalate_to_human',
      description: 'Hand the conversation to a human operator, when the visitor asks for a person or you cannot help.',
      parameters: { type: 'object', properties: { reason: { type: 'string', description: 'Why a person is needed, in a few words.' } }, required: ['reason'] },
    },
  },
  {
    type: 'function' as const,
    function: {
      name: 'show_lead_form',
      description: 'Show the visitor a form to leave their name, e-mail address and phone number, when they want to be contacted.',
      parameters: { type: 'object', properties: { reason: { type: 'string', description: 'Why the form is offered, in a few words.' } }, required: ['reason'] },
    },
  },
];

const PERSON = /\b(human|person|people|operator|someone|somebody|real agent|live agent|representative|staff|talk to (an? )?(agent|person))\b/i;
const CONTACT = /\b(contact|call me|call back|email me|e-mail me|reach me|quote|pricing|price|demo|sales|buy|purchase|get in touch)\b/i;
const STOP = new Set(
  'the and for you your are was were what when where which who why how can could would should does did have has had with that this from they them there their about into just not but yes any all our out get got its it is do to of in on at be by or an a i me my we us'.split(
    ' ',
  ),
);

/** English endings dropped before words are compared, longest first, so "install" meets "Installing" and "webhook" meets "webhooks". */
const ENDINGS = ['ations', 'ation', 'ings', 'ing', 'ers', 'ies', 'ed', 'es', 'er', 's'];

/** A word without its ending; a stem keeps at least 4 letters, so short words ("uses", "news") are left whole. */
function stem(w: string): string {
  for (const e of ENDINGS) if (w.length - e.length >= 4 && w.endsWith(e)) return w.slice(0, -e.length);
  return w;
}

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2 && !STOP.has(w)).map(stem);
}

/** Splits a reply into the pieces it streams in (words with their following space). */
function pieces(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

/**
 * The built-in agent, for widgets without a model: answers from the knowledge text by
 * keyword (the paragraph sharing the most words with the question, compared without their endings), offers the lead form when
 * the visitor wants to be contacted, and hands over to a person when asked for one.
 */
export function* ruleAgent(turn: AgentTurn): Generator<AgentEvent> {
  const question = turn.history[turn.history.length - 1]?.text ?? '';
  if (PERSON.test(question)) {
    yield { kind: 'tool', name: 'escalate_to_human', reason: 'The visitor asked for a person.' };
    for (const p of pieces("I'm asking a person from our team to join. They will reply right here.")) yield { kind: 'delta', text: p };
    return;
  }
  if (CONTACT.test(question)) {
    yield { kind: 'tool', name: 'show_lead_form', reason: 'The visitor wants to be contacted.' };
    for (const p of pieces("Happy to help with that. Leave your details in the form and we'll get back to you.")) yield { kind: 'delta', text: p };
    return;
  }
  const asked = new Set(words(question));
  let best = '';
  let bestScore = 0;
  for (const paragraph of turn.settings.agent.knowledge.split(/\n\s*\n/)) {
    const text = paragraph.trim();
    if (!text) continue;
    let score = 0;
    for (const w of new Set(words(text))) if (asked.has(w)) score++;
    if (score > bestScore) {
      best = text;
      bestScore = score;
    }
  }
  const answer =
    bestScore > 0
      ? best.length > 800
        ? `${best.slice(0, 800)}…`
        : best
      : "I'm not sure about that one. You can leave your details for our team, or ask to talk to a person.";
  for (const p of pieces(answer)) yield { kind: 'delta', text: p };
}

export interface ModelEnv {
  baseUrl?: string | undefined;
  model?: string | undefined;
  apiKey?: string | undefined;
}

export interface AgentOptions {
  /** SERVICE_LLM_BASE_URL, SERVICE_LLM_MODEL, SERVICE_LLM_KEY. */
  env: ModelEnv;
  /** `--allow-private-webhooks`: a widget's own base URL may be plain http and private (development, tests). */
  allowPrivate: boolean;
  resolve?: Resolve;
  logger?: Logger;
  firstTokenTimeoutMs?: number;
  replyTimeoutMs?: number;
}

const FAILED_LINE = "Sorry, I can't answer that right now. You can leave your details, or ask to talk to a person.";

let openaiModule: Promise<typeof OpenAI> | undefined;
/**
 * The `openai` package, loaded when a widget first asks a model: it costs every process that
 * imports the webhooks service (each CLI command, each test file) about a tenth of a second
 * of CPU, and most widgets run the rule agent.
 */
function loadOpenAI(): Promise<typeof OpenAI> {
  return (openaiModule ??= import('openai').then((m) => m.default));
}

/**
 * Runs the widget's agent: its model (the widget's own base URL and key, else the server's
 * SERVICE_LLM_*) through the `openai` package, streamed, with the two tools; the rule agent
 * when no model is configured. A model that fails or stalls before its first word is replaced
 * by the rule agent; one that fails midway ends its reply with a polite line. Either way the
 * visitor gets an answer.
 */
export class Agents {
  private readonly clients = new Map<string, OpenAI>();
  private readonly options: AgentOptions;

  constructor(options: AgentOptions) {
    this.options = options;
  }

  /** Which model a widget uses, or null for the rule agent. */
  modelFor(settings: WidgetSettings): { baseUrl: string | undefined; model: string; apiKey: string; own: boolean } | null {
    const a = settings.agent;
    if (a.baseUrl) return { baseUrl: a.baseUrl, model: a.model ?? this.options.env.model ?? 'gpt-4o-mini', apiKey: a.apiKey ?? 'none', own: true };
    const model = a.model ?? this.options.env.model;
    // The server's key goes only to the server's base URL, never to a URL a tenant chose.
    if (!model || (!this.options.env.baseUrl && !this.options.env.apiKey)) return null;
    return { baseUrl: this.options.env.baseUrl, model, apiKey: this.options.env.apiKey ?? 'none', own: false };
  }

  private async client(target: { baseUrl: string | undefined; apiKey: string; own: boolean }): Promise<OpenAI> {
    const Client = await loadOpenAI();
    const key = `${target.own ? 'own' : 'env'}\n${target.baseUrl ?? ''}\n${target.apiKey}`;
    let c = this.clients.get(key);
    if (!c) {
      c = new Client({
        apiKey: target.apiKey,
        ...(target.baseUrl ? { baseURL: target.baseUrl } : {}),
        maxRetries: 0,
        timeout: this.options.replyTimeoutMs ?? MODEL_REPLY_TIMEOUT_MS,
        ...(target.own
          ? { fetch: pinnedFetch({ allowPrivate: this.options.allowPrivate, ...(this.options.resolve ? { resolve: this.options.resolve } : {}) }) }
          : {}),
      });
      // A small cache: a widget's settings rarely change, and each client keeps its connections.
      if (this.clients.size >= 256) this.clients.delete(this.clients.keys().next().value!);
      this.clients.set(key, c);
    }
    return c;
  }

  async *run(turn: AgentTurn, signal: AbortSignal): AsyncGenerator<AgentEvent> {
    const target = this.modelFor(turn.settings);
    if (!target) {
      yield* ruleAgent(turn);
      return;
    }
    let said = 0;
    try {
      for await (const e of this.model(turn, target, signal)) {
        if (e.kind === 'delta') said += e.text.length;
        yield e;
      }
    } catch (err) {
      if (signal.aborted) return;
      this.options.logger?.warn('widget agent: the model failed; answering without it', { error: err instanceof Error ? err.message : String(err) });
      if (said === 0) yield* ruleAgent(turn);
      else yield { kind: 'delta', text: ` … ${FAILED_LINE}` };
    }
  }

  private async *model(
    turn: AgentTurn,
    target: { baseUrl: string | undefined; model: string; apiKey: string; own: boolean },
    outer: AbortSignal,
  ): AsyncGenerator<AgentEvent> {
    const s = turn.settings;
    const system = [
      s.agent.instructions || `You are the friendly assistant of ${s.name}. Answer briefly.`,
      s.agent.knowledge ? `Answer from this knowledge when it applies:\n${s.agent.knowledge}` : '',
      'Call escalate_to_human when the visitor asks for a person or you cannot help. Call show_lead_form when the visitor wants to be contacted.',
    ]
      .filter(Boolean)
      .join('\n\n');
    const messages = [
      { role: 'system' as const, content: system },
      ...turn.history
        .slice(-AGENT_HISTORY_MESSAGES)
        .map((m) => (m.role === 'visitor' ? { role: 'user' as const, content: m.text } : { role: 'assistant' as const, content: m.text })),
    ];
    // Before the timers start: the first call loads the package.
    const client = await this.client(target);
    const controller = new AbortController();
    const abort = () => controller.abort();
    outer.addEventListener('abort', abort);
    // Aborted while the package loaded: no 'abort' event will come.
    if (outer.aborted) controller.abort();
    const first = setTimeout(abort, this.options.firstTokenTimeoutMs ?? MODEL_FIRST_TOKEN_TIMEOUT_MS);
    const whole = setTimeout(abort, this.options.replyTimeoutMs ?? MODEL_REPLY_TIMEOUT_MS);
    try {
      const stream = await client.chat.completions.create({ model: target.model, messages, tools: TOOLS, stream: true }, { signal: controller.signal });
      const calls = new Map<number, { name: string; args: string }>();
      let length = 0;
      // A high surrogate ending a chunk waits for the low one that may start the next.
      let held = '';
      for await (const chunk of stream) {
        clearTimeout(first);
        const delta = chunk.choices[0]?.delta;
        if (!delta) continue;
        if (typeof delta.content === 'string' && delta.content) {
          let text = (held + delta.content).slice(0, Math.max(0, REPLY_MAX_CHARS - length));
          held = '';
          if (/[\ud800-\udbff]$/.test(text)) [text, held] = [text.slice(0, -1), text.slice(-1)];
          // The model server is the tenant's: a NUL (PostgreSQL refuses it, and the reply was
          // lost) or a lone surrogate (streamed as sent, stored as U+FFFD) is made storable here.
          text = storableText(text);
          length += text.length;
          if (text) yield { kind: 'delta', text };
        }
        for (const call of delta.tool_calls ?? []) {
          const c = calls.get(call.index) ?? { name: '', args: '' };
          if (call.function?.name) c.name += call.function.name;
          if (call.function?.arguments) c.args += call.function.arguments;
          calls.set(call.index, c);
        }
      }
      for (const c of calls.values()) {
        if (c.name !== 'escalate_to_human' && c.name !== 'show_lead_form') continue;
        let reason: string | null = null;
        try {
          const parsed = JSON.parse(c.args || '{}') as { reason?: unknown };
          if (typeof parsed.reason === 'string') reason = storableText(parsed.reason);
        } catch {
          // Malformed arguments from the model: the tool still runs, without a reason.
        }
        yield { kind: 'tool', name: c.name, reason };
      }
    } finally {
      clearTimeout(first);
      clearTimeout(whole);
      outer.removeEventListener('abort', abort);
    }
  }
}
