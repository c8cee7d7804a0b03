import { HttpError } from '../../http/errors.js';
import { ListPage } from '../../http/pagination.js';
import { empty, json } from '../../http/reply.js';
import { Fields, readJsonObject } from '../../http/validate.js';
import { chars, SETTINGS_BODY_MAX_BYTES, VISITOR_BODY_MAX_BYTES, type ConversationRouteContext } from './route-context.js';
import { messageView } from './service.js';
import { patchSettings } from './settings.js';
import { ANALYTICS_MAX_DAYS } from './store.js';
import { CONVERSATION_MAX_MESSAGES, defaultSettings, MESSAGE_MAX_CHARS, type ConversationId, type ConversationRecord } from './types.js';
import { conversationView, leadView, settingsView } from './views.js';

// The owner's routes (a user of the widget's tenant): settings, the conversations and their
// hand-off, analytics.

/** Times a settings PATCH is applied again when another change landed while it was applied. */
export const SETTINGS_WRITE_ATTEMPTS = 5;

/** A widget's chat settings: appearance, agent, allowed origins. */
export function mountWidgetSettingsRoutes(ctx: ConversationRouteContext): void {
  const { service, options, widgetOf } = ctx;
  const full = ctx.server.scoped('full');

  full.get('/v1/widgets/:id/settings', async (req) => {
    const widget = await widgetOf(req);
    return json(200, settingsView(widget, await service.settings(widget)));
  });

  full.patch(
    '/v1/widgets/:id',
    async (req) => {
      const widget = await widgetOf(req);
      const body = readJsonObject(req);
      const guard = { allowPrivate: options.allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) };
      // The body applies to the settings as stored when they are written: a change that landed
      // meanwhile (this one may wait on DNS for a base_url) is read again, never undone.
      for (let attempt = 0; attempt < SETTINGS_WRITE_ATTEMPTS; attempt++) {
        const stored = await service.store.getSettings(widget.id);
        const next = await patchSettings(stored ?? defaultSettings(widget.name), body, guard);
        if (await service.store.saveSettings(widget.id, next, stored)) return json(200, settingsView({ ...widget, name: next.name }, next));
      }
      throw new HttpError('conflict', 'The widget settings kept changing while this change was applied; nothing was saved. Try again.');
    },
    { maxBody: SETTINGS_BODY_MAX_BYTES },
  );
}

/** A widget's conversations: the list, a transcript with its lead, deleting one, and the hand-off (take over, reply, hand back, close). */
export function mountOwnerConversationRoutes(ctx: ConversationRouteContext): void {
  const { service, widgetOf, conversationOf } = ctx;
  const full = ctx.server.scoped('full');

  full.get('/v1/widgets/:id/conversations', async (req) => {
    const widget = await widgetOf(req);
    // Empty is not given, as on every list's filter (a form's unselected filter sends `status=`).
    const status = req.searchParams().get('status') || null;
    if (status !== null && status !== 'open' && status !== 'ended') throw new HttpError('bad_request', 'status must be open or ended.');
    // Paged as every {data, next_cursor} list: ?limit= 1-100 (default 20) and the opaque cursor.
    const list = new ListPage(req, { list: 'conversations', owner: `tenant:${widget.tenantId}`, filters: { status } });
    const page = await service.store.list({ widgetId: widget.id, limit: list.limit, before: list.from, ...(status ? { status } : {}) });
    return json(200, { data: page.data.map(conversationView), next_cursor: list.cursor(page.nextCursor) });
  });

  full.get('/v1/widgets/:id/conversations/:conversationId', async (req) => {
    const c = await conversationOf(req);
    const [messages, lead] = await Promise.all([service.store.messages(c.id, 0, CONVERSATION_MAX_MESSAGES), service.store.lead(c.id)]);
    return json(200, { ...conversationView(c), messages: messages.map(messageView), lead: lead ? leadView(lead) : null });
  });

  full.delete('/v1/widgets/:id/conversations/:conversationId', async (req) => {
    const c = await conversationOf(req);
    await service.remove(c.id);
    return empty(204);
  });

  const action = (path: string, run: (c: ConversationRecord) => Promise<unknown>) =>
    full.post(
      `/v1/widgets/:id/conversations/:conversationId/${path}`,
      async (req) => {
        const c = await conversationOf(req);
        await run(c);
        return json(200, conversationView((await service.store.get(c.id)) ?? c));
      },
      { body: 'none' },
    );
  action('take-over', (c) => service.setHandler(c.id, 'human'));
  action('hand-back', (c) => service.setHandler(c.id, 'agent'));
  action('close', (c) => service.end(c.id as ConversationId, 'agent_closed'));

  full.post(
    '/v1/widgets/:id/conversations/:conversationId/reply',
    async (req) => {
      const c = await conversationOf(req);
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['text']);
      const text = f.string('text', { required: true, max: Number.MAX_SAFE_INTEGER });
      if (text !== undefined && chars(text) > MESSAGE_MAX_CHARS) f.problem('text', `must be at most ${MESSAGE_MAX_CHARS} characters, got ${chars(text)}`);
      f.done();
      if (c.status === 'ended') throw new HttpError('conflict', 'The conversation has ended.');
      const m = await service.operatorReply(c, text!);
      return json(201, messageView(m));
    },
    { maxBody: VISITOR_BODY_MAX_BYTES },
  );
}

/** A widget's conversation analytics, per day. */
export function mountConversationAnalyticsRoute(ctx: ConversationRouteContext): void {
  const { service, now, widgetOf } = ctx;
  const full = ctx.server.scoped('full');

  full.get('/v1/widgets/:id/analytics', async (req) => {
    const widget = await widgetOf(req);
    const raw = req.searchParams().get('days');
    const days = raw === null ? 30 : /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
    if (!(days >= 1 && days <= ANALYTICS_MAX_DAYS)) throw new HttpError('bad_request', `days must be an integer from 1 to ${ANALYTICS_MAX_DAYS}.`);
    const to = (Math.floor(now() / 86_400_000) + 1) * 86_400_000;
    const rows = await service.store.analytics(widget.id, to - days * 86_400_000, to);
    return json(200, {
      days: rows.map((d) => ({
        day: d.day,
        conversations: d.conversations,
        leads: d.leads,
        escalations: d.escalations,
        median_response_ms: d.medianResponseMs,
      })),
    });
  });
}
