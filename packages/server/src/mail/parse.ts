// MIME parsing (postal-mime) and the metadata every stored mail carries
// (DESIGN.md "Metadata"). Parsing never throws: a message that cannot be parsed
// is still stored, with the metadata that could be read.
import PostalMime, { type Address, type Attachment, type Email } from 'postal-mime';
import type { AttachmentInfo, Mailbox, MailMetadata } from '@temp-inbox/api';
import { extractCodes, extractLinks, htmlToText, makePreview } from './extract.js';

const PARSE_OPTIONS = { maxNestingDepth: 64, maxHeadersSize: 2 * 1024 * 1024, attachmentEncoding: 'arraybuffer' } as const;
// attachmentContent: false is this project's postal-mime patch (patches/): binary
// parts are measured, not kept, so a large attachment is never held decoded.
const METADATA_OPTIONS = { ...PARSE_OPTIONS, attachmentContent: false } as const;

/**
 * Parses a message. When the body defeats the parser (nesting past the limit, say),
 * the header block alone is parsed, so subject, from and to are still read.
 * With `{ attachments: 'size' }` attachment contents are empty and only their
 * sizes are known (enough for the metadata).
 */
export async function parseMessage(raw: Buffer, opts: { attachments: 'content' | 'size' } = { attachments: 'content' }): Promise<Email | undefined> {
  const options = opts.attachments === 'size' ? METADATA_OPTIONS : PARSE_OPTIONS;
  try {
    return await PostalMime.parse(raw, options as typeof PARSE_OPTIONS);
  } catch {
    return parseHeadersOnly(raw);
  }
}

async function parseHeadersOnly(raw: Buffer): Promise<Email | undefined> {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const end = [crlf, lf].filter((i) => i >= 0).reduce((a, b) => Math.min(a, b), raw.length);
  // The body is dropped, and with it the MIME structure the headers announce.
  const headers = raw.subarray(0, end).toString('latin1').replace(/^content-type:.*(\r?\n[ \t].*)*/gim, 'Content-Type: text/plain');
  try {
    return await PostalMime.parse(Buffer.from(`${headers}\r\n\r\n`, 'latin1'), PARSE_OPTIONS);
  } catch {
    return undefined;
  }
}

function mailboxes(list: Address[] | Address | undefined): Mailbox[] {
  const out: Mailbox[] = [];
  for (const a of Array.isArray(list) ? list : list ? [list] : []) {
    if (a.group) for (const m of a.group) out.push({ name: m.name ?? '', address: m.address ?? '' });
    else out.push({ name: a.name ?? '', address: a.address ?? '' });
  }
  return out;
}

/** The decoded size of an attachment, also when it was parsed with sizes only. */
function attachmentSize(a: Attachment): number {
  const c = a.content as unknown;
  if (c instanceof ArrayBuffer && typeof (c as { decodedSize?: unknown }).decodedSize === 'number') return (c as unknown as { decodedSize: number }).decodedSize;
  return attachmentBytes(a).length;
}

function attachmentBytes(a: Attachment): Buffer {
  const c = a.content;
  if (typeof c === 'string') return Buffer.from(c, a.encoding === 'base64' ? 'base64' : 'utf8');
  return c instanceof ArrayBuffer ? Buffer.from(c) : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
}

function isoDate(value: string | undefined): string | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

function stripControls(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
}

export function buildMetadata(email: Email | undefined, rawSize: number): MailMetadata {
  const subject = stripControls(email?.subject ?? '');
  const text = email?.text ?? (email?.html ? htmlToText(email.html) : '');
  const from = mailboxes(email?.from)[0] ?? { name: '', address: '' };
  return {
    subject,
    from,
    to: mailboxes(email?.to),
    date: isoDate(email?.date),
    size: rawSize,
    preview: makePreview(stripControls(text)),
    has_html: Boolean(email?.html),
    attachments: (email?.attachments ?? []).map(
      (a, i): AttachmentInfo => ({
        id: String(i),
        filename: a.filename ?? `attachment-${i + 1}`,
        content_type: a.mimeType || 'application/octet-stream',
        size: attachmentSize(a),
      }),
    ),
    codes: extractCodes(subject, text),
    links: extractLinks(text, email?.html),
  };
}

export interface DecodedAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** Re-parses a stored message and returns one attachment by its metadata id. */
export async function readAttachment(raw: Buffer, id: string): Promise<DecodedAttachment | undefined> {
  // Only the ids the metadata lists ("0", "1", ...): "00" or "01" are unknown ids, 404.
  if (!/^(0|[1-9]\d{0,5})$/.test(id)) return undefined;
  const email = await parseMessage(raw);
  const index = Number(id);
  const a = email?.attachments[index];
  if (!a) return undefined;
  return { filename: a.filename ?? `attachment-${index + 1}`, contentType: a.mimeType || 'application/octet-stream', content: attachmentBytes(a) };
}
