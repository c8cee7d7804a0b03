import { EVENT_FIELDS } from './events.js';
import { EVENT_TYPES, type DeliveryEventType, type EventType } from './types.js';

/**
 * The event catalogue: one JSON Schema (draft 2020-12) per delivery body, built from the same
 * field rules that validate an event when it is posted, so the two cannot drift apart.
 */

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

const DESCRIPTIONS: Record<DeliveryEventType, string> = {
  'conversation.started': 'A new visitor conversation opened; sent once per conversation.',
  'conversation.ended': 'The conversation was closed (by the visitor, an operator, or after inactivity); sent once per conversation.',
  'escalation.triggered': 'The agent handed the conversation to a person (escalate_to_human ran).',
  'lead.captured':
    'The visitor submitted the in-chat lead form. Carries only whether an e-mail address and a phone number were given, never the address or number.',
  'endpoint.disabled':
    "Operational: the breaker disabled one of the tenant's endpoints (it answered 410, or every attempt failed for 24 hours). Sent to the tenant's operational endpoint whatever it subscribes to.",
};

type Schema = Record<string, unknown>;

const WIDGET_ID: Schema = { type: 'string', pattern: '^wid_[0-9a-z]+$' };
const TIME: Schema = { type: 'string', format: 'date-time' };

function fieldSchema(rule: (typeof EVENT_FIELDS)[EventType][string]): Schema {
  switch (rule.kind) {
    case 'id':
      return { type: 'string', pattern: rule.pattern.source };
    case 'boolean':
      return { type: 'boolean' };
    case 'count':
      return { type: 'integer', minimum: 0, maximum: rule.max };
    case 'enum':
      return { type: 'string', enum: [...rule.values] };
    case 'text':
      return { type: 'string', maxLength: rule.max };
    default: {
      const never: never = rule;
      throw new Error(`unknown field rule ${JSON.stringify(never)}`);
    }
  }
}

function dataSchema(event: EventType): Schema {
  const rules = EVENT_FIELDS[event];
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(rules).map(([k, rule]) => [k, fieldSchema(rule)])),
    required: Object.entries(rules)
      .filter(([, rule]) => rule.required)
      .map(([k]) => k),
    // lead.captured carries exactly its fields; the others forward fields of the poster's own.
    additionalProperties: event !== 'lead.captured',
  };
}

const ENDPOINT_DISABLED_DATA: Schema = {
  type: 'object',
  properties: {
    endpoint_id: { type: 'string', pattern: '^ep_[0-9a-z]+$' },
    url: { type: 'string', maxLength: 512 },
    reason: { type: 'string', enum: ['failing', 'gone'] },
    disabled_at: TIME,
    failing_since: { anyOf: [TIME, { type: 'null' }] },
    last_status_code: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    last_error: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  required: ['endpoint_id', 'url', 'reason', 'disabled_at', 'failing_since', 'last_status_code', 'last_error'],
  additionalProperties: false,
};

/** The JSON Schema of one event type's delivery body. */
export function bodySchema(event: DeliveryEventType): Schema {
  return {
    $schema: JSON_SCHEMA_DIALECT,
    $id: `urn:brainstem:webhooks:${event}`,
    title: event,
    description: DESCRIPTIONS[event],
    type: 'object',
    properties: {
      event: { const: event },
      widget_id: WIDGET_ID,
      data: event === 'endpoint.disabled' ? ENDPOINT_DISABLED_DATA : dataSchema(event),
    },
    required: ['event', 'widget_id', 'data'],
    additionalProperties: false,
  };
}

export interface EventTypeEntry {
  type: DeliveryEventType;
  /** Operational events go to the tenant's operational endpoint; the others to subscribed endpoints. */
  operational: boolean;
  description: string;
  schema: Schema;
}

/** Every event type a delivery can carry, with its schema (the GET /v1/webhooks/event-types answer). */
export function eventCatalogue(): EventTypeEntry[] {
  return [
    ...EVENT_TYPES.map((type) => ({ type, operational: false, description: DESCRIPTIONS[type], schema: bodySchema(type) })),
    { type: 'endpoint.disabled' as const, operational: true, description: DESCRIPTIONS['endpoint.disabled'], schema: bodySchema('endpoint.disabled') },
  ];
}
