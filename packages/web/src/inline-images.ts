// The images a mail carries itself (`cid:` references in its HTML), fetched from the
// attachment route and written into the HTML as data: URLs. The frame is sandboxed
// without the page's origin, so it could not send the page's cookies for them itself;
// and its policy stays `data:` only until the reader asks for remote content.
import { api, type ParsedAttachment } from './api.js';

/** Inline parts fetched for one mail, at most this many bytes in all (the rest stay broken). */
const INLINE_BYTES = 8 * 1024 * 1024;
/** And at most this many parts: each is a request counted under RATE_LIMIT_ATTACHMENT (60 a minute). */
const INLINE_PARTS = 20;

const CID_RE = /cid:([^"'\s)>]+)/gi;

function decoded(id: string): string {
  try {
    return decodeURIComponent(id).toLowerCase();
  } catch {
    return id.toLowerCase();
  }
}

/** The content ids (lower-cased) the HTML refers to by `cid:`. */
export function referencedIds(html: string | null): Set<string> {
  const ids = new Set<string>();
  for (const m of (html ?? '').matchAll(CID_RE)) ids.add(decoded(m[1]!));
  return ids;
}

/** The parts the HTML shows by `cid:` (not listed again as attachments). */
export function shownInline(html: string | null, attachments: ParsedAttachment[]): ParsedAttachment[] {
  const ids = referencedIds(html);
  return attachments.filter((a) => a.content_id !== null && ids.has(a.content_id.toLowerCase()));
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

async function dataUrl(uuid: string, part: ParsedAttachment): Promise<string | undefined> {
  const res = await fetch(api.attachmentUrl(uuid, part.id), { credentials: 'same-origin' });
  if (!res.ok) return undefined;
  return `data:${part.content_type || 'application/octet-stream'};base64,${base64(new Uint8Array(await res.arrayBuffer()))}`;
}

/** `cid:` references replaced by the parts they name; a part that cannot be fetched stays a broken image. */
export async function withInlineImages(uuid: string, html: string, attachments: ParsedAttachment[]): Promise<string> {
  let budget = INLINE_BYTES;
  const wanted = shownInline(html, attachments)
    .filter((a) => {
      if (a.size > budget) return false;
      budget -= a.size;
      return true;
    })
    .slice(0, INLINE_PARTS);
  if (wanted.length === 0) return html;
  const urls = await Promise.all(wanted.map((a) => dataUrl(uuid, a).catch(() => undefined)));
  const byId = new Map<string, string>();
  wanted.forEach((a, i) => {
    const url = urls[i];
    if (url) byId.set(a.content_id!.toLowerCase(), url);
  });
  return html.replace(CID_RE, (whole, id: string) => byId.get(decoded(id)) ?? whole);
}
