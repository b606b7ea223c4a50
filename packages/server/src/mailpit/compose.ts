// POST /api/v1/send of the Mailpit-compatible API: Mailpit's send request (From, To, Cc,
// Bcc, ReplyTo, Subject, Text, HTML, Attachments, Headers, Tags) checked and written as an
// RFC 5322 message with its envelope, which the sandbox stores as if it had come over SMTP.
// Nothing is sent anywhere. Every field is bounded and every header value is cleaned of
// line breaks and control characters, so a request cannot add a header of its own making.
import { randomUUID } from 'node:crypto';
import { badRequest } from '../domain/errors.js';
import { cleanTag } from '../mail/parse/metadata.js';

/** Addresses of To, Cc, Bcc and ReplyTo together at most. */
export const MAX_SEND_ADDRESSES = 1000;
export const MAX_SEND_ATTACHMENTS = 100;
export const MAX_SEND_HEADERS = 100;
export const MAX_SEND_TAGS = 50;
/** Characters of a name, a subject, a header value, a file name or a tag at most. */
const MAX_FIELD_CHARS = 998;

/** Headers the request may not set (they are built from its fields), as Mailpit's list. */
const RESTRICTED = new Set(['to', 'from', 'cc', 'bcc', 'reply-to', 'date', 'subject', 'content-type', 'mime-version', 'x-tags']);

