// Schemas and static types for every request, response and error body of the
// temp-inbox interface (version 1.0.0). Imports TypeBox only.
import { Type, type Static } from '@sinclair/typebox';
import { ReportSummary } from './report.js';

export const API_VERSION = '1.0.0';

// Every route path, and the path builder (routes.ts).
export * from './routes.js';

/** Every error is a short plain-text sentence (docs/api.md "Conventions"). */
export const ErrorText = Type.String({
  description: 'A short human-readable sentence. Sent as text/plain; charset=utf-8.',
  examples: ['Invalid or missing token.'],
});

export const NewAddressBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({ maxLength: 256, description: 'Requested local part. Lower-cased, then must match [a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])? with no "..".' }),
    ),
    domain: Type.Optional(Type.String({ maxLength: 256, description: 'An active domain of the pool (GET /api/domains), or a one-label subdomain of one with random subdomains on; by DOMAIN_SELECTION when omitted.' })),
    cf_token: Type.Optional(
      Type.String({
        maxLength: 4096,
        description: 'Bot-challenge token; required when the challenge is enabled: the Turnstile token, or with CHALLENGE=pow the solved proof of work (PowSolution as base64 JSON, the ALTCHA payload).',
      }),
    ),
  },
  { additionalProperties: true, description: 'Unknown fields are ignored.' },
);
export type NewAddressBody = Static<typeof NewAddressBody>;

// The self-hosted bot challenge, CHALLENGE=pow (docs/decisions.md "Bot challenge"): an
// ALTCHA proof of work. The client finds `number` in 0..maxnumber such that
// SHA-256(salt + number), in lower-case hex, equals `challenge`, then sends
// base64(JSON of PowSolution) as `cf_token` with POST /api/new_address.

/** GET /api/challenge: one challenge, HMAC-signed by the server, expiring, good for one address. */
export const PowChallenge = Type.Object(
  {
    algorithm: Type.Literal('SHA-256', { description: 'Hash of salt + number.' }),
    challenge: Type.String({ description: 'Lower-case hex SHA-256 of salt followed by the secret number in decimal.' }),
    maxnumber: Type.Integer({ minimum: 1, description: 'The secret number is at most this (POW_MAX_NUMBER): the most numbers a solver has to try.' }),
    salt: Type.String({ description: 'Random hex, then `?expires=<unix seconds>&`: hash it as it is, the number appended.' }),
    signature: Type.String({ description: "The server's HMAC-SHA-256 of `challenge`, in hex; send it back unchanged." }),
  },
  { description: 'An ALTCHA proof-of-work challenge (the format ALTCHA widgets and libraries read).' },
);
export type PowChallenge = Static<typeof PowChallenge>;

/** What a solver sends back, base64-encoded JSON in `cf_token` (the ALTCHA payload). */
export const PowSolution = Type.Object(
  {
    algorithm: Type.Literal('SHA-256'),
    challenge: Type.String({ maxLength: 128, description: 'As issued.' }),
    number: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The number found.' }),
    salt: Type.String({ maxLength: 1024, description: 'As issued.' }),
    signature: Type.String({ maxLength: 256, description: 'As issued.' }),
    took: Type.Optional(Type.Number({ description: 'Milliseconds the solver took (ignored by the server).' })),
  },
  { additionalProperties: true },
);
export type PowSolution = Static<typeof PowSolution>;

export const NewAddressResponse = Type.Object({
  address: Type.String({ description: '<local_part>@<domain>' }),
  jwt: Type.String({ description: 'Address-bound bearer token, valid for 7 days.' }),
});
export type NewAddressResponse = Static<typeof NewAddressResponse>;

export const SettingsResponse = Type.Object({
  address: Type.String({ description: 'The address bound to the presented JWT.' }),
});
export type SettingsResponse = Static<typeof SettingsResponse>;

export const SuccessResponse = Type.Object({ success: Type.Boolean() });
export type SuccessResponse = Static<typeof SuccessResponse>;

export const MailsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1..100.' }),
    offset: Type.Integer({ minimum: 0, description: 'Number of newer mails to skip.' }),
  },
  { additionalProperties: true },
);
export type MailsQuery = Static<typeof MailsQuery>;

/** Longest search query. */
export const MAX_SEARCH_QUERY_CHARS = 200;

export const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: MAX_SEARCH_QUERY_CHARS, description: 'Words to find (each as the start of a word; all must match), and the terms of docs/api.md "GET /api/mails/search" (from:, to:, subject:, has:attachment, is:read, is:unread, before:, after:, "phrases", - to negate).' }),
    limit: Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1..100.' }),
    offset: Type.Integer({ minimum: 0, description: 'Number of newer matches to skip.' }),
  },
  { additionalProperties: true },
);
export type SearchQuery = Static<typeof SearchQuery>;

