/** What a Node receiver of brainstem webhooks imports: verification and the signing primitives. */
export { verifyWebhook, verifyWebhookV1a, type PublicKeys, type VerifyOptions, type VerifyResult, type HeaderBag } from '../webhooks/verify.js';
export { serviceSignature, standardSignature, standardKey, verifyServiceSignature, verifyStandardSignature } from '../signing/webhook.js';
export { EVENT_TYPES, type EventType } from '../webhooks/types.js';
export { eventCatalogue, bodySchema } from '../webhooks/catalogue.js';
