// Pulls what test automation wants out of a decoded message: likely verification
// codes and the links, plus a plain-text rendering of HTML for previews.

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|tr|li|h[1-6])\s*>/gi, '\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    });
}

const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const HREF_RE = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
const MAX_LINKS = 50;

function cleanUrl(url: string): string | undefined {
  const trimmed = url.replace(/&amp;/g, '&').replace(/[.,;:!?)\]}>]+$/, '').trim();
  return /^https?:\/\/[^\s/]+/i.test(trimmed) && URL.canParse(trimmed) ? trimmed : undefined;
}

/** http(s) links from HTML hrefs and from the text, in order of appearance, without duplicates. */
export function extractLinks(text: string, html: string | undefined): string[] {
  const out = new Set<string>();
  const add = (u: string | undefined) => {
    const clean = u && cleanUrl(u);
    if (clean && out.size < MAX_LINKS) out.add(clean);
  };
  if (html) for (const m of html.matchAll(HREF_RE)) add(m[1] ?? m[2] ?? m[3]);
  for (const m of text.matchAll(URL_RE)) add(m[0]);
  return [...out];
}

const KEYWORD_CODE_RE =
  /\b(?:code|otp|pin|passcode|password|token|verification|verify|confirm(?:ation)?|one[- ]time|kod|código|codice|验证码)\b[^\n]{0,40}?(?<![\w-])([A-Z0-9]{4,10}|\d{3}[- ]\d{3})(?![\w-])/giu;
const DIGITS_RE = /(?<![\w.,:/@#+-])(\d{4,8})(?![\w.,:/@-]|\.\d)/g;
const MAX_CODES = 10;

function isLikelyCode(candidate: string): boolean {
  const compact = candidate.replace(/[- ]/g, '');
  if (!/\d/.test(compact)) return false; // a plain word after "code" is not a code
  if (/^(19|20)\d\d$/.test(compact)) return false; // a year
  return true;
}

/**
 * Likely verification codes, most likely first: tokens next to a keyword such as
 * "code" or "OTP", then standalone 4-8 digit numbers. URLs are ignored.
 */
export function extractCodes(subject: string, text: string): string[] {
  const haystack = `${subject}\n${text}`.replace(URL_RE, ' ');
  const out = new Set<string>();
  for (const m of haystack.matchAll(KEYWORD_CODE_RE)) {
    if (isLikelyCode(m[1]!)) out.add(m[1]!);
  }
  for (const m of haystack.matchAll(DIGITS_RE)) {
    if (isLikelyCode(m[1]!)) out.add(m[1]!);
  }
  return [...out].slice(0, MAX_CODES);
}

export function makePreview(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : flat.slice(0, max).replace(/\s\S*$/, '') + '…';
}
