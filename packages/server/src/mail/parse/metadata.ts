// The metadata every stored mail carries (docs/decisions.md "Metadata"), built
// from a parsed message, with every field bounded so that one mail can never make
// an inbox's list or event stream large (docs/security.md "Parsing"). Pure: it
// runs inside the parse worker; parse.ts is the part the server calls.
import PostalMime, { type Address, type Email } from 'postal-mime';
import type { AttachmentInfo, MailAuth, Mailbox, MailMetadata } from '@temp-inbox/api';
import { MAX_AUTH_JSON_BYTES } from '../auth/auth-verdict.js';
import { extractCodes, extractLinks, htmlToText, makePreview } from './extract.js';

/** Subject, names and addresses are cut to this many characters. */
export const MAX_FIELD_CHARS = 1024;
/** A file name is cut to this many characters (what most file systems allow). */
export const MAX_FILENAME_CHARS = 255;
export const MAX_RECIPIENTS_LISTED = 100;
/** Reply-To: mailboxes kept at most (a reply goes to one or two). */
export const MAX_REPLY_TO_LISTED = 10;
/** Tags taken from a message's X-Tags header at most, and characters of each (Mailpit's tags). */
export const MAX_HEADER_TAGS = 20;
export const MAX_TAG_CHARS = 100;
export const MAX_ATTACHMENTS_LISTED = 100;
export const MAX_CODES = 10;
export const MAX_LINKS = 50;
export const MAX_LINK_CHARS = 2048;
/** The whole metadata, as JSON, in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Codes, links and the preview are looked for in this much text (they sit near the top). */
const EXTRACT_CHARS = 256 * 1024;

export const PARSE_OPTIONS = {
  // Nesting past this is refused by the parser; the header block is then read alone.
  maxNestingDepth: 64,
  // All parts' headers together (postal-mime counts them across parts): room for a
  // few thousand parts; past it the header block alone is read (metadata stays bounded).
  maxHeadersSize: 4 * 1024 * 1024,
  attachmentEncoding: 'arraybuffer',
} as const;

/** Parses a message on the current thread; undefined when even its header block defeats the parser. */
export async function parseMessage(raw: Uint8Array): Promise<Email | undefined> {
  try {
    return await PostalMime.parse(raw, PARSE_OPTIONS);
  } catch {
    return parseHeaderBlock(raw);
  }
}

/** How much of the header block the fallback reads. */
const HEADER_BLOCK_BYTES = 64 * 1024;

/** The header block alone (its first 64 KiB), as if the body were empty text: subject, from and to are still read. */
export async function parseHeaderBlock(raw: Uint8Array): Promise<Email | undefined> {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, HEADER_BLOCK_BYTES));
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const end = [crlf, lf].filter((i) => i >= 0).reduce((a, b) => Math.min(a, b), bytes.length);
  // The body is dropped, and with it the MIME structure the headers announce.
  const headers = bytes
    .subarray(0, end)
    .toString('latin1')
    .replace(/^content-type:.*(\r?\n[ \t].*)*/gim, 'Content-Type: text/plain');
  try {
    return await PostalMime.parse(Buffer.from(`${headers}\r\n\r\n`, 'latin1'), PARSE_OPTIONS);
  } catch {
    return undefined;
  }
}

export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  // Never leave half of a surrogate pair at the end.
  const end = /[\ud800-\udbff]/.test(s[max - 1]!) ? max - 1 : max;
  return s.slice(0, end);
}

export function stripControls(s: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
}

export function mailboxes(list: Address[] | Address | undefined, max: number): Mailbox[] {
  const out: Mailbox[] = [];
  const add = (name: string | undefined, address: string | undefined) => {
    if (out.length < max) out.push({ name: cut(stripControls(name ?? ''), MAX_FIELD_CHARS), address: cut(stripControls(address ?? ''), MAX_FIELD_CHARS) });
  };
  for (const a of Array.isArray(list) ? list : list ? [list] : []) {
    if (out.length >= max) break;
    if (a.group) for (const m of a.group) add(m.name, m.address);
    else add(a.name, a.address);
  }
  return out;
}

export function isoDate(value: string | undefined): string | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** The decoded byte length of an attachment's content. */
export function contentBytes(content: ArrayBuffer | Uint8Array | string): number {
  if (typeof content === 'string') return Buffer.byteLength(content);
  return content.byteLength;
}

/** The stored metadata with what later versions added: Cc and Reply-To (absent on older mail). */
export type StoredMetadata = MailMetadata & { cc?: Mailbox[]; reply_to?: Mailbox[] };

/** Mailpit's tag rule: letters, digits, '-', '.', '_' and spaces; anything else is dropped, and an empty tag with it. */
export const cleanTag = (tag: string): string =>
  tag
    .replace(/[^A-Za-z0-9\-._ ]/g, '')
    .trim()
    .slice(0, MAX_TAG_CHARS);

