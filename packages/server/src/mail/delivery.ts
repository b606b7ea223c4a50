// Delivery of one message (docs/architecture.md "The way of one mail"): parsed once and
// its verdicts computed beside the parse, off the event loop; stored once for all its
// recipients, with a Received: line each; then the webhook outbox is woken, the message
// handed to the reports on arrival (with SPAM_SCANNER) and the mail announced on the event bus.
import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { SpamSection } from '@temp-inbox/api';
import type { MailBody, MailEnvelope } from '../storage/store.js';
import type { VersionedStore } from '../storage/caching-store.js';
import type { Recipient } from './addresses.js';
import { refusalOf, type AttachmentPolicy } from './attachment-policy.js';
import type { EventBus } from './events/events.js';
import type { MailAuthenticator } from './auth/auth.js';
import type { MessageParser } from './parse/parse.js';
import { deliveryMetadata } from './parse/metadata.js';
import type { MessageBuffer } from './message-buffer.js';
import { receivedHeader, type ReceivedTrace } from './received.js';
import { spamRefusalOf, type SpamCheck } from './spam-check.js';

export interface Envelope {
  /** MAIL FROM; empty string for the null sender <>. */
  sender: string;
  recipients: Recipient[];
  /** The message as received (joined once, behind the Received: line). */
  message: MessageBuffer;
  /** Who sent it, as the per-client limits count clients (an IPv4 address, an IPv6 /64): the parser's waiting messages take turns by it. */
  client: string;
  trace: Omit<ReceivedTrace, 'recipient' | 'id' | 'date'>;
  /** A sandbox's capture (docs/decisions.md "Sandboxes"): the whole envelope is kept on the mail and its recipients are searchable. */
  capture?: MailEnvelope;
}

/** A stored message as the reports on arrival take it: its mails and its SMTP envelope. */
export interface ArrivedMessage {
  mails: { id: number; addressId: number; uuid: string }[];
  envelope: { ip?: string; helo?: string; from?: string; rcpt?: string };
  /** Some webhook delivery of these mails was queued. */
  deliveries: boolean;
  /** The scan made before the 250 (SPAM_REFUSE_SCORE), which its report reuses instead of scanning again. */
  spam?: SpamSection;
}

export interface DeliveredMail {
  addressId: number;
  uuid: string;
}

/** What delivery is given (mail/service.ts MailServiceOptions). */
export interface DeliveryOptions {
  store: VersionedStore;
  parser: MessageParser;
  authenticator?: MailAuthenticator | undefined;
  bus?: EventBus | undefined;
  outbox?: { operator: boolean; queued: () => void } | undefined;
  /** Reports built after arrival (mail/service.ts MailServiceOptions.arrivals). */
  arrivals?: { webhookWaitMs: number; arrived(message: ArrivedMessage): void } | undefined;
  now: () => number;
  /** What attachments a message may carry (attachment-policy.ts); a sandbox's capture is not checked. Absent: any. */
  attachmentPolicy?: AttachmentPolicy | undefined;
  /** SPAM_REFUSE_SCORE with a scanner (spam-check.ts); a sandbox's capture is not checked. Absent: no refusal by score. */
  spamCheck?: SpamCheck | undefined;
  /** Creates a pending catch-all recipient's address (addresses.ts createPending). */
  createPending: (recipient: Recipient) => Promise<Recipient>;
}

/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets; longer is cut, not refused. */
const MAX_SOURCE_CHARS = 256;
/** RFC 5322 §2.1.1: a header line is at most 998 characters. */
const MAX_MESSAGE_ID_CHARS = 998;

// uuid's v7() draws 16 bytes from WebCrypto on every call (2-3 µs each, a few per
// cent of a delivery); its `random` option takes them from this pool instead, filled
// 4 KiB at a time. Within one millisecond the order of such uuids is random rather
// than monotonic, which the uuid index does not need: only the time prefix must grow.
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomAt = 0;
function timeOrderedUuid(): string {
  if (randomAt + 16 > randomPool.length) {
    randomPool = randomFillSync(Buffer.allocUnsafe(RANDOM_POOL_BYTES));
    randomAt = 0;
  }
  const random = randomPool.subarray(randomAt, (randomAt += 16));
  return uuidv7({ random });
}

