// The answers of the mail.tm-compatible API under /mailtm (docs/api.md "mail.tm-compatible
// API"), field for field as mail.tm's API (an API Platform service) sends them: a plain
// object or array for `Accept: application/json`, JSON-LD for `application/ld+json` (its
// default): a resource with @context, @id and @type, a page of a collection as a
// hydra:Collection whose members carry @id and @type. The server writes these bodies
// itself (some a part at a time); the schemas say what they hold, for clients and tests.
import { Type, type Static, type TProperties, type TObject } from '@sinclair/typebox';

const timestamp = (description?: string) =>
  Type.String({ format: 'date-time', description: `ISO 8601 to the second with a numeric offset, e.g. 2021-08-29T16:54:19+00:00${description ? `; ${description}` : ''}.` });

/** The JSON-LD members of a resource of `type`: its context, IRI and type. */
function ldResource<T extends string, P extends TProperties>(type: T, plain: TObject<P>) {
  return Type.Object({
    '@context': Type.Literal(`/contexts/${type}`),
    '@id': Type.String({ description: "The resource's IRI, e.g. /messages/{id}." }),
    '@type': Type.Literal(type),
    ...plain.properties,
  });
}

/** A member of a hydra:Collection: the resource with its IRI and type (no @context of its own). */
function ldMember<T extends string, P extends TProperties>(type: T, plain: TObject<P>) {
  return Type.Object({ '@id': Type.String(), '@type': Type.Literal(type), ...plain.properties });
}

/** Where a page is among the pages of a collection: present when a page was asked for (?page=) or there is more than one. */
export const MailtmHydraView = Type.Object({
  '@id': Type.String({ description: 'This page, e.g. /messages?page=2.' }),
  '@type': Type.Literal('hydra:PartialCollectionView'),
  'hydra:first': Type.String(),
  'hydra:last': Type.String(),
  'hydra:previous': Type.Optional(Type.String({ description: 'Absent on the first page.' })),
  'hydra:next': Type.Optional(Type.String({ description: 'Absent on the last page.' })),
});
export type MailtmHydraView = Static<typeof MailtmHydraView>;

/** A page (30 members) of a collection of `type` in JSON-LD. */
function hydraCollection<T extends string, P extends TProperties>(type: T, plain: TObject<P>) {
  return Type.Object({
    '@context': Type.Literal(`/contexts/${type}`),
    '@id': Type.String({ description: "The collection's path, e.g. /messages." }),
    '@type': Type.Literal('hydra:Collection'),
    'hydra:member': Type.Array(ldMember(type, plain)),
    'hydra:totalItems': Type.Integer({ minimum: 0, description: 'Members of every page together.' }),
    'hydra:view': Type.Optional(MailtmHydraView),
  });
}

// Domains: GET /domains, GET /domains/{id}.

export const MailtmDomain = Type.Object({
  id: Type.String(),
  domain: Type.String({ description: 'One of MAIL_DOMAINS.' }),
  isActive: Type.Boolean(),
  isPrivate: Type.Boolean(),
  createdAt: timestamp('when this server started'),
  updatedAt: timestamp(),
});
export type MailtmDomain = Static<typeof MailtmDomain>;
export const MailtmDomainLd = ldResource('Domain', MailtmDomain);
export type MailtmDomainLd = Static<typeof MailtmDomainLd>;
export const MailtmDomains = Type.Array(MailtmDomain);
export type MailtmDomains = Static<typeof MailtmDomains>;
export const MailtmDomainCollection = hydraCollection('Domain', MailtmDomain);
export type MailtmDomainCollection = Static<typeof MailtmDomainCollection>;

// Accounts: POST /accounts (201), GET /me, GET /accounts/{id}; POST /token.

