// The links of a decoded message (docs/decisions.md "Codes and links"): http(s) links from
// its HTML's hrefs and from its text, in order of appearance, without duplicates, bounded in
// number and length; and how much of a message's text the scans for links and codes read.
import { readHtml } from './html-reader.js';

/** What a link in text looks like (also blanked out before codes are looked for). */
export const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const MAX_LINKS = 50;
/** A longer link is skipped, so that the 50 kept are ones the metadata can carry. */
const MAX_LINK_CHARS = 2048;
/** Codes and links sit near the top; looking further only gives hostile text more to chew on. */
export const SCAN_CHARS = 256 * 1024;

const TRAILING_PUNCTUATION = new Set('.,;:!?)]}>');

/** Drops trailing punctuation; a loop, because /[.,;:!?)\]}>]+$/ is quadratic on long runs of it. */
function trimTrailingPunctuation(s: string): string {
  let end = s.length;
  while (end > 0 && TRAILING_PUNCTUATION.has(s[end - 1]!)) end--;
  return s.slice(0, end);
}

function cleanUrl(url: string): string | undefined {
  const trimmed = trimTrailingPunctuation(url.replace(/&amp;/g, '&')).trim();
  return /^https?:\/\/[^\s/]+/i.test(trimmed) && URL.canParse(trimmed) ? trimmed : undefined;
}

/** http(s) links from HTML hrefs and from the text, in order of appearance, without duplicates. */
export function extractLinks(text: string, html: string | undefined): string[] {
  const out = new Set<string>();
  const add = (u: string | undefined) => {
    const clean = u && cleanUrl(u);
    if (clean && clean.length <= MAX_LINK_CHARS) out.add(clean);
  };
  if (html) {
    readHtml(html.slice(0, SCAN_CHARS), {
      attribute(name, value) {
        if (name === 'href' && out.size < MAX_LINKS) add(value);
      },
    });
  }
  for (const m of text.slice(0, SCAN_CHARS).matchAll(URL_RE)) {
    if (out.size >= MAX_LINKS) break;
    add(m[0]);
  }
  return [...out];
}
