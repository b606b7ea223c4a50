// The parsed view of one stored message, answered by GET /api/mail/{uuid}/parsed:
// decoded headers and addresses, the whole text and HTML, attachment details, codes
// and links (docs/decisions.md "Parsed mail"). Text and HTML are never cut; every
// list is bounded. Pure: it runs inside the parser's worker threads
// (parse-worker.ts), which also serialise it, so a 10 MB message costs the event
// loop neither the parse nor the JSON.
import { decodeWords, type Attachment, type Email } from 'postal-mime';
import type { HeaderField, ParsedAttachment, ParsedMailContent } from '@temp-inbox/api';
import { htmlToText } from './extract.js';
import { buildMetadata, cut, mailboxes, stripControls } from './metadata.js';

/** Headers listed at most. */
export const MAX_VIEW_HEADERS = 1000;
/** Characters of header names and values listed in all. */
export const MAX_VIEW_HEADER_CHARS = 256 * 1024;
/** Entries of `to`, `cc` and `reply_to` each (groups flattened). */
export const MAX_VIEW_MAILBOXES = 1000;
/** RFC 5322 §2.1.1: a line is at most 998 characters; a Content-ID is cut there. */
const MAX_CONTENT_ID_CHARS = 998;
/** How much of a message the header-block reader looks at (as metadata.ts parseHeaderBlock). */
const HEADER_BLOCK_BYTES = 64 * 1024;

/** A header as written: its name and its unfolded, still encoded value. */
export interface RawHeader {
  name: string;
  value: string;
}

export interface ViewOptions {
  /** Attachments the stored metadata lists: only these can be downloaded, so only these are shown. */
  attachmentsListed: number;
  /** Only the header block could be read (out of budget, or refused by the parser). */
  degraded: boolean;
  headers: RawHeader[];
}

/** The headers of a message as postal-mime read them. */
export const headersOf = (email: Email | undefined): RawHeader[] => (email?.headers ?? []).map((h) => ({ name: h.originalKey, value: h.value }));

/**
 * The header block alone (its first 64 KiB), unfolded (RFC 5322 §2.2.3: each line
 * break before white space removed), for a message the parser could not read. Not
 * through postal-mime's header-block fallback, which rewrites Content-Type.
 */
export function readHeaderBlock(raw: Uint8Array): RawHeader[] {
  const head = new TextDecoder('utf-8').decode(raw.subarray(0, HEADER_BLOCK_BYTES));
  const out: RawHeader[] = [];
  for (const line of head.split(/\r?\n/)) {
    if (line === '') break;
    const last = out[out.length - 1];
    if (/^[ \t]/.test(line)) {
      if (last) last.value += line;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0) out.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1) });
  }
  for (const h of out) h.value = h.value.trim();
  return out;
}

/** Decoded headers, in order, within MAX_VIEW_HEADERS and MAX_VIEW_HEADER_CHARS. */
function boundedHeaders(list: RawHeader[]): { headers: HeaderField[]; truncated: boolean } {
  const headers: HeaderField[] = [];
  let left = MAX_VIEW_HEADER_CHARS;
  for (const h of list) {
    if (headers.length >= MAX_VIEW_HEADERS || left <= 0) return { headers, truncated: true };
    const name = cut(stripControls(h.name), left);
    const decoded = stripControls(decodeWords(h.value));
    const value = cut(decoded, left - name.length);
    headers.push({ name, value });
    left -= name.length + value.length;
    if (name.length < h.name.length || value.length < decoded.length) return { headers, truncated: true };
  }
  return { headers, truncated: false };
}

function contentId(a: Attachment | undefined): string | null {
  const id = a?.contentId?.trim().replace(/^<([^>]*)>$/, '$1');
  return id ? cut(stripControls(id), MAX_CONTENT_ID_CHARS) : null;
}

/** Shown in the message rather than attached: disposition inline, or (without one) referenced by Content-ID from the HTML. */
function isInline(a: Attachment | undefined): boolean {
  return a?.disposition === 'inline' || (!a?.disposition && a?.related === true);
}

/** The HTML as text for a message without a text part: each line's runs of spaces made one, lines trimmed, at most one empty line in a row. */
function textOfHtml(html: string): string {
  return htmlToText(html)
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The view of a parsed message (or of its header block, or of nothing when `email` is undefined). */
export function buildView(email: Email | undefined, opts: ViewOptions): ParsedMailContent {
  const metadata = buildMetadata(email, 0);
  const parts = email?.attachments ?? [];
  const attachments = opts.degraded
    ? []
    : metadata.attachments.slice(0, opts.attachmentsListed).map((a, i): ParsedAttachment => ({ ...a, content_id: contentId(parts[i]), inline: isInline(parts[i]) }));
  const html = opts.degraded ? null : (email?.html ?? null);
  const text = opts.degraded ? '' : (email?.text ?? (html === null ? '' : textOfHtml(html)));
  const { headers, truncated } = boundedHeaders(opts.headers);
  return {
    subject: metadata.subject,
    date: metadata.date,
    from: metadata.from,
    to: mailboxes(email?.to, MAX_VIEW_MAILBOXES),
    cc: mailboxes(email?.cc, MAX_VIEW_MAILBOXES),
    reply_to: mailboxes(email?.replyTo, MAX_VIEW_MAILBOXES),
    text,
    html,
    headers,
    headers_truncated: truncated,
    attachments,
    attachments_truncated: !opts.degraded && parts.length > attachments.length,
    codes: metadata.codes,
    links: metadata.links,
    degraded: opts.degraded,
  };
}
