// Pulls what test automation wants out of a decoded message: likely verification
// codes and the links, plus a plain-text rendering of HTML for previews.

import { decodeHTML } from 'entities';

// Every step below is linear in the input. The obvious one-line regexes
// (/<(script|style|head)\b[\s\S]*?<\/\1\s*>/ and /<[^>]*>/) are quadratic when
// the closing part is missing: 100 KB of "<" took seconds and a 10 MB mail would
// block the process for hours.
const BLOCK_OPEN_RE = /<(script|style|head)\b/gi;

/** Replaces each <script>, <style> and <head> element (opener to the first matching closer) with a space. */
function stripBlocks(html: string): string {
  let out = '';
  let pos = 0;
  const noCloserFrom = new Map<string, number>(); // tag -> offset from which no closer exists
  const open = new RegExp(BLOCK_OPEN_RE);
  for (let m = open.exec(html); m; m = open.exec(html)) {
    const tag = m[1]!.toLowerCase();
    const from = m.index + m[0].length;
    if ((noCloserFrom.get(tag) ?? Infinity) <= from) continue;
    const close = new RegExp(`<\\/${tag}\\s*>`, 'gi');
    close.lastIndex = from;
    const c = close.exec(html);
    if (!c) {
      noCloserFrom.set(tag, from);
      continue;
    }
    out += html.slice(pos, m.index) + ' ';
    pos = open.lastIndex = c.index + c[0].length;
  }
  return out + html.slice(pos);
}

/** /<[^>]*>/g -> ' ', applied only up to the last ">" (no tag can match after it). */
function stripTags(html: string): string {
  const last = html.lastIndexOf('>');
  return last < 0 ? html : html.slice(0, last + 1).replace(/<[^>]*>/g, ' ') + html.slice(last + 1);
}

export function htmlToText(html: string): string {
  return decodeHTML(stripTags(stripBlocks(html).replace(/<br\s*\/?>|<\/(p|div|tr|li|h[1-6])\s*>/gi, '\n')));
}

const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const HREF_RE = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
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
    for (const m of html.slice(0, SCAN_CHARS).matchAll(HREF_RE)) {
      if (out.size >= MAX_LINKS) break;
      add(m[1] ?? m[2] ?? m[3]);
    }
  }
  for (const m of text.slice(0, SCAN_CHARS).matchAll(URL_RE)) {
    if (out.size >= MAX_LINKS) break;
    add(m[0]);
  }
  return [...out];
}

const KEYWORD_CODE_RE =
  // The candidate must hold a digit, so that the words after a keyword ("verification
  // code is …") are skipped rather than taken and dropped.
  /\b(?:code|otp|pin|passcode|password|token|verification|verify|confirm(?:ation)?|one[- ]time|kod|código|codice|验证码)\b[^\n]{0,40}?(?<![\w-])((?=[A-Z0-9]{0,9}\d)[A-Z0-9]{4,10}|\d{3}[- ]\d{3})(?![\w-])/giu;
// A number ending a sentence ("… is 627183.") or a clause ("627183, valid …") counts;
// a decimal ("1234.56", "1234,56") or a time ("1200:30") does not.
const DIGITS_RE = /(?<![\w.,:/@#+-])(\d{4,8})(?![\w/@-]|[.,:]\d)/g;
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
  const haystack = `${subject.slice(0, SCAN_CHARS)}\n${text.slice(0, SCAN_CHARS)}`.replace(URL_RE, ' ');
  const out = new Set<string>();
  for (const m of haystack.matchAll(KEYWORD_CODE_RE)) {
    if (isLikelyCode(m[1]!)) out.add(m[1]!);
  }
  for (const m of haystack.matchAll(DIGITS_RE)) {
    if (isLikelyCode(m[1]!)) out.add(m[1]!);
  }
  return [...out].slice(0, MAX_CODES);
}

/** `text` with whitespace runs collapsed, read in slices only until `need` characters are out. */
function flatPrefix(text: string, need: number): string {
  let out = '';
  for (let at = 0; at < text.length && out.length < need; at += 4096) {
    const part = text.slice(at, at + 4096).replace(/\s+/g, ' ');
    out += out.endsWith(' ') && part.startsWith(' ') ? part.slice(1) : part;
  }
  return out;
}

export function makePreview(text: string, max = 200): string {
  // max + 3: past the leading and a trailing space, more than max characters prove the cut is needed.
  const flat = flatPrefix(text, max + 3).trim();
  if (flat.length <= max) return flat;
  // Never cut between the two halves of a surrogate pair (an emoji, say).
  const end = /[\ud800-\udbff]/.test(flat[max - 1]!) ? max - 1 : max;
  return flat.slice(0, end).replace(/\s\S*$/, '') + '…';
}