// Beyond the interface: push and long-poll (docs/decisions.md "Beyond the interface").

/** Longest `from`, `to` or `subject` filter of a wait or an event stream. */
export const MAX_FILTER_CHARS = 256;

const filterFields = {
  from: Type.Optional(
    Type.String({ maxLength: MAX_FILTER_CHARS, description: 'Only mail whose From: name or address contains this (case-insensitive).' }),
  ),
  to: Type.Optional(
    Type.String({ maxLength: MAX_FILTER_CHARS, description: 'Only mail with a To: recipient whose name or address contains this (case-insensitive).' }),
  ),
  subject: Type.Optional(Type.String({ maxLength: MAX_FILTER_CHARS, description: 'Only mail whose subject contains this (case-insensitive).' })),
};

export const WaitQuery = Type.Object(
  {
    ...filterFields,
    since: Type.Optional(
      Type.Integer({ minimum: 0, default: 0, description: 'Answer with mails whose `id` is greater than this: the largest `id` the client has seen. 0 (the default): any mail.' }),
    ),
    timeout: Type.Optional(Type.Integer({ minimum: 0, maximum: 60, default: 30, description: 'Seconds to wait for such a mail, 0..60; then 204.' })),
  },
  { additionalProperties: true },
);
export type WaitQuery = Static<typeof WaitQuery>;

export const EventsQuery = Type.Object(
  {
    ...filterFields,
    since: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Replay the mails whose `id` is greater than this (at most the newest 100) before the live events. The `Last-Event-ID` header, which EventSource sends when it reconnects, does the same.',
      }),
    ),
  },
  { additionalProperties: true },
);
export type EventsQuery = Static<typeof EventsQuery>;

export const MailListItem = Type.Object({
  id: Type.Integer({ description: 'Numeric identifier.' }),
  uuid: Type.String({ format: 'uuid', description: 'Identifier used in paths.' }),
  source: Type.String({ description: 'Envelope sender (MAIL FROM), or the From: address for a null sender.' }),
  address: Type.String({ description: 'Receiving address.' }),
  metadata: Type.String({ description: 'JSON-encoded MailMetadata; parse it to read subject, from, codes, links, attachments.' }),
  created_at: Type.String({ format: 'date-time', description: 'RFC 3339, UTC.' }),
  message_id: Type.String({ description: 'Message-ID including angle brackets (empty when the message has none).' }),
  seen: Type.Boolean({ description: 'Whether the mail was marked read (PATCH /api/mail/{uuid}); false when it arrives. Reading a mail does not set it.' }),
  recipients: Type.Optional(
    Type.Array(Type.String(), {
      description: "A sandbox's mail only: every envelope recipient (RCPT TO) of the message, Bcc-only ones included; absent for an address's mail.",
    }),
  ),
});
export type MailListItem = Static<typeof MailListItem>;

export const MailsResponse = Type.Object({
  results: Type.Array(MailListItem),
  count: Type.Integer({ description: 'Total number of live mails of the address, at every offset.' }),
});
export type MailsResponse = Static<typeof MailsResponse>;

export const FullMail = Type.Composite([
  MailListItem,
  Type.Object({ raw: Type.String({ description: 'The complete RFC 5322 message as received, with a Received: trace line prepended.' }) }),
]);
export type FullMail = Static<typeof FullMail>;

/** PATCH /api/mail/{uuid}: marks one mail read or unread. */
export const SeenBody = Type.Object(
  { seen: Type.Boolean({ description: 'true: read; false: unread.' }) },
  { additionalProperties: true, description: 'Unknown fields are ignored.' },
);
export type SeenBody = Static<typeof SeenBody>;

// No length limits: docs/decisions.md — an unknown or malformed uuid is 404, never 400.
export const UuidParams = Type.Object({ uuid: Type.String() });
export type UuidParams = Static<typeof UuidParams>;

export const AttachmentParams = Type.Object({
  uuid: Type.String(),
  attachmentId: Type.String(),
});
export type AttachmentParams = Static<typeof AttachmentParams>;

export const Mailbox = Type.Object({ name: Type.String(), address: Type.String() });
export type Mailbox = Static<typeof Mailbox>;

export const AttachmentInfo = Type.Object({
  id: Type.String({ description: 'Use in GET /api/attachment/{mail_uuid}/{id}.' }),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer({ description: 'Decoded size in bytes.' }),
});
export type AttachmentInfo = Static<typeof AttachmentInfo>;

// Mail authentication verdicts (docs/decisions.md "Authentication verdicts"): the
// RFC 8601 result words, computed when the mail arrives, before its 250.
export const AUTH_RESULTS = ['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror'] as const;
export const AuthResult = Type.Union(
  AUTH_RESULTS.map((r) => Type.Literal(r)),
  { description: 'An RFC 8601 result word. temperror: DNS did not answer within the budget (2 s per mail); permerror: a record or signature that cannot be used.' },
);
export type AuthResult = Static<typeof AuthResult>;