export const MailtmAccount = Type.Object({
  id: Type.String(),
  address: Type.String(),
  quota: Type.Integer({ description: 'ADDRESS_MAX_BYTES; 2147483647 when it is 0 (no limit).' }),
  used: Type.Integer({ description: 'Bytes of the live mail of the address.' }),
  isDisabled: Type.Boolean(),
  isDeleted: Type.Boolean(),
  createdAt: timestamp(),
  updatedAt: timestamp('when its password was last set, else createdAt'),
});
export type MailtmAccount = Static<typeof MailtmAccount>;
export const MailtmAccountLd = ldResource('Account', MailtmAccount);
export type MailtmAccountLd = Static<typeof MailtmAccountLd>;

/** POST /token (always plain JSON): the address's JWT, good on /mailtm, /api and in the web UI. */
export const MailtmToken = Type.Object({
  token: Type.String(),
  '@id': Type.String({ description: "The account's IRI, /accounts/{id}." }),
  id: Type.String(),
});
export type MailtmToken = Static<typeof MailtmToken>;

// Messages: GET /messages, PATCH /messages/{id} (the list's shape), GET /messages/{id}, GET /sources/{id}.

export const MailtmAddressee = Type.Object({ address: Type.String(), name: Type.String() });
export type MailtmAddressee = Static<typeof MailtmAddressee>;

/** A message as GET /messages lists it, PATCH /messages/{id} answers it and the event stream sends it. */
export const MailtmMessageItem = Type.Object({
  id: Type.String({ description: "The mail's uuid (the same as GET /api/mail/{uuid})." }),
  accountId: Type.String({ description: "The account's IRI, /accounts/{id}." }),
  msgid: Type.String({ description: 'Message-ID with angle brackets (empty when the message has none).' }),
  from: MailtmAddressee,
  to: Type.Array(MailtmAddressee),
  subject: Type.String(),
  intro: Type.String({ description: 'The start of the text.' }),
  seen: Type.Boolean(),
  isDeleted: Type.Boolean(),
  hasAttachments: Type.Boolean(),
  size: Type.Integer(),
  downloadUrl: Type.String({ description: 'The .eml: /messages/{id}/download.' }),
  createdAt: timestamp(),
  updatedAt: timestamp(),
});
export type MailtmMessageItem = Static<typeof MailtmMessageItem>;
export const MailtmMessageItemLd = ldResource('Message', MailtmMessageItem);
export type MailtmMessageItemLd = Static<typeof MailtmMessageItemLd>;
export const MailtmMessageItems = Type.Array(MailtmMessageItem);
export type MailtmMessageItems = Static<typeof MailtmMessageItems>;
export const MailtmMessageCollection = hydraCollection('Message', MailtmMessageItem);
export type MailtmMessageCollection = Static<typeof MailtmMessageCollection>;

export const MailtmAttachment = Type.Object({
  id: Type.String({ description: 'ATTACH000001, ATTACH000002, …' }),
  filename: Type.String(),
  contentType: Type.String(),
  disposition: Type.Union([Type.Literal('inline'), Type.Literal('attachment')]),
  transferEncoding: Type.String(),
  related: Type.Boolean({ description: 'Inline (referred to from the HTML).' }),
  size: Type.Integer(),
  downloadUrl: Type.String({ description: '/messages/{id}/attachment/{attachment id}.' }),
});
export type MailtmAttachment = Static<typeof MailtmAttachment>;

/** GET /messages/{id}: the whole message, from its parsed view. */
export const MailtmMessage = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  msgid: Type.String(),
  from: MailtmAddressee,
  to: Type.Array(MailtmAddressee),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String(), { description: 'Always empty: a received message shows no Bcc.' }),
  subject: Type.String(),
  seen: Type.Boolean(),
  flagged: Type.Boolean(),
  isDeleted: Type.Boolean(),
  verifications: Type.Array(Type.Unknown(), { description: 'Always empty.' }),
  retention: Type.Boolean(),
  retentionDate: timestamp('when MAIL_TTL removes the mail'),
  text: Type.String(),
  html: Type.Array(Type.String(), { description: 'The HTML part, or none.' }),
  hasAttachments: Type.Boolean(),
  attachments: Type.Array(MailtmAttachment),
  size: Type.Integer(),
  downloadUrl: Type.String(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
});
export type MailtmMessage = Static<typeof MailtmMessage>;
export const MailtmMessageLd = ldResource('Message', MailtmMessage);
export type MailtmMessageLd = Static<typeof MailtmMessageLd>;

