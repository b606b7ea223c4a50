// The resources of the mail.tm-compatible API, field for field as mail.tm's API sends
// them (an API Platform service): plain objects for `Accept: application/json`, JSON-LD
// with Hydra collections for `application/ld+json` (its default). Pure functions: no I/O,
// so that the worker that reshapes a large message (message-worker.ts) uses them too.
import type { MailMetadata, ParsedMailContent } from '@temp-inbox/api';

export type Format = 'jsonld' | 'json';

/** Members per collection page, as mail.tm's. */
export const PAGE_SIZE = 30;

/** mail.tm's timestamps: ISO 8601 to the second with a numeric offset, e.g. 2021-08-29T16:54:19+00:00. */
export const timestamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

/**
 * The format an Accept header asks for: the supported type of highest quality, the first
 * of equals; `application/ld+json` (mail.tm's default) for none, `*\/*`, `application/*`
 * or only types that are not served.
 */
export function negotiate(accept: string | undefined): Format {
  if (!accept) return 'jsonld';
  let best: { format: Format; q: number } | undefined;
  for (const part of accept.slice(0, 1024).split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.map((p) => /^q=([01](?:\.\d{0,3})?)$/.exec(p)).find(Boolean);
    const quality = q ? Number(q[1]) : 1;
    const format: Format | undefined = type === 'application/json' ? 'json' : type === 'application/ld+json' || type === '*/*' || type === 'application/*' ? 'jsonld' : undefined;
    if (format && quality > 0 && (!best || quality > best.q)) best = { format, q: quality };
  }
  return best?.format ?? 'jsonld';
}