/** The tags of a message's X-Tags headers (comma-separated, as Mailpit reads them): cleaned, without repeats, at most MAX_HEADER_TAGS. */
export function headerTags(email: Email | undefined): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const h of email?.headers ?? []) {
    if (h.key !== 'x-tags') continue;
    // Only the header's first few KiB: enough for every tag kept.
    for (const part of h.value.slice(0, MAX_HEADER_TAGS * (MAX_TAG_CHARS + 2)).split(',')) {
      const tag = cleanTag(part);
      if (!tag || seen.has(tag.toLowerCase())) continue;
      seen.add(tag.toLowerCase());
      out.push(tag);
      if (out.length >= MAX_HEADER_TAGS) return out;
    }
  }
  return out;
}

/**
 * Metadata of a parsed message (or of nothing, when it could not be parsed),
 * every field bounded and the whole at most MAX_METADATA_BYTES of JSON.
 */
export function buildMetadata(email: Email | undefined, rawSize: number): StoredMetadata {
  const subject = cut(stripControls(email?.subject ?? ''), MAX_FIELD_CHARS);
  const html = email?.html;
  const text = (email?.text ?? (html ? htmlToText(html.slice(0, EXTRACT_CHARS)) : '')).slice(0, EXTRACT_CHARS);
  const all = email?.attachments ?? [];
  const attachments = all.slice(0, MAX_ATTACHMENTS_LISTED).map(
    (a, i): AttachmentInfo => ({
      id: String(i),
      filename: cut(stripControls(a.filename ?? `attachment-${i + 1}`), MAX_FILENAME_CHARS) || `attachment-${i + 1}`,
      content_type: cut(a.mimeType || 'application/octet-stream', 255),
      size: contentBytes(a.content),
    }),
  );
  const metadata: StoredMetadata = {
    subject,
    from: mailboxes(email?.from, 1)[0] ?? { name: '', address: '' },
    to: mailboxes(email?.to, MAX_RECIPIENTS_LISTED),
    cc: mailboxes(email?.cc, MAX_RECIPIENTS_LISTED),
    reply_to: mailboxes(email?.replyTo, MAX_REPLY_TO_LISTED),
    date: isoDate(email?.date),
    size: rawSize,
    preview: makePreview(stripControls(text)),
    has_html: Boolean(html),
    attachments,
    codes: extractCodes(subject, text).slice(0, MAX_CODES),
    links: extractLinks(text, html?.slice(0, EXTRACT_CHARS))
      .filter((l) => l.length <= MAX_LINK_CHARS)
      .slice(0, MAX_LINKS),
  };
  if (all.length > MAX_ATTACHMENTS_LISTED) metadata.attachments_truncated = true;
  return fitMetadata(metadata);
}

const jsonBytes = (m: StoredMetadata) => Buffer.byteLength(JSON.stringify(m));

/**
 * The JSON of `m` without its `size`, which delivery adds per stored copy with the copy's
 * recipient and verdicts (deliveryMetadata): the server's thread then joins strings
 * instead of serialising the metadata again (about 8 µs a mail).
 */
export function partialMetadataJson(m: StoredMetadata): string {
  const { size: _size, ...rest } = m;
  return JSON.stringify(rest);
}

/** A stored copy's metadata JSON: the parse's (partialMetadataJson), its size, recipient and verdicts. */
export function deliveryMetadata(partialJson: string, size: number, deliveredTo: string, auth: MailAuth | undefined): string {
  const tail = `"size":${size},"delivered_to":${JSON.stringify(deliveredTo)}${auth ? `,"auth":${JSON.stringify(auth)}` : ''}}`;
  return partialJson === '{}' ? `{${tail}` : `${partialJson.slice(0, -1)},${tail}`;
}

/** What the parse may fill: the authentication verdicts (auth-verdict.ts), added at delivery, get the rest. */
const PARSED_METADATA_BYTES = MAX_METADATA_BYTES - MAX_AUTH_JSON_BYTES;

/** Drops what matters least until the metadata fits: links, then Cc and To recipients, then attachment entries. */
function fitMetadata(m: StoredMetadata): StoredMetadata {
  // Nearly every message fits: one serialisation tells, instead of one per loop below.
  if (jsonBytes(m) <= PARSED_METADATA_BYTES) return m;
  while (jsonBytes(m) > PARSED_METADATA_BYTES && m.links.length > 0) m.links = m.links.slice(0, Math.floor(m.links.length / 2));
  while (jsonBytes(m) > PARSED_METADATA_BYTES && m.cc && m.cc.length > 0) m.cc = m.cc.slice(0, Math.floor(m.cc.length / 2));
  while (jsonBytes(m) > PARSED_METADATA_BYTES && m.to.length > 1) m.to = m.to.slice(0, Math.floor(m.to.length / 2));
  while (jsonBytes(m) > PARSED_METADATA_BYTES && m.attachments.length > 0) {
    m.attachments = m.attachments.slice(0, Math.floor(m.attachments.length / 2));
    m.attachments_truncated = true;
  }
  return m;
}
