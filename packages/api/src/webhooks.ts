// Webhooks (docs/api.md "Webhooks"): an address's owner names a URL, and every mail the
// address receives is POSTed there as JSON, signed as the Standard Webhooks specification
// says (webhook-id, webhook-timestamp, webhook-signature).
import { Type, type Static } from '@sinclair/typebox';
import { ReportSummary } from './report.js';

/** Longest webhook URL accepted (docs/security.md "Webhooks"). */
export const MAX_WEBHOOK_URL_CHARS = 2048;

/** Most delivery attempts GET /api/webhook/deliveries answers with. */
export const MAX_WEBHOOK_DELIVERIES = 100;

export const WebhookBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: MAX_WEBHOOK_URL_CHARS,
      description: 'An http:// or https:// URL without user name or password, whose host is (or resolves only to) public addresses.',
    }),
  },
  { additionalProperties: false },
);
export type WebhookBody = Static<typeof WebhookBody>;

export const Webhook = Type.Object({
  url: Type.String({ description: 'Where every mail the address receives is POSTed.' }),
  created_at: Type.String({ format: 'date-time', description: 'When the URL (and its secret) was set.' }),
});
export type Webhook = Static<typeof Webhook>;

/** PUT /api/webhook: the webhook as set, with its signing secret — shown this once. */
export const WebhookCreated = Type.Composite([
  Webhook,
  Type.Object({
    secret: Type.String({
      description: 'whsec_ followed by the base64 of 32 random bytes: the key of the webhook-signature HMAC. Shown only in this answer; every PUT makes a new one.',
    }),
  }),
]);
export type WebhookCreated = Static<typeof WebhookCreated>;

export const WebhookDeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WEBHOOK_DELIVERIES, default: 50, description: 'How many attempts, newest first (1..100, default 50).' })),
  },
  { additionalProperties: true },
);
export type WebhookDeliveriesQuery = Static<typeof WebhookDeliveriesQuery>;

export const WEBHOOK_OUTCOMES = ['delivered', 'failed', 'gave_up'] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

export const WebhookDelivery = Type.Object({
  webhook_id: Type.String({ description: 'The webhook-id header: msg_ and the mail uuid, the same for every attempt of one mail.' }),
  mail_uuid: Type.String({ format: 'uuid' }),
  url: Type.String({ description: 'Where this attempt was sent.' }),
  attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt of this mail, 2 for the first retry, …' }),
  at: Type.String({ format: 'date-time', description: 'When the attempt started.' }),
  outcome: Type.Union([Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('gave_up')], {
    description: 'delivered: a 2xx answer; failed: another answer, a time-out or no connection, retried at next_attempt_at; gave_up: failed, and 24 hours have passed since the mail arrived, so it is not tried again.',
  }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status the receiver answered, or null when it answered none.' }),
  duration_ms: Type.Integer({ minimum: 0 }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed, in a sentence; null when delivered.' }),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the mail is tried again (failed only).' }),
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveriesResponse = Type.Object({
  results: Type.Array(WebhookDelivery, { description: 'Newest first; attempts are kept 7 days.' }),
});
export type WebhookDeliveriesResponse = Static<typeof WebhookDeliveriesResponse>;

/** The body of every webhook POST (Standard Webhooks' {type, timestamp, data}). */
export const MailReceivedEvent = Type.Object({
  type: Type.Literal('mail.received'),
  timestamp: Type.String({ format: 'date-time', description: 'When the mail was received (its created_at).' }),
  // The fields of MailListItem (index.ts), spelled out here: index.ts re-exports this module.
  data: Type.Object(
    {
      id: Type.Integer(),
      uuid: Type.String({ format: 'uuid' }),
      source: Type.String({ description: 'Envelope sender (MAIL FROM), or the From: address for a null sender.' }),
      address: Type.String({ description: 'The receiving address.' }),
      metadata: Type.String({ description: 'JSON-encoded MailMetadata, as in GET /api/mails.' }),
      created_at: Type.String({ format: 'date-time' }),
      message_id: Type.String(),
      seen: Type.Boolean({ description: 'false: the mail as it arrived.' }),
      recipients: Type.Optional(Type.Array(Type.String(), { description: "A sandbox's mail only: every envelope recipient, Bcc-only ones included." })),
      report: Type.Optional(
        Type.Object(ReportSummary.properties, {
          description:
            "The mail's deliverability report in one line per section, when it was ready: with SPAM_SCANNER a delivery waits for it (SPAM_SCANNER_TIMEOUT and 5 s at most); absent when it was not ready by then, or without a scanner before anyone asked for the report.",
        }),
      ),
    },
    { description: 'The mail as GET /api/mails lists it, as it arrived, with its report summary when ready.' },
  ),
});
export type MailReceivedEvent = Static<typeof MailReceivedEvent>;
