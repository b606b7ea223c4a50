// Verification codes (docs/decisions.md "Codes and links").
//
// A code is a token of a code's shape (4-8 digits, "123 456", "K7P-9QX", "ABC123",
// one digit per table cell) that the words around it call a code. The nearest
// keyword before it must be a code word ("code", "OTP", "PIN", "Bestätigungscode",
// "验证码", …), on the same line or paragraph, or on a line above when the token
// stands alone on its line; or the token is followed by "is your … code". A nearer
// label that names something else ("order", "number", "tel", "PLZ", "IBAN", "邮编",
// …) wins, and a token in a promotion ("promo code SPRING25", "… at checkout") is
// never a code. Postal codes, phone numbers, prices, dates and reference numbers
// are thereby left out: they have the wrong shape, no code word, or their own label.
//
// Linear: one regex pass finds the tokens and one the keywords (neither can
// backtrack: each repetition is followed by what it cannot consume), one loop finds
// the parenthetical asides, and each token then looks at a bounded stretch around it.
import { CODE_NOT_PREFIXES, KEYWORD_RE, QUALIFIER_RE, QUALIFIES_RE, WEAK_RE } from './code-words.js';
import { SCAN_CHARS, URL_RE } from './links.js';

/**
 * Tokens: runs of ASCII letters and digits joined by single hyphens, that start
 * with a digit or an upper-case letter (a word in lower case is never a code, and
 * skipping it here costs the engine nothing); never a tail of a longer run.
 */
