// A mail as the SDK returns it: the fields of GET /api/mail/{uuid}/parsed, plus
// raw() for the message source and content() on each attachment for its bytes.
import type { HeaderField, Mailbox, MailReport, ParsedAttachment, ParsedMail } from './api-types.js';

/** What a Message needs from its inbox to fetch more of itself. */
export interface MessageSource {
  raw(uuid: string): Promise<string>;
  attachmentContent(uuid: string, attachmentId: string): Promise<Uint8Array>;
  report(uuid: string, opts?: { checkLinks?: boolean }): Promise<MailReport>;
}

/** One attachment of a Message. JSON.stringify gives its fields only. */
export class MessageAttachment {
  declare readonly id: ParsedAttachment['id'];
  declare readonly filename: ParsedAttachment['filename'];
  declare readonly content_type: ParsedAttachment['content_type'];
  /** Decoded size in bytes. */
  declare readonly size: ParsedAttachment['size'];
  /** Content-ID without angle brackets (as `cid:` URLs name it), or null. */
  declare readonly content_id: ParsedAttachment['content_id'];
  /** Shown inside the message rather than attached. */
  declare readonly inline: ParsedAttachment['inline'];
  readonly #source: MessageSource;
  readonly #uuid: string;

  constructor(source: MessageSource, mailUuid: string, data: ParsedAttachment) {
    Object.assign(this, data);
    this.#source = source;
    this.#uuid = mailUuid;
  }

  /** The decoded bytes (GET /api/attachment/{uuid}/{id}). */
  content(): Promise<Uint8Array> {
    return this.#source.attachmentContent(this.#uuid, this.id);
  }
}

/**
 * A received mail, parsed by the service. Every field of GET /api/mail/{uuid}/parsed
 * is here as the service sent it; JSON.stringify gives them back.
 */
export class Message {
  declare readonly id: ParsedMail['id'];
  declare readonly uuid: ParsedMail['uuid'];
  /** Message-ID with angle brackets; empty when the mail had none. */
  declare readonly message_id: ParsedMail['message_id'];
  /** When the service stored it (RFC 3339, UTC). */
  declare readonly created_at: ParsedMail['created_at'];
  /** Marked read (Inbox.markSeen) when it was fetched. */
  declare readonly seen: ParsedMail['seen'];
  declare readonly subject: ParsedMail['subject'];
  /** The Date: header as RFC 3339, or null. */
  declare readonly date: ParsedMail['date'];
  declare readonly from: Mailbox;
  declare readonly to: Mailbox[];
  declare readonly cc: Mailbox[];
  declare readonly reply_to: Mailbox[];
  /** The whole decoded text part (the HTML as text when there is none). */
  declare readonly text: ParsedMail['text'];
  /** The whole decoded HTML part, or null. */
  declare readonly html: ParsedMail['html'];
  declare readonly headers: HeaderField[];
  declare readonly headers_truncated: ParsedMail['headers_truncated'];
  declare readonly attachments: MessageAttachment[];
  declare readonly attachments_truncated: ParsedMail['attachments_truncated'];
  /** Likely verification codes, most likely first. */
  declare readonly codes: string[];
  /** http(s) links in order of appearance. */
  declare readonly links: string[];
  /** True when the service could only read the header block in time. */
  declare readonly degraded: ParsedMail['degraded'];
  /** SPF, DKIM (each signature), DMARC and ARC verdicts of its arrival; absent when the service does not check (AUTH_CHECKS=off) or stored it before checking. */
  declare readonly auth: ParsedMail['auth'];
  readonly #source: MessageSource;

  constructor(source: MessageSource, data: ParsedMail) {
    Object.assign(this, data, { attachments: (data.attachments ?? []).map((a) => new MessageAttachment(source, data.uuid, a)) });
    this.#source = source;
  }

  /**
   * The message exactly as received, with the service's Received: line first
   * (GET /api/mail/{uuid}): UTF-8 text, or one character per byte when the message is
   * not valid UTF-8.
   */
  raw(): Promise<string> {
    return this.#source.raw(this.uuid);
  }

  /**
   * Would this mail reach an inbox, and look right there (GET /api/mail/{uuid}/report): its
   * spam score, HTML support, links, content and the Gmail/Yahoo sender rules, each with a
   * verdict. `checkLinks` also fetches each link (never those that act when opened).
   */
  report(opts: { checkLinks?: boolean } = {}): Promise<MailReport> {
    return this.#source.report(this.uuid, opts);
  }

  /** The first value of a header (case-insensitive name), or undefined. */
  header(name: string): string | undefined {
    const lower = name.toLowerCase();
    return this.headers.find((h) => h.name.toLowerCase() === lower)?.value;
  }
}
