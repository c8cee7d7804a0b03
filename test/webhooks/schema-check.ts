import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { eventCatalogue } from '../../src/webhooks/catalogue.js';

/**
 * Every delivery body a test receiver gets is checked against the event catalogue's JSON Schema
 * (the one GET /v1/webhooks/event-types serves; catalogue.test.ts holds the route to it), with
 * Ajv, an implementation independent of the server's own validation.
 */
const ajv = new Ajv2020({ strict: true, allErrors: true });
// RFC 3339 date-time, as the catalogue means it (Ajv's formats live in another package).
ajv.addFormat('date-time', (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s) && !Number.isNaN(Date.parse(s)));
const validators = new Map<string, ValidateFunction>(eventCatalogue().map((e) => [e.type, ajv.compile(e.schema)]));

/** Null when the body is a valid delivery of a catalogued type, else why not. */
export function deliveryProblem(body: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return `not JSON: ${body.slice(0, 80)}`;
  }
  const type = (value as { event?: unknown })?.event;
  const validate = typeof type === 'string' ? validators.get(type) : undefined;
  if (!validate) return `event ${JSON.stringify(type)} is not in the catalogue`;
  return validate(value) ? null : `${type}: ${ajv.errorsText(validate.errors)}`;
}