export const CONTENT_TYPE: Record<Format, string> = {
  jsonld: 'application/ld+json; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

type Body = Record<string, unknown>;

/** One resource: with @context, @id and @type in JSON-LD. */
export function resource(format: Format, type: string, iri: string, body: Body): Body {
  return format === 'jsonld' ? { '@context': `/contexts/${type}`, '@id': iri, '@type': type, ...body } : body;
}

/**
 * A page of a collection: a plain array in JSON; in JSON-LD a hydra:Collection with its
 * members (each with @id and @type), hydra:totalItems, and hydra:view when the client
 * asked for a page or there is more than one.
 */
export function collection(format: Format, type: string, path: string, members: { iri: string; body: Body }[], total: number, page: number | undefined): Body | Body[] {
  if (format === 'json') return members.map((m) => m.body);
  const out: Body = {
    '@context': `/contexts/${type}`,
    '@id': path,
    '@type': 'hydra:Collection',
    'hydra:member': members.map((m) => ({ '@id': m.iri, '@type': type, ...m.body })),
    'hydra:totalItems': total,
  };
  const last = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (page !== undefined || last > 1) {
    const at = page ?? 1;
    out['hydra:view'] = {
      '@id': `${path}?page=${at}`,
      '@type': 'hydra:PartialCollectionView',
      'hydra:first': `${path}?page=1`,
      'hydra:last': `${path}?page=${last}`,
      ...(at > 1 ? { 'hydra:previous': `${path}?page=${at - 1}` } : {}),
      ...(at < last ? { 'hydra:next': `${path}?page=${at + 1}` } : {}),
    };
  }
  return out;
}

/** An error of API Platform's: a hydra:Error in JSON-LD, a problem document in JSON. */
export function errorBody(format: Format, description: string): Body {
  return format === 'jsonld'
    ? { '@context': '/contexts/Error', '@type': 'hydra:Error', 'hydra:title': 'An error occurred', 'hydra:description': description }
    : { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', detail: description };
}

export interface Violation {
  propertyPath: string;
  message: string;
  /** Symfony's code of the constraint, when there is one (clients test the "already used" one). */
  code?: string;
}

/** 422: what is wrong with a posted resource, as API Platform lists constraint violations. */
export function violationsBody(format: Format, violations: Violation[]): Body {
  const description = violations.map((v) => `${v.propertyPath}: ${v.message}`).join('\n');
  return format === 'jsonld'
    ? { '@context': '/contexts/ConstraintViolationList', '@type': 'ConstraintViolationList', 'hydra:title': 'An error occurred', 'hydra:description': description, violations }
    : { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', detail: description, violations };
}

export interface AccountFields {
  id: string;
  address: string;
  quota: number;
  used: number;
  createdAt: number;
  updatedAt: number;
}

export const accountIri = (id: string) => `/accounts/${id}`;

export function account(a: AccountFields): Body {
  return {
    id: a.id,
    address: a.address,
    quota: a.quota,
    used: a.used,
    isDisabled: false,
    isDeleted: false,
    createdAt: timestamp(a.createdAt),
    updatedAt: timestamp(a.updatedAt),
  };
}

export const domainIri = (id: string) => `/domains/${id}`;

export function domain(d: { id: string; domain: string; createdAt: number }): Body {
  return { id: d.id, domain: d.domain, isActive: true, isPrivate: false, createdAt: timestamp(d.createdAt), updatedAt: timestamp(d.createdAt) };
}

/** The stored mail a message is made of. */
export interface StoredMail {
  uuid: string;
  messageId: string;
  createdAt: number;
  seen: boolean;
  metadata: MailMetadata;
}

export const messageIri = (id: string) => `/messages/${id}`;
export const downloadUrl = (id: string) => `/messages/${id}/download`;

/** mail.tm names attachments ATTACH000001, ATTACH000002, …; ours are 0, 1, …. */
export const attachmentName = (index: string | number) => `ATTACH${String(Number(index) + 1).padStart(6, '0')}`;
/** Our attachment id of a mail.tm attachment name, or undefined. */
export function attachmentIndex(name: string): string | undefined {
  const m = /^ATTACH(\d{6})$/.exec(name);
  const n = m ? Number(m[1]) : 0;
  return n >= 1 ? String(n - 1) : undefined;
}

/** A message as GET /messages lists it. */
export function messageItem(m: StoredMail, accountId: string): Body {
  return {
    id: m.uuid,
    accountId: accountIri(accountId),
    msgid: m.messageId,
    from: { address: m.metadata.from.address, name: m.metadata.from.name },
    to: m.metadata.to.map((t) => ({ address: t.address, name: t.name })),
    subject: m.metadata.subject,
    intro: m.metadata.preview,
    seen: m.seen,
    isDeleted: false,
    hasAttachments: m.metadata.attachments.length > 0,
    size: m.metadata.size,
    downloadUrl: downloadUrl(m.uuid),
    createdAt: timestamp(m.createdAt),
    updatedAt: timestamp(m.createdAt),
  };
}

/** A message as GET /messages/{id} answers it, from the mail and its parsed view. */
export function message(m: StoredMail, accountId: string, view: ParsedMailContent, retentionMs: number): Body {
  return {
    id: m.uuid,
    accountId: accountIri(accountId),
    msgid: m.messageId,
    from: { address: view.from.address, name: view.from.name },
    to: view.to.map((t) => ({ address: t.address, name: t.name })),
    cc: view.cc.map((c) => c.address),
    bcc: [],
    subject: view.subject,
    seen: m.seen,
    flagged: false,
    isDeleted: false,
    verifications: [],
    retention: true,
    retentionDate: timestamp(m.createdAt + retentionMs),
    text: view.text,
    html: view.html === null ? [] : [view.html],
    hasAttachments: view.attachments.length > 0,
    attachments: view.attachments.map((a) => ({
      id: attachmentName(a.id),
      filename: a.filename,
      contentType: a.content_type,
      disposition: a.inline ? 'inline' : 'attachment',
      transferEncoding: 'base64',
      related: a.inline,
      size: a.size,
      downloadUrl: `/messages/${m.uuid}/attachment/${attachmentName(a.id)}`,
    })),
    size: m.metadata.size,
    downloadUrl: downloadUrl(m.uuid),
    createdAt: timestamp(m.createdAt),
    updatedAt: timestamp(m.createdAt),
  };
}

export const sourceIri = (id: string) => `/sources/${id}`;

export function source(id: string, data: string): Body {
  return { id, downloadUrl: downloadUrl(id), data };
}
