// What a webhook POST carries (docs/api.md "Webhooks"): the mail.received event as JSON,
// and the three Standard Webhooks headers, signed with the standardwebhooks library
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
import { randomBytes } from 'node:crypto';
import type { MailReceivedEvent } from '@temp-inbox/api';
import { Webhook } from 'standardwebhooks';
import type { WebhookMail } from '../storage/store.js';

/** Bytes of a generated secret (the specification asks for 24 to 64). */
const SECRET_BYTES = 32;

/** A new signing secret: whsec_ and the base64 of 32 random bytes, as the specification writes keys. */
export function newSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The webhook-id of a mail's deliveries: the same for every attempt, so a receiver can drop a repeat. */
export const messageId = (mailUuid: string) => `msg_${mailUuid}`;

/** The JSON body POSTed for a mail: the same bytes at every attempt, but for a report summary kept after one. */
export function mailReceivedBody(mail: WebhookMail): string {
  const createdAt = new Date(mail.createdAt).toISOString();
  const event: MailReceivedEvent = {
    type: 'mail.received',
    timestamp: createdAt,
    data: {
      id: mail.id,
      uuid: mail.uuid,
      source: mail.source,
      address: mail.address,
      metadata: mail.metadata,
      created_at: createdAt,
      message_id: mail.messageId,
      // As it arrived (and as the event stream's mail event has it): the same at every attempt.
      seen: false,
      ...(mail.envelope ? { recipients: mail.envelope.to } : {}),
      // Once kept (with SPAM_SCANNER the delivery waited for it, within a bound): docs/decisions.md "Deliverability report".
      ...(mail.reportSummary !== undefined ? { report: JSON.parse(mail.reportSummary) as NonNullable<MailReceivedEvent['data']['report']> } : {}),
    },
  };
  return JSON.stringify(event);
}

/**
 * The webhook-id, webhook-timestamp and webhook-signature headers of one attempt.
 * `at` is the attempt's own time (receivers refuse a timestamp more than five minutes
 * from their clock), so it is the wall clock, not the service's injectable one.
 */
export function signedHeaders(secret: string, id: string, body: string, at: Date): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}