export interface Composed {
  raw: Buffer;
  envelope: { from: string; to: string[] };
  /** Tags to set on the stored mail (Mailpit's X-Tags). */
  tags: string[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const EMAIL = /^[^\s@<>()[\]",;:\\]{1,64}@[A-Za-z0-9.-]{1,253}$/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f]/g;
const HEADER_NAME = /^[!#-'*+\-.0-9A-Z^-~]{1,76}$/i;

function text(v: unknown, field: string, max = MAX_FIELD_CHARS): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw badRequest(`${field} must be a string.`);
  if (v.length > max) throw badRequest(`${field} has more than ${max} characters.`);
  return v;
}

function list(v: unknown, field: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw badRequest(`${field} must be an array.`);
  return v;
}

function email(v: unknown, field: string): string {
  const e = text(v, field, 254).trim();
  if (!EMAIL.test(e)) throw badRequest(`invalid ${field} address: ${e.slice(0, 254)}`);
  return e;
}

interface Person {
  name: string;
  email: string;
}

function person(v: unknown, field: string): Person {
  if (!isObject(v)) throw badRequest(`${field} must be an object with Email (and optionally Name).`);
  return { email: email(v['Email'], field), name: text(v['Name'], `${field} Name`).replace(CONTROLS, ' ') };
}

/** A header value: as written when it is printable ASCII, else RFC 2047 encoded words (B, UTF-8) on folded lines. */
export function encodeWords(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  const words: string[] = [];
  let chunk = '';
  for (const ch of value) {
    if (Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join('\r\n ');
}

function mailbox(p: Person): string {
  if (!p.name) return p.email;
  const name = /^[\x20-\x7e]*$/.test(p.name) ? `"${p.name.replace(/[\\"]/g, '\\$&')}"` : encodeWords(p.name);
  return `${name} <${p.email}>`;
}

/** Base64 in lines of 76 characters. */
const base64Lines = (b: Buffer) => (b.toString('base64').match(/.{1,76}/g) ?? []).join('\r\n');

/** A text part: 7bit when it is short-lined ASCII, else base64. */
function textPart(type: string, body: string): string {
  const crlf = body.replace(/\r?\n/g, '\r\n');
  // eslint-disable-next-line no-control-regex
  if (/^[\x09\x0d\x0a\x20-\x7e]*$/.test(crlf) && crlf.split('\r\n').every((l) => l.length <= 998)) {
    return `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n${crlf}`;
  }
  return `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(Buffer.from(body))}`;
}

function multipart(subtype: string, parts: string[]): string {
  const boundary = `=_${randomUUID()}`;
  return `Content-Type: multipart/${subtype}; boundary="${boundary}"\r\n\r\n${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--`;
}

/** A filename parameter (RFC 2231 for a name that is not plain ASCII). */
function fileParam(param: string, name: string): string {
  if (/^[\x20-\x7e]*$/.test(name)) return `${param}="${name.replace(/[\\"]/g, '\\$&')}"`;
  return `${param}*=UTF-8''${encodeURIComponent(name)}`;
}

interface Attachment {
  content: Buffer;
  filename: string;
  contentType: string;
  contentId: string;
}

function attachment(v: unknown, i: number, maxBytes: number): Attachment {
  const field = `Attachments[${i}]`;
  if (!isObject(v)) throw badRequest(`${field} must be an object with Content and Filename.`);
  const filename = text(v['Filename'], `${field} Filename`).replace(CONTROLS, '').replace(/[/\\]/g, '_');
  const content = text(v['Content'], `${field} Content`, Math.ceil((maxBytes * 4) / 3) + 1024);
  // A data: URL's prefix (as a browser's readAsDataURL writes it) is dropped, as Mailpit does.
  const b64 = content.slice(content.lastIndexOf(',') + 1).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 === 1) throw badRequest(`error decoding base64 attachment "${filename}"`);
  const type = text(v['ContentType'], `${field} ContentType`, 255).trim();
  if (type && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(type)) throw badRequest(`${field} ContentType is not a media type.`);
  const contentId = text(v['ContentID'], `${field} ContentID`).replace(CONTROLS, '').replace(/[<>]/g, '').trim();
  return { content: Buffer.from(b64, 'base64'), filename, contentType: type.toLowerCase() || 'application/octet-stream', contentId };
}

function attachmentPart(a: Attachment): string {
  const headers = [`Content-Type: ${a.contentType}${a.filename ? `; ${fileParam('name', a.filename)}` : ''}`, 'Content-Transfer-Encoding: base64'];
  headers.push(`Content-Disposition: ${a.contentId ? 'inline' : 'attachment'}${a.filename ? `; ${fileParam('filename', a.filename)}` : ''}`);
  if (a.contentId) headers.push(`Content-ID: <${a.contentId}>`);
  return `${headers.join('\r\n')}\r\n\r\n${base64Lines(a.content)}`;
}

/** Mailpit's tag rule, as a received message's X-Tags are cleaned (mail/parse/metadata.ts). */
export { cleanTag };

/** The tags of a request (Tags of /send and PUT /api/v1/tags), cleaned and without repeats (case-insensitively). */
export function tagsOf(v: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const raw = list(v, 'Tags');
  if (raw.length > MAX_SEND_TAGS) throw badRequest(`At most ${MAX_SEND_TAGS} tags.`);
  for (const t of raw) {
    const tag = cleanTag(text(t, 'A tag'));
    if (tag && !seen.has(tag.toLowerCase())) {
      seen.add(tag.toLowerCase());
      out.push(tag);
    }
  }
  return out;
}

/** The message and envelope of a send request; a 400 that says what is wrong otherwise. */
export function composeMessage(body: unknown, opts: { maxBytes: number; now: Date; hostname: string }): Composed {
  if (!isObject(body)) throw badRequest('The request body must be a JSON object.');
  const from = person(body['From'], 'From');
  const to = list(body['To'], 'To').map((v) => person(v, 'To'));
  const cc = list(body['Cc'], 'Cc').map((v) => person(v, 'Cc'));
  const bcc = list(body['Bcc'], 'Bcc').map((v) => email(v, 'Bcc'));
  const replyTo = list(body['ReplyTo'], 'ReplyTo').map((v) => person(v, 'Reply-To'));
  if (to.length + cc.length + bcc.length + replyTo.length > MAX_SEND_ADDRESSES) throw badRequest(`At most ${MAX_SEND_ADDRESSES} addresses in To, Cc, Bcc and ReplyTo together.`);
  const subject = text(body['Subject'], 'Subject').replace(CONTROLS, ' ');
  const plain = text(body['Text'], 'Text', opts.maxBytes);
  const html = text(body['HTML'], 'HTML', opts.maxBytes);
  const rawAttachments = list(body['Attachments'], 'Attachments');
  if (rawAttachments.length > MAX_SEND_ATTACHMENTS) throw badRequest(`At most ${MAX_SEND_ATTACHMENTS} attachments.`);
  const attachments = rawAttachments.map((v, i) => attachment(v, i, opts.maxBytes));
  const tags = tagsOf(body['Tags']);
  const extra = body['Headers'] === undefined || body['Headers'] === null ? {} : body['Headers'];
  if (!isObject(extra)) throw badRequest('Headers must be an object of names and values.');
  const custom = Object.entries(extra);
  if (custom.length > MAX_SEND_HEADERS) throw badRequest(`At most ${MAX_SEND_HEADERS} headers.`);

  const head = [`From: ${mailbox(from)}`];
  if (to.length) head.push(`To: ${to.map(mailbox).join(',\r\n ')}`);
  if (cc.length) head.push(`Cc: ${cc.map(mailbox).join(',\r\n ')}`);
  if (replyTo.length) head.push(`Reply-To: ${replyTo.map(mailbox).join(',\r\n ')}`);
  head.push(`Subject: ${encodeWords(subject)}`, `Date: ${opts.now.toUTCString().replace('GMT', '+0000')}`, `Message-ID: <${randomUUID()}@${opts.hostname}>`, 'MIME-Version: 1.0');
  if (tags.length) head.push(`X-Tags: ${tags.join(', ')}`);
  for (const [name, value] of custom) {
    if (!HEADER_NAME.test(name)) throw badRequest(`"${name.slice(0, 76)}" is not a header name.`);
    if (RESTRICTED.has(name.toLowerCase())) throw badRequest(`cannot overwrite header: "${name}"`);
    head.push(`${name}: ${encodeWords(text(value, `Header ${name}`).replace(CONTROLS, ' '))}`);
  }

  const inline = attachments.filter((a) => a.contentId);
  const attached = attachments.filter((a) => !a.contentId);
  let bodyPart = html ? (plain ? multipart('alternative', [textPart('text/plain', plain), textPart('text/html', html)]) : textPart('text/html', html)) : textPart('text/plain', plain);
  if (inline.length) bodyPart = multipart('related', [bodyPart, ...inline.map(attachmentPart)]);
  if (attached.length) bodyPart = multipart('mixed', [bodyPart, ...attached.map(attachmentPart)]);
  const raw = Buffer.from(`${head.join('\r\n')}\r\n${bodyPart}\r\n`);
  return { raw, envelope: { from: from.email, to: [...to.map((p) => p.email), ...cc.map((p) => p.email), ...bcc] }, tags };
}