const CHUNK_RE = /(?<![A-Za-z0-9]|[A-Za-z0-9]-)[A-Z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*/g;
type Kind = 'code' | 'promo' | 'other';
interface Keyword {
  start: number;
  end: number;
  kind: Kind;
  /** The end of the parenthetical aside it stands in, or -1. */
  asideEnd: number;
}
interface Candidate {
  start: number;
  end: number;
  value: string;
  asideEnd: number;
}

/** Horizontal space between the digit groups of one code ("123 456", "5  0  8  2" from table cells): at most 8 characters of it. */
const GROUP_SPACE = new Set(' \t\u00a0\u2009\u202f');
const GROUP_SPACE_CHARS = 8;
const SENTENCE_END_RE = /[.!?…](?=\s|$)|[。！？]/u;
const PARAGRAPH_RE = /\n[ \t\u00a0\r]*\n/;
const COPULA_RE = /^[\s:,–-]*(?:(?:is|es|est|ist|é|è|are|was|sont|son|são|sind)(?![\p{L}\p{N}])|[是为為は이가])/iu;
/** Scripts written without spaces: a code may touch their letters ("验证码836204"). */
const SPACELESS_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const WORD_CHAR_RE = /[\p{L}\p{N}\p{M}]/u;
/** A token right after these is an amount, a reference, a masked or phone number, a path: "$1234", "#48211", "***5678", "+49". */
const NEVER_AFTER = new Set('+#$€£¥₹*/\\@&=_%~^');
const NEVER_BEFORE = new Set('%°$€£¥₹@/\\+=_&*');
/** A phone number's area code or country prefix right before the token: "(415) 555-0142", "+1 512". */
const PHONE_PREFIX_RE = /(?:\(\d{1,5}\)|\+\d{1,4})[\s.\u00a0]?$/;
/** What may surround a code that stands alone on its line. */
const LINE_LEAD = new Set(' \t\r\u00a0*•·|:>"“”\'«»([–—-');
const LINE_TRAIL = new Set(' \t\r\u00a0*•·|.,;!"“”\'»)]–—-');
/** How far a code may sit from its code word: in the same sentence, or alone on a line below it. */
const INLINE_GAP = 120;
const ALONE_GAP = 200;
/** "4827 is your code": how far the code word may follow. */
const AFTER_GAP = 40;
/** A weak code word counts only this close: "Enter 604218", "sign-in is 482913". */
const WEAK_GAP = 12;
const PROMO_REACH = 80;
/** A parenthetical aside longer than this is not looked for. */
const ASIDE_CHARS = 200;
/** How many keywords (asides, weak words) a token looks past to find the one that labels it. */
const LOOK_BACK = 8;
const MAX_CODES = 10;
/**
 * Keywords are looked for only this far before and after each token of a code's
 * shape (what labels a token is within ALONE_GAP of it; the margin catches the
 * label next to a code word at the edge). A code sits near the top: tokens past
 * the first 1,000 and keywords past the first 5,000 are not looked at, which
 * bounds the work on mail made of nothing but numbers and keywords.
 */
const BEHIND = ALONE_GAP + 64;
const AHEAD = Math.max(AFTER_GAP, PROMO_REACH) + 64;
const MAX_TOKENS = 1000;
const MAX_KEYWORDS = 5000;

const isDigits = (s: string) => /^\d+$/.test(s);
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isWordChar = (c: string | undefined) => c !== undefined && WORD_CHAR_RE.test(c) && !SPACELESS_RE.test(c);

/** The code a single token reads as, if it has a code's shape. */
function chunkValue(chunk: string): string | undefined {
  if (chunk.length > 14) return undefined;
  if (!chunk.includes('-')) {
    if (isDigits(chunk)) return chunk.length >= 4 && chunk.length <= 8 && !/^(?:19|20)\d\d$/.test(chunk) ? chunk : undefined;
    // Upper-case letters and digits, at least one digit: "ABC123", "4F7K2Q".
    return chunk.length >= 4 && chunk.length <= 10 && /^[A-Z0-9]+$/.test(chunk) && /\d/.test(chunk) ? chunk : undefined;
  }
  const parts = chunk.split('-');
  if (parts.length > 4) return undefined;
  if (parts.every(isDigits)) {
    // "123-456", "1234-5678"; not a date ("2026-03-14", "14-03-2026").
    const total = parts.reduce((n, p) => n + p.length, 0);
    const ok = parts.length <= 3 && parts.every((p) => p.length >= 2 && p.length <= 4) && total >= 6 && total <= 8;
    return ok && !/^(?:(?:19|20)\d\d-\d\d-\d\d|\d\d-\d\d-(?:19|20)\d\d)$/.test(chunk) ? chunk : undefined;
  }
  // "K7P-9QX", "7K4D-9PXQ-2MZT".
  return parts.every((p) => p.length >= 2 && p.length <= 5 && /^[A-Z0-9]+$/.test(p)) && /\d/.test(chunk) ? chunk : undefined;
}

/** The code a run of space-separated digit groups reads as: "123 456" as written (one space), "5 0 8 2 6 3" joined. */
function groupsValue(groups: string[]): string | undefined {
  if (groups.length === 1) return chunkValue(groups[0]!);
  if (groups.length >= 4 && groups.length <= 8 && groups.every((g) => g.length === 1)) return groups.join('');
  const total = groups.reduce((n, g) => n + g.length, 0);
  return groups.length <= 3 && groups.every((g) => g.length >= 2 && g.length <= 4) && total >= 6 && total <= 8 ? groups.join(' ') : undefined;
}

/** Whether the characters around [start, end) leave it a token of its own (not part of an amount, a decimal, a time, a phone number). */
function standsAlone(h: string, start: number, end: number): boolean {
  const before = h[start - 1];
  const after = h[end];
  if (isWordChar(before) || isWordChar(after)) return false;
  if (before !== undefined && NEVER_AFTER.has(before)) return false;
  if (after !== undefined && NEVER_BEFORE.has(after)) return false;
  // "1.234", "12:30", "14.03.2026", "1234.56", "1 249,00".
  if ((before === '.' || before === ',' || before === ':' || before === '-') && isDigit(h[start - 2])) return false;
  if ((after === '.' || after === ',' || after === ':') && isDigit(h[end + 1])) return false;
  const prev = before === ')' ? before : h[start - 2];
  return !((prev === ')' || isDigit(prev)) && PHONE_PREFIX_RE.test(h.slice(Math.max(0, start - 8), start)));
}

/** Whether h[from, to) is a short run of horizontal space. */
function groupSpace(h: string, from: number, to: number): boolean {
  if (to <= from || to - from > GROUP_SPACE_CHARS) return false;
  for (let i = from; i < to; i++) if (!GROUP_SPACE.has(h[i]!)) return false;
  return true;
}

/** Tokens of a code's shape, in order. */
function candidates(h: string): Candidate[] {
  const out: Candidate[] = [];
  // A run of digit groups separated by horizontal space is read as one ("123 456"); past 9 groups it is no code.
  let run: { start: number; end: number; groups: string[]; long: boolean } | undefined;
  const flush = () => {
    if (!run) return;
    const value = run.long ? undefined : groupsValue(run.groups);
    if (value !== undefined && standsAlone(h, run.start, run.end)) out.push({ start: run.start, end: run.end, value, asideEnd: -1 });
    run = undefined;
  };
  // The shared regex (a copy would start cold in V8 each call); extraction is synchronous, so nothing else uses it meanwhile.
  const re = CHUNK_RE;
  re.lastIndex = 0;
  for (let m = re.exec(h); m && out.length < MAX_TOKENS; m = re.exec(h)) {
    const start = m.index;
    const end = start + m[0].length;
    if (isDigits(m[0]) && m[0].length <= 8) {
      if (run && groupSpace(h, run.end, start)) {
        run.end = end;
        if (run.groups.length < 9) run.groups.push(m[0]);
        else run.long = true;
        continue;
      }
      flush();
      run = { start, end, groups: [m[0]], long: false };
      continue;
    }
    flush();
    const value = chunkValue(m[0]);
    if (value !== undefined && standsAlone(h, start, end)) out.push({ start, end, value, asideEnd: -1 });
  }
  flush();
  return out;
}

/** Keywords near the tokens, in order; a code word that a label next to it qualifies counts as that label. */
function keywords(h: string, cands: Candidate[]): Keyword[] {
  const out: Keyword[] = [];
  const re = KEYWORD_RE; // shared, as in candidates()
  // Each window is searched from where the last search ended, so that no character is searched twice; a search
  // runs on past its window to the next keyword, and when there is none there is none in any later window either.
  let searched = 0;
  let i = 0;
  while (i < cands.length && out.length < MAX_KEYWORDS) {
    // One window: from BEHIND the token to AHEAD of the last token whose window overlaps it.
    const from = Math.max(searched, cands[i]!.start - BEHIND);
    let to = cands[i]!.end + AHEAD;
    while (++i < cands.length && cands[i]!.start - BEHIND <= to) to = cands[i]!.end + AHEAD;
    if (from >= to) continue;
    re.lastIndex = from;
    let m: RegExpExecArray | null;
    for (m = re.exec(h); m && out.length < MAX_KEYWORDS; m = re.lastIndex < to ? re.exec(h) : null) {
      searched = re.lastIndex;
      if (m[1] !== undefined) continue;
      let start = m.index;
      let kind: Kind = m[2] !== undefined || m[5] !== undefined || m[7] !== undefined ? 'code' : m[3] !== undefined || m[8] !== undefined ? 'promo' : 'other';
      if (m[5] !== undefined) {
        // The rest of the word before "code": "bestätigungs" is fine, "bar" and "gutschein" are not.
        let p = start;
        while (p > 0 && start - p < 24 && /\p{L}/u.test(h[p - 1]!)) p--;
        if (CODE_NOT_PREFIXES.has(h.slice(p, start).toLowerCase())) [start, kind] = [p, 'other'];
      }
      out.push({ start, end: m.index + m[0].length, kind, asideEnd: -1 });
    }
    if (m === null && re.lastIndex === 0) break;
  }
  const original = out.map((k) => k.kind);
  for (let j = 0; j < out.length; j++) {
    if (original[j] !== 'code') continue;
    for (const n of [j - 1, j + 1]) {
      const label = out[n];
      if (!label || original[n] === 'code') continue;
      const gap = n < j ? h.slice(label.end, out[j]!.start) : h.slice(out[j]!.end, label.start);
      if (gap.length <= 6 && QUALIFIES_RE.test(gap) && (original[n] === 'promo' || QUALIFIER_RE.test(h.slice(label.start, label.end)))) out[j]!.kind = original[n]!;
    }
  }
  return out;
}

/** A weak code word (WEAK_RE): it counts only right before the code. */
const isWeak = (h: string, key: Keyword) => key.kind === 'code' && WEAK_RE.test(h.slice(key.start, key.end));

/**
 * Marks the keywords and tokens that stand inside a parenthetical aside closed on
 * the same line ("(IBAN DE89 …)", "(OTP)"): a token after the aside looks past them.
 */
function markAsides(h: string, limit: number, items: { start: number; asideEnd: number }[][]): void {
  const asides: [number, number][] = [];
  let open = -1;
  let depth = 0;
  for (let i = 0; i < limit; i++) {
    const ch = h[i];
    if (ch === '\n' || (open >= 0 && i - open > ASIDE_CHARS)) {
      open = -1;
      depth = 0;
    } else if (ch === '(') {
      if (depth++ === 0) open = i;
    } else if (ch === ')' && depth > 0 && --depth === 0) {
      asides.push([open, i + 1]);
      open = -1;
    }
  }
  for (const list of items) {
    let a = 0;
    for (const item of list) {
      while (a < asides.length && asides[a]![1] <= item.start) a++;
      if (a < asides.length && asides[a]![0] < item.start) item.asideEnd = asides[a]![1];
    }
  }
}

function aloneOnLine(h: string, start: number, end: number): boolean {
  for (let i = start - 1, n = 0; i >= 0 && h[i] !== '\n'; i--) if (!LINE_LEAD.has(h[i]!) || ++n > 40) return false;
  for (let i = end, n = 0; i < h.length && h[i] !== '\n'; i++) if (!LINE_TRAIL.has(h[i]!) || ++n > 40) return false;
  return true;
}

/** Same line, same sentence, and near. */
function sameSentence(h: string, from: number, to: number): boolean {
  if (to - from > PROMO_REACH) return false;
  const between = h.slice(from, to);
  return !between.includes('\n') && !SENTENCE_END_RE.test(between);
}

/** Whether x stands in a parenthetical aside closed before `at`. */
const asideBefore = (x: { asideEnd: number }, at: number) => x.asideEnd >= 0 && x.asideEnd <= at;

/**
 * Likely verification codes in the subject and text, in order of appearance,
 * without duplicates (docs/decisions.md "Codes and links"). URLs are ignored.
 */
export function extractCodes(subject: string, text: string): string[] {
  const h = `${subject.slice(0, SCAN_CHARS)}\n${text.slice(0, SCAN_CHARS)}`.replace(URL_RE, ' ');
  const cands = candidates(h);
  if (cands.length === 0) return [];
  const keys = keywords(h, cands);
  markAsides(h, Math.min(h.length, cands[cands.length - 1]!.end + AHEAD), [cands, keys]);
  const out = new Set<string>();
  // keys and cands are both in order: k only moves forward.
  let k = 0;
  for (let i = 0; i < cands.length && out.size < MAX_CODES; i++) {
    const c = cands[i]!;
    if (out.has(c.value)) continue;
    while (k < keys.length && keys[k]!.end <= c.start) k++;
    // Keywords and tokens in an aside closed before c do not count.
    let prevEnd = -1;
    for (let j = i - 1; j >= 0 && j >= i - LOOK_BACK; j--) {
      if (!asideBefore(cands[j]!, c.start) || j === i - LOOK_BACK) {
        prevEnd = cands[j]!.end;
        break;
      }
    }
    // The keyword that labels c: the nearest before it, past asides and weak code words too far from it.
    let before: Keyword | undefined;
    for (let j = k - 1; j >= 0 && j >= k - LOOK_BACK; j--) {
      const key = keys[j]!;
      if (asideBefore(key, c.start)) continue;
      if (isWeak(h, key) && (c.start - key.end > WEAK_GAP || /[,\d]/.test(h.slice(key.end, c.start)))) continue;
      before = key;
      break;
    }
    let after: Keyword | undefined;
    for (let j = k; j < keys.length && j < k + 3; j++) {
      const key = keys[j]!;
      if (key.start < c.end) continue;
      if (key.start - c.end > AFTER_GAP || key.kind !== 'code') break;
      if (!isWeak(h, key)) {
        after = key;
        break;
      }
    }
    // A promotion in the same sentence, before or after (the nearest of each side decides).
    let promo = false;
    for (let j = k - 1; j >= 0 && keys[j]!.end > c.start - PROMO_REACH; j--) {
      if (keys[j]!.kind !== 'promo') continue;
      promo = sameSentence(h, keys[j]!.end, c.start);
      break;
    }
    for (let j = k; !promo && j < keys.length && keys[j]!.start < c.end + PROMO_REACH; j++) {
      if (keys[j]!.kind !== 'promo' || keys[j]!.start < c.end) continue;
      promo = sameSentence(h, c.end, keys[j]!.start);
      break;
    }
    if (promo) continue;

    // Nothing that labels c may be further than this (and no other token may stand between).
    const label = before !== undefined && before.end >= prevEnd && c.start - before.end <= ALONE_GAP ? before : undefined;
    let ok = false;
    if (label?.kind === 'code') {
      // "Your code is 482913", "验证码：836204"; or the code alone on its line below "Enter this code:".
      const gap = h.slice(label.end, c.start);
      ok = (gap.length <= INLINE_GAP && !PARAGRAPH_RE.test(gap) && !SENTENCE_END_RE.test(gap)) || aloneOnLine(h, c.start, c.end);
    }
    if (!ok && after && (cands[i + 1]?.start ?? Infinity) > after.start) {
      // "4827 is your code", "381920 is your Tandem verification code" — unless a label on the same line names it first.
      const gap = h.slice(c.end, after.start);
      const labelled = label !== undefined && label.kind !== 'code' && !h.slice(label.end, c.start).includes('\n');
      ok = !labelled && !gap.includes('\n') && !SENTENCE_END_RE.test(gap) && COPULA_RE.test(gap);
    }
    if (ok) out.add(c.value);
  }
  return [...out];
}