export const DkimVerdict = Type.Object({
  domain: Type.String({ description: 'The signing domain (d=), at most 253 characters.' }),
  selector: Type.String({ description: 'The selector (s=), at most 63 characters.' }),
  result: AuthResult,
});
export type DkimVerdict = Static<typeof DkimVerdict>;

export const MailAuth = Type.Object(
  {
    spf: AuthResult,
    dkim: Type.Array(DkimVerdict, { maxItems: 10, description: 'One entry per DKIM-Signature, in header order: at most 10, fewer when their names are long (the verdict is at most 1 KiB); empty when the mail is not signed.' }),
    dmarc: AuthResult,
    arc: AuthResult,
  },
  {
    description:
      'SPF (of MAIL FROM, or of HELO for a null sender), DKIM, DMARC and the ARC chain, as this server computed them when the mail arrived. Absent on mail stored before they were computed and when AUTH_CHECKS=off.',
  },
);
export type MailAuth = Static<typeof MailAuth>;

/** The object encoded in every mail's `metadata` string. */
export const MailMetadata = Type.Object({
  subject: Type.String({ description: 'Decoded subject (RFC 2047).' }),
  from: Mailbox,
  to: Type.Array(Mailbox),
  cc: Type.Optional(Type.Array(Mailbox, { description: 'The Cc: mailboxes (at most 100, fewer when the metadata would be too large). Mail stored before they were recorded has none.' })),
  reply_to: Type.Optional(Type.Array(Mailbox, { description: 'The Reply-To: mailboxes (at most 10). Mail stored before they were recorded has none.' })),
  date: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The Date: header as RFC 3339, or null.' }),
  size: Type.Integer({ description: 'Raw size in bytes as received.' }),
  preview: Type.String({ description: 'The first ~200 characters of the text.' }),
  has_html: Type.Boolean(),
  attachments: Type.Array(AttachmentInfo, { description: 'At most 100 entries; see attachments_truncated.' }),
  attachments_truncated: Type.Optional(Type.Boolean({ description: 'Present and true when the message has more attachments than are listed (the source keeps them all).' })),
  delivered_to: Type.Optional(
    Type.String({ description: 'The address the mail was sent to (RCPT TO) as the sender gave it, e.g. with the +tag plus-addressing removed to deliver it. Mail stored before it was recorded has none.' }),
  ),
  codes: Type.Array(Type.String(), { description: 'Verification codes found in the decoded text (each near a code word), in order of appearance.' }),
  links: Type.Array(Type.String(), { description: 'http(s) links found in the text and HTML, in order of appearance.' }),
  auth: Type.Optional(MailAuth),
});
export type MailMetadata = Static<typeof MailMetadata>;

// GET /api/mail/{uuid}/parsed (docs/api.md; bounds in docs/decisions.md "Parsed mail").
export const HeaderField = Type.Object({
  name: Type.String({ description: 'The header name as written in the message.' }),
  value: Type.String({ description: 'Unfolded, with RFC 2047 encoded words decoded.' }),
});
export type HeaderField = Static<typeof HeaderField>;

export const ParsedAttachment = Type.Object({
  id: Type.String({ description: 'Use in GET /api/attachment/{mail_uuid}/{id}.' }),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer({ description: 'Decoded size in bytes.' }),
  content_id: Type.Union([Type.String(), Type.Null()], { description: 'Content-ID without angle brackets, as `cid:` URLs name it; null when the part has none.' }),
  inline: Type.Boolean({ description: 'Shown inside the message (Content-Disposition inline, or referenced from a multipart/related HTML part) rather than attached.' }),
});
export type ParsedAttachment = Static<typeof ParsedAttachment>;