export function createDelivery(opts: DeliveryOptions): (env: Envelope) => Promise<DeliveredMail[]> {
  const { store, parser, bus, now, createPending } = opts;
  let deliveriesWoken = 0;

  return async function deliver(env: Envelope): Promise<DeliveredMail[]> {
    const createdAt = now();
    const operatorWebhook = opts.outbox?.operator === true;
    const arrivals = opts.arrivals;
    // With reports on arrival, webhook deliveries wait for the summary, within a bound.
    const webhooksDueAt = arrivals ? { webhooksDueAt: createdAt + arrivals.webhookWaitMs } : {};
    // Time-ordered (RFC 9562 version 7): each insert appends to the uuid index
    // instead of touching a random page of it, which keeps ingest fast in a large store.
    const uuids = env.recipients.map(() => timeOrderedUuid());
    // The random tail of the uuid (its head is the time) names the delivery in Received:.
    const traceFor = (i: number) =>
      receivedHeader({ ...env.trace, recipient: env.recipients[i]!.rcpt, id: uuids[i]!.slice(-8), date: new Date(createdAt) });
    const raw = env.message.take();
    // Parsed once per message, in a worker; stored once, however many recipients it has. The
    // authentication checks run beside the parse, in a worker of their own, before the 250
    // (docs/decisions.md "Authentication verdicts").
    // With SPAM_REFUSE_SCORE the scan runs beside them too (bounded by its time-out), so its wait overlaps theirs.
    const spamCheck = env.capture ? undefined : opts.spamCheck;
    const [parsed, auth, spam] = await Promise.all([
      parser.parse(raw, env.client),
      opts.authenticator?.check(raw, { ip: env.trace.remoteAddress, helo: env.trace.helo, sender: env.sender }),
      spamCheck?.scan(raw, { ip: env.trace.remoteAddress, helo: env.trace.helo, from: env.sender, rcpt: env.recipients[0]?.rcpt }),
    ]);
    // Refused whole, before anything is stored (an AttachmentRefusedError: SMTP answers 552 or 554; a SpamRefusedError, 554).
    const refusal = env.capture ? undefined : (refusalOf(opts.attachmentPolicy, parsed.facts) ?? spamRefusalOf(spamCheck, spam));
    if (refusal) throw refusal;
    // Bounded like the metadata, so no field of a list item can grow without limit.
    const source = (env.sender || parsed.fromAddress || '').slice(0, MAX_SOURCE_CHARS);
    const messageId = parsed.messageId.slice(0, MAX_MESSAGE_ID_CHARS);
    const body: MailBody = { raw, attachments: parsed.attachments.map((a) => a.content) };
    // A catch-all address is created with its first mail, once that mail is ready to store.
    const recipients = env.recipients.some((r) => r.pending) ? await Promise.all(env.recipients.map(createPending)) : env.recipients;
    const rows = recipients.map((rcpt, i) => {
      const trace = traceFor(i);
      // Only `size` (the Received: line) and `delivered_to` differ per copy: joined to the parse's JSON, not serialised again.
      const metadata = deliveryMetadata(parsed.metadataJson, trace.length + raw.length, rcpt.rcpt, auth);
      const capture = env.capture;
      const searchText = capture ? `${parsed.searchText}\n${capture.to.join(' ')}` : parsed.searchText;
      return { uuid: uuids[i]!, addressId: rcpt.id, address: rcpt.address, source, messageId, metadata, trace, body, createdAt, searchText, operatorWebhook, ...webhooksDueAt, ...(capture ? { envelope: capture } : {}) };
    });
    const ids = await store.insertMails(rows);
    // A sandbox's mail is given the tags of its X-Tags header (Mailpit's), before the 250.
    if (env.capture && parsed.tags.length > 0) {
      for (const r of rows) await store.setMailTags(r.addressId, [r.uuid], parsed.tags);
    }
    // The dispatcher looks at the outbox only when some delivery was queued since it last did.
    const queued = store.deliveriesQueued();
    const deliveries = queued !== deliveriesWoken;
    if (deliveries) {
      deliveriesWoken = queued;
      opts.outbox?.queued();
    }
    // Only queued here: the report is built on a later turn, after the 250 (report/arrival.ts).
    arrivals?.arrived({
      mails: rows.map((r, i) => ({ id: ids[i]!, addressId: r.addressId, uuid: r.uuid })),
      envelope: { ip: env.trace.remoteAddress, helo: env.trace.helo, from: env.sender, rcpt: recipients[0]!.rcpt },
      deliveries,
      ...(spam ? { spam } : {}),
    });
    if (bus) {
      rows.forEach((r, i) =>
        bus.publish(r.addressId, {
          type: 'mail',
          mail: { id: ids[i]!, uuid: r.uuid, source: r.source, address: r.address, metadata: r.metadata, messageId: r.messageId, createdAt: r.createdAt, seen: false, ...(r.envelope ? { envelope: r.envelope } : {}) },
        }),
      );
    }
    return rows.map((r) => ({ addressId: r.addressId, uuid: r.uuid }));
  };
}
