// The embeddable chat widget: one self-contained script, no framework, no imports.
//   <script src="https://HOST/widget.js" data-widget="wid_…" async></script>
// It renders into a shadow root (the page's CSS cannot reach it, its CSS cannot reach the page),
// speaks the visitor API of HOST, and keeps the conversation in localStorage so a reload or a
// dropped connection resumes it without losing a message.

(() => {
  interface Config {
    id: string;
    name: string;
    color: string;
    greeting: string;
  }
  interface Saved {
    visitor_id?: string;
    conversation_id?: string;
    token?: string;
  }
  interface Message {
    seq: number;
    role: 'visitor' | 'agent' | 'operator';
    text: string;
  }
  type Frame = { event: string; data: any; id: string | null };

  const script = document.currentScript as HTMLScriptElement | null;
  const widgetId = script?.dataset.widget ?? '';
  if (!script || !/^wid_[a-z0-9]{1,64}$/.test(widgetId)) {
    console.warn('brainstem widget: the script tag needs data-widget="wid_…"');
    return;
  }
  const api = new URL(script.src).origin;
  const storeKey = `brainstem-widget:${widgetId}`;
  /** Reconnect delays of the event stream, in ms (the last one repeats). */
  const BACKOFF = [500, 1000, 2000, 5000, 10000];
  const MAX_CHARS = 2000;

  const load = (): Saved => {
    try {
      return JSON.parse(localStorage.getItem(storeKey) ?? '{}') as Saved;
    } catch {
      return {};
    }
  };
  const save = (s: Saved): void => {
    try {
      localStorage.setItem(storeKey, JSON.stringify(s));
    } catch {
      // Storage refused (private mode): the conversation lasts as long as the page.
    }
  };
  let saved = load();

  // --- the DOM, in a shadow root ---
  const host = document.createElement('div');
  host.setAttribute('data-brainstem-widget', widgetId);
  const root = host.attachShadow({ mode: 'open' });
  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };

  /** Black or white, whichever reads better on `hex` (WCAG contrast). */
  const ink = (hex: string): string => {
    const n = parseInt(hex.slice(1), 16);
    const lin = (c: number) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    const l = 0.2126 * lin((n >> 16) & 255) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
    return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? '#000000' : '#ffffff';
  };

  const style = el('style');
  style.textContent = `
:host{all:initial}
*{box-sizing:border-box;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:15px;line-height:1.4}
.launcher{position:fixed;right:16px;bottom:16px;z-index:2147483646;border:0;border-radius:28px;padding:14px 20px;background:var(--c);color:var(--i);font-weight:600;cursor:pointer;box-shadow:0 4px 14px rgba(0,0,0,.25)}
.launcher:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid #ffbf47;outline-offset:2px}
.panel{position:fixed;right:16px;bottom:84px;z-index:2147483647;width:min(380px,calc(100vw - 32px));height:min(560px,calc(100vh - 110px));display:flex;flex-direction:column;background:#fff;color:#1a1a1a;border-radius:12px;box-shadow:0 8px 30px rgba(0,0,0,.3);overflow:hidden}
.panel[hidden],.lead[hidden],.notice[hidden]{display:none}
header{display:flex;align-items:center;gap:8px;padding:12px 14px;background:var(--c);color:var(--i)}
header h2{flex:1;margin:0;font-size:16px;font-weight:600}
header button{background:transparent;color:var(--i);border:1px solid currentColor;border-radius:6px;padding:4px 8px;cursor:pointer}
.log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:8px;background:#f6f7f9}
.msg{max-width:85%;padding:8px 12px;border-radius:12px;white-space:pre-wrap;word-wrap:break-word}
.visitor{align-self:flex-end;background:var(--c);color:var(--i)}
.agent,.operator{align-self:flex-start;background:#fff;border:1px solid #d0d4da}
.operator{border-color:#1a7f37}
.who{display:block;font-size:12px;color:#4a4f57;margin-bottom:2px}
.visitor .who{color:var(--i)}
.notice{margin:0;padding:6px 12px;font-size:13px;color:#1a1a1a;background:#fff4d6;border-top:1px solid #e8d49a}
form{display:flex;gap:6px;padding:10px;border-top:1px solid #d0d4da;background:#fff}
form.lead{flex-direction:column}
label{font-size:13px;color:#1a1a1a}
input,textarea{width:100%;border:1px solid #767b84;border-radius:6px;padding:8px;color:#1a1a1a;background:#fff}
textarea{resize:none;height:42px}
.row{display:flex;gap:6px}
.send{border:0;border-radius:6px;padding:8px 14px;background:var(--c);color:var(--i);font-weight:600;cursor:pointer}
.plain{border:1px solid #767b84;border-radius:6px;padding:8px 14px;background:#fff;color:#1a1a1a;cursor:pointer}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:480px){.panel{right:0;bottom:0;width:100vw;height:100vh;border-radius:0}}
`;

  const launcher = el('button', { class: 'launcher', type: 'button', 'aria-expanded': 'false', 'aria-controls': 'bw-panel' }, 'Chat');
  const panel = el('section', { class: 'panel', id: 'bw-panel', role: 'dialog', 'aria-labelledby': 'bw-title' });
  panel.hidden = true;
  const header = el('header');
  const title = el('h2', { id: 'bw-title' }, 'Chat');
  const personBtn = el('button', { type: 'button' }, 'Talk to a person');
  const closeBtn = el('button', { type: 'button', 'aria-label': 'Close chat' }, '×');
  header.append(title, personBtn, closeBtn);
  const log = el('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Messages', tabindex: '0' });
  const notice = el('p', { class: 'notice', role: 'status' });
  notice.hidden = true;

  const leadForm = el('form', { class: 'lead', 'aria-label': 'Leave your details' });
  leadForm.hidden = true;
  const field = (id: string, label: string, type: string, autocomplete: string) => {
    const l = el('label', { for: id }, label);
    const i = el('input', { id, name: id, type, autocomplete, maxlength: '200' });
    leadForm.append(l, i);
    return i;
  };
  const leadIntro = el('p', { class: 'who' }, 'Leave your details and we will get back to you.');
  leadForm.append(leadIntro);
  const leadName = field('bw-name', 'Name', 'text', 'name');
  const leadEmail = field('bw-email', 'E-mail', 'email', 'email');
  const leadPhone = field('bw-phone', 'Phone', 'tel', 'tel');
  const leadRow = el('div', { class: 'row' });
  const leadSend = el('button', { class: 'send', type: 'submit' }, 'Send details');
  const leadCancel = el('button', { class: 'plain', type: 'button' }, 'Not now');
  leadRow.append(leadSend, leadCancel);
  leadForm.append(leadRow);

  const form = el('form', { 'aria-label': 'Send a message' });
  const inputLabel = el('label', { for: 'bw-input', class: 'sr' }, 'Message');
  const input = el('textarea', { id: 'bw-input', name: 'message', maxlength: String(MAX_CHARS), placeholder: 'Type your message…' });
  const sendBtn = el('button', { class: 'send', type: 'submit' }, 'Send');
  form.append(inputLabel, input, sendBtn);
  panel.append(header, log, notice, leadForm, form);
  root.append(style, launcher, panel);

  const applyConfig = (c: Config): void => {
    const color = /^#[0-9a-fA-F]{6}$/.test(c.color) ? c.color : '#2457c5';
    host.style.setProperty('--c', color);
    host.style.setProperty('--i', ink(color));
    title.textContent = c.name;
    launcher.textContent = `Chat with ${c.name}`;
  };
  host.style.setProperty('--c', '#2457c5');
  host.style.setProperty('--i', '#ffffff');

  // --- messages ---
  const seen = new Set<number>();
  let lastSeq = 0;
  let config: Config | null = null;
  const roleName = (role: Message['role']) => (role === 'visitor' ? 'You' : role === 'operator' ? 'Team member' : (config?.name ?? 'Assistant'));
  const bubble = (role: Message['role'], text: string): HTMLElement => {
    const b = el('div', { class: `msg ${role}` });
    b.append(el('span', { class: 'who' }, roleName(role)), document.createTextNode(text));
    log.append(b);
    log.scrollTop = log.scrollHeight;
    return b;
  };
  // The visitor's own message shows at once; the server's echo of it is then not shown again.
  const pendingEcho: string[] = [];
  // The reply to the message being sent. The server stores the whole reply and tells the event
  // stream in the same turn as the reply's own stream says done, so either may come first: the
  // stored message takes over the streaming bubble, or stands in for it (seq set), never beside it.
  let streaming: { el: HTMLElement | null; text: Text | null; seq: number | null } | null = null;
  const show = (m: Message): void => {
    if (seen.has(m.seq)) return;
    seen.add(m.seq);
    lastSeq = Math.max(lastSeq, m.seq);
    if (m.role === 'agent' && streaming && streaming.seq === null) {
      streaming.seq = m.seq;
      if (streaming.el && streaming.text) {
        streaming.text.data = m.text;
        streaming.el.removeAttribute('aria-busy');
      } else streaming.el = bubble(m.role, m.text);
      return;
    }
    const echo = m.role === 'visitor' ? pendingEcho.indexOf(m.text) : -1;
    if (echo >= 0) pendingEcho.splice(echo, 1);
    else bubble(m.role, m.text);
  };
  const say = (text: string): void => {
    notice.textContent = text;
    notice.hidden = false;
  };

  // --- the API ---
  const call = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...(init.body ? { 'content-type': 'application/json' } : {}) };
    if (saved.token && path.startsWith('/v1/conversations/')) headers.authorization = `Bearer ${saved.token}`;
    return fetch(api + path, { ...init, headers, mode: 'cors', credentials: 'omit' });
  };
  const errorText = async (r: Response): Promise<string> => {
    try {
      return ((await r.json()) as { error?: { message?: string } }).error?.message ?? `Error ${r.status}`;
    } catch {
      return `Error ${r.status}`;
    }
  };

  /** Reads server-sent events from a fetch response, calling `on` per event. */
  const readEvents = async (r: Response, on: (f: Frame) => void): Promise<void> => {
    const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let event = 'message';
        let data = '';
        let id: string | null = null;
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
          else if (line.startsWith('id: ')) id = line.slice(4);
        }
        if (data) on({ event, data: JSON.parse(data), id });
      }
    }
  };

  const ensureConversation = async (): Promise<boolean> => {
    if (saved.conversation_id && saved.token) return true;
    const r = await call(`/v1/widgets/${widgetId}/conversations`, {
      method: 'POST',
      body: JSON.stringify(saved.visitor_id ? { visitor_id: saved.visitor_id } : {}),
    });
    if (!r.ok) {
      say(await errorText(r));
      return false;
    }
    const c = (await r.json()) as { conversation_id: string; visitor_id: string; token: string };
    saved = { visitor_id: c.visitor_id, conversation_id: c.conversation_id, token: c.token };
    save(saved);
    listen();
    return true;
  };

  const conversationEnded = (): void => {
    say('This conversation has ended. Send a message to start a new one.');
    saved = { ...(saved.visitor_id ? { visitor_id: saved.visitor_id } : {}) };
    save(saved);
    stopListening();
  };

  const onFrame = (f: Frame): void => {
    switch (f.event) {
      case 'message':
        show(f.data as Message);
        break;
      case 'lead_form':
        openLead();
        break;
      case 'escalated':
        say('A person from our team has been asked to join. They will reply here.');
        break;
      case 'state':
        if (f.data.handler === 'human' && f.data.escalated) say('A person from our team has been asked to join. They will reply here.');
        break;
      case 'ended':
        conversationEnded();
        break;
      case 'error':
        say(String(f.data.message ?? 'Something went wrong.'));
        break;
      case 'resync':
        void catchUp().catch(() => {});
        break;
    }
  };

  // The event stream: replies from a person, the lead form, the end. It reconnects with
  // back-off and asks for what came after the last message it saw, so nothing is lost.
  let stream: AbortController | null = null;
  let attempt = 0;
  const stopListening = (): void => {
    stream?.abort();
    stream = null;
  };
  const listen = (): void => {
    if (stream || !saved.conversation_id) return;
    const controller = (stream = new AbortController());
    const id = saved.conversation_id;
    void (async () => {
      try {
        const r = await call(`/v1/conversations/${id}/events?after=${lastSeq}`, { signal: controller.signal });
        if (r.status === 401 || r.status === 404) {
          conversationEnded();
          return;
        }
        if (!r.ok || !r.body) throw new Error(`events: ${r.status}`);
        attempt = 0;
        await readEvents(r, onFrame);
      } catch {
        // Dropped or refused: tried again below unless stopped.
      }
      if (stream !== controller) return;
      stream = null;
      if (saved.conversation_id !== id) return;
      const delay = BACKOFF[Math.min(attempt++, BACKOFF.length - 1)]!;
      setTimeout(listen, delay);
    })();
  };

  /** Fills in what a dropped reply stream missed (the reply is stored whole on the server). */
  const catchUp = async (): Promise<void> => {
    if (!saved.conversation_id) return;
    const r = await call(`/v1/conversations/${saved.conversation_id}/messages?after=${lastSeq}`);
    if (r.status === 401) return conversationEnded();
    if (!r.ok) return;
    const body = (await r.json()) as { messages: Message[]; conversation: { status: string } };
    for (const m of body.messages) show(m);
    if (body.conversation.status === 'ended') conversationEnded();
  };

  let sending = false;
  const send = async (text: string): Promise<void> => {
    if (sending) return;
    sending = true;
    sendBtn.disabled = true;
    notice.hidden = true;
    const reply: { el: HTMLElement | null; text: Text | null; seq: number | null } = { el: null, text: null, seq: null };
    streaming = reply;
    try {
      if (!(await ensureConversation())) return;
      const r = await call(`/v1/conversations/${saved.conversation_id}/messages`, { method: 'POST', body: JSON.stringify({ text }) });
      if (r.status === 401) {
        conversationEnded();
        input.value = text;
        return;
      }
      if (!r.ok) {
        if (r.status === 409) conversationEnded();
        else say(await errorText(r));
        input.value = text;
        return;
      }
      await readEvents(r, (f) => {
        if (f.event === 'delta') {
          if (reply.seq !== null) return;
          if (!reply.el) {
            reply.el = el('div', { class: 'msg agent', 'aria-busy': 'true' });
            reply.text = document.createTextNode('');
            reply.el.append(el('span', { class: 'who' }, roleName('agent')), reply.text);
            log.append(reply.el);
          }
          reply.text!.data += String(f.data.text);
          log.scrollTop = log.scrollHeight;
        } else if (f.event === 'done') {
          const m = f.data.message as Message | null;
          reply.el?.removeAttribute('aria-busy');
          if (!m || reply.seq === m.seq) return;
          if (!reply.el) {
            streaming = null;
            show(m);
          } else if (seen.has(m.seq)) reply.el.remove();
          else {
            seen.add(m.seq);
            lastSeq = Math.max(lastSeq, m.seq);
            reply.seq = m.seq;
          }
        } else onFrame(f);
      });
    } catch {
      // The connection dropped mid-reply: the server finishes and stores it; fetch what we missed.
      if (reply.el && reply.seq === null) reply.el.remove();
      streaming = null;
      await catchUp().catch(() => say('Connection lost. Retrying…'));
    } finally {
      if (streaming === reply) streaming = null;
      sending = false;
      sendBtn.disabled = false;
    }
  };

  // --- interaction ---
  const open = async (): Promise<void> => {
    panel.hidden = false;
    launcher.setAttribute('aria-expanded', 'true');
    input.focus();
    if (saved.conversation_id) {
      await catchUp().catch(() => {});
      listen();
    }
  };
  const close = (): void => {
    panel.hidden = true;
    launcher.setAttribute('aria-expanded', 'false');
    launcher.focus();
  };
  const openLead = (): void => {
    leadForm.hidden = false;
    leadName.focus();
  };
  launcher.addEventListener('click', () => (panel.hidden ? void open() : close()));
  closeBtn.addEventListener('click', close);
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') close();
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    if ([...text].length > MAX_CHARS) return say(`A message is at most ${MAX_CHARS} characters.`);
    input.value = '';
    bubble('visitor', text);
    pendingEcho.push(text);
    void send(text);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  personBtn.addEventListener('click', () => {
    void (async () => {
      if (!(await ensureConversation())) return;
      const r = await call(`/v1/conversations/${saved.conversation_id}/escalate`, {
        method: 'POST',
        body: JSON.stringify({ reason: 'The visitor asked for a person.' }),
      });
      if (r.ok) say('A person from our team has been asked to join. They will reply here.');
      else say(await errorText(r));
    })();
  });
  leadCancel.addEventListener('click', () => {
    leadForm.hidden = true;
    input.focus();
  });
  leadForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      if (!(await ensureConversation())) return;
      const body: Record<string, string> = {};
      if (leadName.value.trim()) body.name = leadName.value.trim();
      if (leadEmail.value.trim()) body.email = leadEmail.value.trim();
      if (leadPhone.value.trim()) body.phone = leadPhone.value.trim();
      const r = await call(`/v1/conversations/${saved.conversation_id}/lead`, { method: 'POST', body: JSON.stringify(body) });
      if (r.ok) {
        leadForm.hidden = true;
        leadForm.reset();
        say('Thank you! We will be in touch.');
        input.focus();
      } else say(await errorText(r));
    })();
  });

  const boot = async (): Promise<void> => {
    const r = await fetch(`${api}/v1/widgets/${widgetId}/config`, { mode: 'cors', credentials: 'omit' }).catch(() => null);
    if (!r) return;
    if (r.status === 403 || r.status === 404) {
      console.warn(`brainstem widget: ${await errorText(r)}`);
      return;
    }
    document.body.append(host);
    if (!r.ok) {
      // A suspended account or an outage: the launcher stays, and says so politely.
      launcher.textContent = 'Chat';
      say(await errorText(r));
      form.hidden = true;
      personBtn.hidden = true;
      return;
    }
    config = (await r.json()) as Config;
    applyConfig(config);
    if (config.greeting) bubble('agent', config.greeting);
    if (saved.conversation_id) {
      await catchUp().catch(() => {});
      listen();
    }
  };
  if (document.body) void boot();
  else document.addEventListener('DOMContentLoaded', () => void boot());
})();
