// Why SMTP turned mail away: the fixed list of reasons the refusal counts and the
// temp_inbox_smtp_refusals_total metric use (docs/operating.md "Abuse controls").
export const REFUSAL_REASONS = [
  /** An operator's block of the sender, its domain or the client's IP range (550 5.7.1 at MAIL FROM). */
  'blocked',
  /** SENDER_DOMAIN_RATE_LIMIT (451 4.7.1 at MAIL FROM). */
  'sender_domain_rate',
  /** An attachment over ATTACHMENT_MAX_BYTES (552 5.3.4 at DATA). */
  'attachment_size',
  /** A refused attachment extension or executable content (552 5.7.0 at DATA). */
  'attachment_type',
  /** A spam score at or over SPAM_REFUSE_SCORE (554 5.7.1 at DATA). */
  'spam_score',
  /** No such mailbox (550 5.1.1 at RCPT TO, or 421 once a session has tried too many). */
  'unknown_recipient',
  /** A recipient at a retired domain of the pool. */
  'retired_domain',
  /** Over MAX_MESSAGE_BYTES (552 5.3.4). */
  'message_size',
  /** A per-client window or cap: SMTP_RATE_*, SMTP_DAILY_BYTES, SMTP_MAX_CLIENTS_PER_IP (421 or 452 4.7.0). */
  'rate_limit',
  /** The address is at ADDRESS_MAX_MAILS or ADDRESS_MAX_BYTES (452 4.2.2 at RCPT TO). */
  'mailbox_full',
  /** The server's own room: the in-flight budget or the client's share of it, or the store's disk below DISK_MIN_FREE (421 or 452 4.3.1, 4.7.0). */
  'busy',
] as const;

export type RefusalReason = (typeof REFUSAL_REASONS)[number];