/** What the parser reads from a message: a ParsedMail without the stored mail's own fields. */
export const ParsedMailContent = Type.Object({
  subject: Type.String({ description: 'Decoded (RFC 2047), at most 1,024 characters.' }),
  date: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The Date: header as RFC 3339, or null.' }),
  from: Mailbox,
  to: Type.Array(Mailbox, { description: 'Groups flattened; at most 1,000 entries.' }),
  cc: Type.Array(Mailbox, { description: 'Groups flattened; at most 1,000 entries.' }),
  reply_to: Type.Array(Mailbox, { description: 'Groups flattened; at most 1,000 entries.' }),
  text: Type.String({ description: 'The whole decoded text part, never truncated; the HTML rendered as text when the message has no text part.' }),
  html: Type.Union([Type.String(), Type.Null()], { description: 'The whole decoded HTML part, or null.' }),
  headers: Type.Array(HeaderField, { description: 'The top-level headers in order, the Received: line the server added first; at most 1,000 and 256 Ki characters in all.' }),
  headers_truncated: Type.Boolean({ description: 'True when headers were dropped or the last one cut to stay within the bounds.' }),
  attachments: Type.Array(ParsedAttachment, { description: 'The attachments the mail\'s metadata lists (at most 100), with the same ids.' }),
  attachments_truncated: Type.Boolean({ description: 'True when the message has more attachments than are listed.' }),
  codes: Type.Array(Type.String(), { description: 'Verification codes in order of appearance (as in the metadata).' }),
  links: Type.Array(Type.String(), { description: 'http(s) links in order of appearance (as in the metadata).' }),
  degraded: Type.Boolean({
    description: 'True when the message could not be parsed within PARSE_TIMEOUT (or the parser refused it): every field then comes from the header block alone, `text` is empty, `html` null and `attachments` empty.',
  }),
});
export type ParsedMailContent = Static<typeof ParsedMailContent>;

export const ParsedMail = Type.Composite([
  Type.Object({
    id: MailListItem.properties.id,
    uuid: MailListItem.properties.uuid,
    message_id: MailListItem.properties.message_id,
    created_at: MailListItem.properties.created_at,
    seen: MailListItem.properties.seen,
    recipients: MailListItem.properties.recipients,
  }),
  ParsedMailContent,
  // From the stored metadata, not the parse: the verdicts of the mail's arrival.
  Type.Object({ auth: Type.Optional(MailAuth) }),
  // Kept with the mail once its report was built (docs/api.md "Deliverability report").
  Type.Object({ report: Type.Optional(Type.Object(ReportSummary.properties, { description: "The mail's report summary, once its report was built (on arrival with SPAM_SCANNER, or at its first GET /api/mail/{uuid}/report); absent until then." })) }),
]);
export type ParsedMail = Static<typeof ParsedMail>;

export const SessionAddress = Type.Object({
  address: Type.String(),
  createdAt: Type.Integer({ description: 'Address creation time, milliseconds since the epoch.' }),
});
export type SessionAddress = Static<typeof SessionAddress>;

export const SessionListing = Type.Object({
  addresses: Type.Array(SessionAddress),
  activeAddress: Type.String({ description: 'The active address (empty when the session holds none).' }),
});
export type SessionListing = Static<typeof SessionListing>;

export const SwitchAddressBody = Type.Object({ address: Type.String({ maxLength: 320 }) }, { additionalProperties: true });
export type SwitchAddressBody = Static<typeof SwitchAddressBody>;

export const SwitchAddressResponse = Type.Object({ success: Type.Boolean(), address: Type.String() });
export type SwitchAddressResponse = Static<typeof SwitchAddressResponse>;

/** Opens an existing inbox (created by the API, the SDK or the CLI) in this browser session. */
export const OpenAddressBody = Type.Object({ jwt: Type.String({ minLength: 1, maxLength: 8192, description: "The address's JWT." }) }, { additionalProperties: false });
export type OpenAddressBody = Static<typeof OpenAddressBody>;

export const HealthResponse = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
  version: Type.String(),
  /** ok; low: below DISK_MIN_FREE, new mail is refused for now; full: writes fail for lack of space (status error, 503). */
  storage: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('low'), Type.Literal('full')])),
});
export type HealthResponse = Static<typeof HealthResponse>;

/** GET /ui-config.json: what the web UI needs to know of the server. */
export const UiConfig = Type.Object({
  domains: Type.Array(Type.String(), { description: 'The mail domains, the default first.' }),
  turnstileSiteKey: Type.Union([Type.String(), Type.Null()], { description: "Turnstile's site key when the bot challenge is Turnstile, else null." }),
  customNames: Type.Boolean({ description: 'Whether a name may be asked for.' }),
  challenge: Type.Union([Type.Literal('off'), Type.Literal('turnstile'), Type.Literal('pow')], { description: 'The bot challenge creating an address asks for (CHALLENGE).' }),
  abuseContact: Type.Union([Type.String(), Type.Null()], { description: 'Where abuse is reported (ABUSE_CONTACT): an email address or an http(s) URL, shown in the footer; null when unset.' }),
});
export type UiConfig = Static<typeof UiConfig>;

// The Mailpit- and MailHog-compatible APIs' answers.
export * from './compat.js';

// The mail.tm-compatible API's answers (JSON-LD and plain JSON).
export * from './mailtm.js';

// The operators' admin interface (ADMIN_TOKEN).
export * from './admin.js';
export * from './domain-pool.js';
export * from './domain-stats.js';
export * from './sandboxes.js';

// Webhooks of an address (PUT /api/webhook).
export * from './webhooks.js';

// The deliverability report of one mail (GET /api/mail/{uuid}/report).
export * from './report.js';
