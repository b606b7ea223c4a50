// The operators' admin interface (/api/admin/*, served only when ADMIN_TOKEN is set;
// docs/api.md "Admin", docs/decisions.md "Admin"). Every request carries
// `Authorization: Bearer <ADMIN_TOKEN>`; errors are plain text like the rest of the API.
import { Type, type Static } from '@sinclair/typebox';

/** Longest `q` of GET /api/admin/addresses (an address is at most 254 characters). */
export const MAX_ADMIN_QUERY_CHARS = 256;

export const AdminAddressesQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: MAX_ADMIN_QUERY_CHARS, description: 'Only addresses containing this text (case-insensitive); empty: all.' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1..100.' }),
    offset: Type.Integer({ minimum: 0, description: 'Number of newer addresses to skip.' }),
  },
  { additionalProperties: true },
);
export type AdminAddressesQuery = Static<typeof AdminAddressesQuery>;

export const AdminAddress = Type.Object({
  id: Type.Integer({ description: 'Use in /api/admin/addresses/{id}.' }),
  address: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  unclaimed: Type.Boolean({ description: 'Created by the catch-all on its first mail; nobody holds its token yet.' }),
  mails: Type.Integer({ description: 'Live mails.' }),
  bytes: Type.Integer({ description: 'Size of the live mails, as the quota counts it.' }),
  last_activity: Type.String({ format: 'date-time', description: 'When its newest live mail arrived, or when it was created if it has none.' }),
});
export type AdminAddress = Static<typeof AdminAddress>;

export const AdminAddressesResponse = Type.Object({
  results: Type.Array(AdminAddress, { description: 'Newest first.' }),
  count: Type.Integer({ description: 'Addresses matching q, at every offset.' }),
});
export type AdminAddressesResponse = Static<typeof AdminAddressesResponse>;

export const AdminNewAddressBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 256, description: 'Requested local part, under the same rules as POST /api/new_address; random when omitted.' })),
    domain: Type.Optional(Type.String({ maxLength: 256, description: 'An active domain of the pool, as POST /api/new_address takes it; by DOMAIN_SELECTION when omitted.' })),
  },
  { additionalProperties: false },
);
export type AdminNewAddressBody = Static<typeof AdminNewAddressBody>;

/** Ids arrive as text and are checked by the route (a malformed one is a 400). */
export const AdminIdParams = Type.Object({ id: Type.String() });
export type AdminIdParams = Static<typeof AdminIdParams>;

export const AdminMailParams = Type.Object({ id: Type.String(), uuid: Type.String() });
export type AdminMailParams = Static<typeof AdminMailParams>;

/** What a block refuses at SMTP MAIL FROM: one envelope sender, a sender domain (and its subdomains), or a client IP or CIDR range. */
export const BLOCK_KINDS = ['sender', 'domain', 'ip'] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

export const MAX_BLOCK_NOTE_CHARS = 200;

export const NewBlockBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('sender'), Type.Literal('domain'), Type.Literal('ip')], {
      description: 'sender (an address), domain (a domain and its subdomains) or ip (an address or CIDR range).',
    }),
    value: Type.String({ minLength: 1, maxLength: 320, description: 'alice@spam.example, spam.example, 192.0.2.7, 198.51.100.0/24 or 2001:db8::/48.' }),
    note: Type.Optional(Type.String({ maxLength: MAX_BLOCK_NOTE_CHARS, description: 'Why, for the operators who read the list later.' })),
  },
  { additionalProperties: false },
);
export type NewBlockBody = Static<typeof NewBlockBody>;

export const Block = Type.Object({
  id: Type.Integer({ description: 'Use in DELETE /api/admin/blocks/{id}.' }),
  kind: NewBlockBody.properties.kind,
  value: Type.String({ description: 'As it is matched: lower-cased; an IP range as its network address and prefix length.' }),
  note: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
export type Block = Static<typeof Block>;

export const BlocksResponse = Type.Object({
  results: Type.Array(Block, { description: 'Newest first.' }),
  count: Type.Integer(),
});
export type BlocksResponse = Static<typeof BlocksResponse>;

export const AdminStats = Type.Object({
  mails_per_day: Type.Array(
    Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD.' }), mails: Type.Integer({ description: 'Mails stored that day (one per recipient address).' }) }),
    { description: 'The last 30 days, oldest first, today last; counted at delivery, so mail purged since still counts.' },
  ),
  top_senders: Type.Array(Type.Object({ sender: Type.String({ description: 'Envelope sender (MAIL FROM); empty for the null sender.' }), mails: Type.Integer() }), {
    description: 'The 10 senders of the most mail among the mail still stored from the last 30 days, most first.',
  }),
  storage: Type.Object({
    addresses: Type.Integer(),
    mails: Type.Integer({ description: 'Live mails.' }),
    mail_bytes: Type.Integer({ description: 'Size of the live mails, as the quotas count it.' }),
    database_bytes: Type.Integer({ description: 'What the database takes: the SQLite file, or the tables and indexes of the PostgreSQL schema.' }),
  }),
});
export type AdminStats = Static<typeof AdminStats>;

/** `hours` arrives as text and is checked by the route (a whole number 1..744, else a 400). */
export const AdminRefusalsQuery = Type.Object(
  { hours: Type.Optional(Type.String({ maxLength: 16, description: 'Hours to read, the current one included: 1..744 (31 days); default 24.' })) },
  { additionalProperties: false },
);
export type AdminRefusalsQuery = Static<typeof AdminRefusalsQuery>;

export const AdminRefusalsResponse = Type.Object({
  from: Type.String({ format: 'date-time', description: 'The start of the oldest hour read.' }),
  to: Type.String({ format: 'date-time', description: 'Now.' }),
  hours: Type.Array(
    Type.Object({
      hour: Type.String({ format: 'date-time', description: 'The start of the UTC hour.' }),
      reason: Type.String({ description: 'One of the reasons of `totals`.' }),
      recipientDomain: Type.Union([Type.String(), Type.Null()], {
        description: "The recipient's domain (a message's first recipient's), lower-cased; null for a refusal before any recipient (at connect or MAIL FROM); \"(other)\" past the 100 domains a node records per hour.",
      }),
      count: Type.Integer({ minimum: 1 }),
    }),
    { description: 'Oldest hour first, then by reason and domain; only what was counted.' },
  ),
  totals: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'Refusals over the window per reason; every reason of the list is present, 0 when none was counted.' }),
});
export type AdminRefusalsResponse = Static<typeof AdminRefusalsResponse>;