/** GET /sources/{id}: the message as received, as text. */
export const MailtmSource = Type.Object({
  id: Type.String({ description: "The message's id." }),
  downloadUrl: Type.String(),
  data: Type.String(),
});
export type MailtmSource = Static<typeof MailtmSource>;
export const MailtmSourceLd = ldResource('Source', MailtmSource);
export type MailtmSourceLd = Static<typeof MailtmSourceLd>;

// The event stream (GET /.well-known/mercure?topic=/accounts/{id}): each update's data is
// a JSON-LD resource: MailtmMessageItemLd when a message arrives or is marked read or
// unread, and these two when a message or the account is deleted.

export const MailtmDeletedMessageLd = ldResource('Message', Type.Object({ id: Type.String(), accountId: Type.String(), isDeleted: Type.Literal(true) }));
export type MailtmDeletedMessageLd = Static<typeof MailtmDeletedMessageLd>;
/** The account's last update (the stream then ends). */
export const MailtmDeletedAccountLd = ldResource(
  'Account',
  Type.Object({ id: Type.String(), address: Type.String(), isDisabled: Type.Boolean(), isDeleted: Type.Literal(true), createdAt: timestamp(), updatedAt: timestamp() }),
);
export type MailtmDeletedAccountLd = Static<typeof MailtmDeletedAccountLd>;

// Errors, in API Platform's bodies.

/** An error in JSON-LD. */
export const MailtmHydraError = Type.Object({
  '@context': Type.Literal('/contexts/Error'),
  '@type': Type.Literal('hydra:Error'),
  'hydra:title': Type.String(),
  'hydra:description': Type.String({ description: 'What is wrong, e.g. "Not Found".' }),
});
export type MailtmHydraError = Static<typeof MailtmHydraError>;

/** An error in plain JSON: a problem document. */
export const MailtmProblem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  detail: Type.String(),
});
export type MailtmProblem = Static<typeof MailtmProblem>;

export const MailtmViolation = Type.Object({
  propertyPath: Type.String({ description: 'The field: address, password or cf_token.' }),
  message: Type.String(),
  code: Type.Optional(Type.String({ description: "Symfony's code of the constraint, when there is one." })),
});
export type MailtmViolation = Static<typeof MailtmViolation>;

/** 422 of POST /accounts in JSON-LD. */
export const MailtmViolationListLd = Type.Object({
  '@context': Type.Literal('/contexts/ConstraintViolationList'),
  '@type': Type.Literal('ConstraintViolationList'),
  'hydra:title': Type.String(),
  'hydra:description': Type.String({ description: 'Each violation as "propertyPath: message", one a line.' }),
  violations: Type.Array(MailtmViolation),
});
export type MailtmViolationListLd = Static<typeof MailtmViolationListLd>;

/** 422 of POST /accounts in plain JSON. */
export const MailtmViolationList = Type.Object({ ...MailtmProblem.properties, violations: Type.Array(MailtmViolation) });
export type MailtmViolationList = Static<typeof MailtmViolationList>;

/** 401 (a missing, invalid or expired token; POST /token's refusal), JSON whatever was asked for. */
export const MailtmUnauthorized = Type.Object({
  code: Type.Literal(401),
  message: Type.String({ description: 'JWT Token not found, Invalid JWT Token, Expired JWT Token, or Invalid credentials.' }),
});
export type MailtmUnauthorized = Static<typeof MailtmUnauthorized>;
