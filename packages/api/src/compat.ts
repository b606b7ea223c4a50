// The answers of the Mailpit- and MailHog-compatible APIs for sandboxes (docs/api.md
// "Moving from Mailpit or MailHog"), field for field as Mailpit's API v1 and MailHog's API
// send them. The server writes these bodies itself (some a part at a time); the schemas
// say what they hold, for the routes' declarations and for clients.
import { Type, type Static } from '@sinclair/typebox';

export const MailpitAddress = Type.Object({ Name: Type.String(), Address: Type.String() });
export type MailpitAddress = Static<typeof MailpitAddress>;

const addresses = Type.Array(MailpitAddress);

/** One message of GET /mailpit/api/v1/messages and /search. */
export const MailpitListItem = Type.Object({
  ID: Type.String({ description: "The mail's uuid." }),
  MessageID: Type.String({ description: 'Without angle brackets; <uuid>@temp-inbox for a mail without one.' }),
  Read: Type.Boolean(),
  From: MailpitAddress,
  To: addresses,
  Cc: addresses,
  Bcc: addresses,
  ReplyTo: addresses,
  Subject: Type.String(),
  Created: Type.String({ format: 'date-time' }),
  Username: Type.String({ description: "The sandbox's name." }),
  Tags: Type.Array(Type.String()),
  Size: Type.Integer(),
  Attachments: Type.Integer({ description: 'How many.' }),
  Snippet: Type.String({ description: 'Up to 250 characters of the text.' }),
});
export type MailpitListItem = Static<typeof MailpitListItem>;

export const MailpitMessagesResponse = Type.Object({
  total: Type.Integer(),
  unread: Type.Integer(),
  count: Type.Integer({ description: 'Messages on this page.' }),
  messages_count: Type.Integer({ description: 'Messages that match (all of them for a list).' }),
  messages_unread: Type.Integer(),
  start: Type.Integer(),
  tags: Type.Array(Type.String()),
  messages: Type.Array(MailpitListItem),
});
export type MailpitMessagesResponse = Static<typeof MailpitMessagesResponse>;

export const MailpitChecksums = Type.Object({ MD5: Type.String(), SHA1: Type.String(), SHA256: Type.String() });

export const MailpitAttachment = Type.Object({
  PartID: Type.String({ description: "The attachment's id (GET /mailpit/api/v1/message/{ID}/part/{PartID})." }),
  FileName: Type.String(),
  ContentType: Type.String(),
  ContentID: Type.String(),
  Size: Type.Integer(),
  Checksums: Type.Optional(MailpitChecksums),
});
export type MailpitAttachment = Static<typeof MailpitAttachment>;

/** GET /mailpit/api/v1/message/{ID}: the whole message, from its parsed view. */
export const MailpitMessage = Type.Object({
  ID: Type.String(),
  MessageID: Type.String(),
  Read: Type.Boolean(),
  From: MailpitAddress,
  To: addresses,
  Cc: addresses,
  Bcc: addresses,
  ReplyTo: addresses,
  ReturnPath: Type.String(),
  Subject: Type.String(),
  ListUnsubscribe: Type.Object({ Header: Type.String(), Links: Type.Array(Type.String()), Errors: Type.String(), HeaderPost: Type.String() }),
  Date: Type.String({ format: 'date-time' }),
  Tags: Type.Array(Type.String()),
  Username: Type.String(),
  Text: Type.String(),
  HTML: Type.String(),
  Size: Type.Integer(),
  Inline: Type.Array(MailpitAttachment),
  Attachments: Type.Array(MailpitAttachment),
});
export type MailpitMessage = Static<typeof MailpitMessage>;

/** GET /mailpit/api/v1/message/{ID}/headers: each header's values under its canonical name. */
export const MailpitHeaders = Type.Record(Type.String(), Type.Array(Type.String()));
export type MailpitHeaders = Static<typeof MailpitHeaders>;

