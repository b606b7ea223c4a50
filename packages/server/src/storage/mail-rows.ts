// The rows of addresses and their mail as every backend stores and answers them (the
// storage contract's, store.ts). The HTTP layer maps them to the API schemas.

export interface AddressRecord {
  id: number;
  /** Lower-cased local@domain. */
  address: string;
  createdAt: number;
}

/**
 * One received message as stored once, however many recipients it has: the bytes
 * as received and the decoded attachments its metadata lists (in that order), so
 * that a download never parses the message again.
 */
export interface MailBody {
  raw: Buffer;
  attachments: readonly Buffer[];
}

export interface NewMail {
  uuid: string;
  addressId: number;
  address: string;
  source: string;
  messageId: string;
  /** JSON text of MailMetadata. */
  metadata: string;
  /** This recipient's Received: line; the stored raw message is trace + body.raw. */
  trace: Buffer;
  /** Shared by the mails of one delivery: stored once per insertMails call (by identity). */
  body: MailBody;
  createdAt: number;
  /** What searchMails finds the mail by (subject, people, decoded text); none: found by nothing. */
  searchText?: string;
  /** Queue a delivery to the operator's WEBHOOK_URL too (the address's own webhook, if any, is always queued). */
  operatorWebhook?: boolean;
  /** The SMTP envelope, kept for a sandbox's mail (one mail for every recipient). */
  envelope?: MailEnvelope;
  /**
   * When its webhook deliveries are first due (default createdAt): later while they wait
   * for its report summary, which keepReportSummary makes them due at once when it is kept.
   */
  webhooksDueAt?: number;
}

/** MAIL FROM ('' for the null sender) and every RCPT TO of a message a sandbox captured. */
export interface MailEnvelope {
  from: string;
  to: string[];
}

export interface MailSummary {
  id: number;
  uuid: string;
  source: string;
  address: string;
  metadata: string;
  messageId: string;
  createdAt: number;
  /** Marked read (setSeen); false when it is stored. */
  seen: boolean;
  /** Set for a sandbox's mail only (NewMail.envelope). */
  envelope?: MailEnvelope;
}

export interface MailRecord extends MailSummary {
  raw: Buffer;
}

/** A live mail with its raw message to read a piece at a time, so that a large message is never held whole. */
export interface MailReader extends MailSummary {
  /** The raw message's size in bytes. */
  bytes: number;
  /**
   * The raw message's pieces in order, each read from the store when asked for (a part,
   * storage/parts.ts); may be called again to read them again. Throws PartsGoneError when
   * the mail is purged while it is read.
   */
  pieces(): AsyncIterable<Buffer>;
}

/** What an address's live mail takes, for its quota. */
export interface AddressUsage {
  count: number;
  bytes: number;
}

/** A live mail's metadata and one attachment's decoded bytes (null when it has no such attachment). */
export interface StoredAttachment {
  metadata: string;
  content: Buffer | null;
  /** Stored before attachments were kept at delivery: content is null, parse the raw message instead. */
  legacy: boolean;
}

/** A stored attachment to read a piece at a time (Store.openAttachment). */
export interface AttachmentReader {
  metadata: string;
  /** As StoredAttachment's: stored before attachments were kept (no bytes: parse the raw message instead). */
  legacy: boolean;
  /** The decoded bytes' size; null when none are stored (legacy, or no attachment of that index). */
  bytes: number | null;
  /** The bytes' pieces in order, each read when asked for; throws PartsGoneError when the mail is purged meanwhile. */
  pieces(): AsyncIterable<Buffer>;
}