export const MailpitInfo = Type.Object({
  Version: Type.String(),
  LatestVersion: Type.String(),
  Database: Type.String(),
  DatabaseSize: Type.Integer(),
  Messages: Type.Integer(),
  Unread: Type.Integer(),
  Tags: Type.Record(Type.String(), Type.Integer()),
  RuntimeStats: Type.Object({
    Uptime: Type.Integer(),
    Memory: Type.Integer(),
    MessagesDeleted: Type.Integer(),
    SMTPAccepted: Type.Integer(),
    SMTPAcceptedSize: Type.Integer(),
    SMTPRejected: Type.Integer(),
    SMTPIgnored: Type.Integer(),
  }),
});
export type MailpitInfo = Static<typeof MailpitInfo>;

export const MailpitWebUi = Type.Object({
  Label: Type.String(),
  MessageRelay: Type.Object({
    Enabled: Type.Boolean(),
    SMTPServer: Type.String(),
    ReturnPath: Type.String(),
    AllowedRecipients: Type.String(),
    BlockedRecipients: Type.String(),
    OverrideFrom: Type.String(),
    PreserveMessageIDs: Type.Boolean(),
    RecipientAllowlist: Type.String(),
  }),
  SpamAssassin: Type.Boolean(),
  ChaosEnabled: Type.Boolean(),
  DuplicatesIgnored: Type.Boolean(),
  HideDeleteAllButton: Type.Boolean(),
});
export type MailpitWebUi = Static<typeof MailpitWebUi>;

export const MailpitChaosTrigger = Type.Object({ ErrorCode: Type.Integer(), Probability: Type.Integer({ minimum: 0, maximum: 100 }) });
export const MailpitChaos = Type.Object({ Sender: MailpitChaosTrigger, Recipient: MailpitChaosTrigger, Authentication: MailpitChaosTrigger });
export type MailpitChaos = Static<typeof MailpitChaos>;

export const MailpitTags = Type.Array(Type.String());
export const MailpitSendResponse = Type.Object({ ID: Type.String({ description: "The stored mail's uuid." }) });
export type MailpitSendResponse = Static<typeof MailpitSendResponse>;

/** A forward- or reverse-path as MailHog splits it. */
export const MailhogPath = Type.Object({ Relays: Type.Union([Type.Array(Type.String()), Type.Null()]), Mailbox: Type.String(), Domain: Type.String(), Params: Type.String() });
export type MailhogPath = Static<typeof MailhogPath>;

/** An entity as MailHog splits it: headers, undecoded body, size, and a multipart body's parts (each the same shape). */
export const MailhogContent = Type.Object({
  Headers: Type.Record(Type.String(), Type.Array(Type.String())),
  Body: Type.String(),
  Size: Type.Integer(),
  MIME: Type.Union([Type.Object({ Parts: Type.Array(Type.Unknown({ description: 'A MailhogContent.' })) }), Type.Null()]),
});
export type MailhogContent = Static<typeof MailhogContent>;

export const MailhogMessage = Type.Object({
  ID: Type.String({ description: "The mail's uuid." }),
  From: MailhogPath,
  To: Type.Array(MailhogPath),
  Content: MailhogContent,
  Created: Type.String({ format: 'date-time' }),
  MIME: MailhogContent.properties.MIME,
  Raw: Type.Object({ From: Type.String(), To: Type.Array(Type.String()), Data: Type.String(), Helo: Type.String() }),
});
export type MailhogMessage = Static<typeof MailhogMessage>;

/** GET /mailhog/api/v2/messages and /v2/search. */
export const MailhogMessagesResponse = Type.Object({ total: Type.Integer(), count: Type.Integer(), start: Type.Integer(), items: Type.Array(MailhogMessage) });
export type MailhogMessagesResponse = Static<typeof MailhogMessagesResponse>;

/** GET /mailhog/api/v1/messages: a bare array. */
export const MailhogMessageList = Type.Array(MailhogMessage);
