// The syntax of a search (GET /api/mails/search, docs/api.md "GET /api/mails/search"), after Gmail's
// and Mailpit's: free words, "quoted phrases", from: to: cc: bcc: reply-to: subject: message-id:
// tag: filename: has:attachment is:read is:unread is:tagged before: after: larger:
// smaller:, and a leading - that negates any of them. Parsed
// once into a typed query that every store implements the same way. Pure: no I/O.
//
// It is bounded before any store sees it (docs/security.md "Search"): at most
// MAX_SEARCH_TERMS terms, and a word shorter than MIN_PREFIX_CHARS is matched whole,
// not as the start of every word that starts with it (a one-letter prefix expanded
// to most of an inbox's words, and eight of them took the index seconds).
import { AppError, badRequest } from '../domain/errors.js';
import { MAX_SEARCH_WORD_CHARS, searchWords } from './search-words.js';

/** Terms of a search at most: each word (of free text and of phrases) and each field term counts one. */
export const MAX_SEARCH_TERMS = 8;
/** A word is matched as the start of longer words only from this many characters; a shorter one only whole. */
export const MIN_PREFIX_CHARS = 3;
/** How long one search may run in the store before it is stopped (every backend). */
export const SEARCH_BUDGET_MS = 2_000;

/** A search stopped at its budget: 503 with Retry-After, since the same search may pass when the server is less busy. */
export const searchOverBudget = (budgetMs: number): AppError =>
  new AppError('unavailable', `The search ran longer than its ${budgetMs / 1000} s budget and was stopped; search with more or longer words, or try again later.`, 1);

/** A word of the index: `prefix` when longer words that start with it match too. */
export interface IndexWord {
  word: string;
  prefix: boolean;
}

export type SearchTerm =
  /** Every word must be a word of the mail (a free token such as "shop.example" is two words; a phrase's words are whole). */
  | { kind: 'words'; words: IndexWord[]; negated: boolean }
  /**
   * Contains `value` (lower-cased): the From: name or address; a To: recipient's name or address, the
   * address it was delivered to or a recipient of its envelope; a Cc: recipient's; an envelope recipient
   * that neither To: nor Cc: names (bcc); a Reply-To: mailbox's; the subject; an attachment's file name.
   */
  | { kind: 'from' | 'to' | 'cc' | 'bcc' | 'reply-to' | 'subject' | 'filename'; value: string; negated: boolean }
  /** The Message-ID is `value` (lower-cased, without its angle brackets). */
  | { kind: 'message-id'; value: string; negated: boolean }
  /** The mail has the tag `value` (compared case-insensitively; lower-cased). */
  | { kind: 'tag'; value: string; negated: boolean }
  /** The mail has at least one tag. */
  | { kind: 'tagged'; negated: boolean }
  /** larger: at least `bytes` bytes as received; smaller: fewer. */
  | { kind: 'larger' | 'smaller'; bytes: number; negated: boolean }
  /** The mail has at least one attachment. */
  | { kind: 'attachment'; negated: boolean }
  /** The mail is marked read (is:unread is this negated). */
  | { kind: 'read'; negated: boolean }
  /** before: received before `at`; after: received at or after `at` (ms since the epoch, a UTC midnight). */
  | { kind: 'before' | 'after'; at: number; negated: boolean };

/** A parsed search: every term must hold (a negated one must not). No terms: nothing is found. */
export interface ParsedSearch {
  terms: SearchTerm[];
}

export type SearchParse = { ok: true; search: ParsedSearch } | { ok: false; reason: string };

const FIELDS = new Set(['from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'message-id', 'tag', 'filename', 'has', 'is', 'before', 'after', 'larger', 'smaller']);
/** Mailpit's filters that have no counterpart here: refused by name rather than searched for as words. */
const REFUSED: Record<string, string> = {
  addressed: 'addressed: is not supported; search from:, to:, cc: or bcc: one at a time.',
};
/** A value past this many characters finds nothing a person meant; refused rather than scanned for. */
const MAX_FIELD_VALUE_CHARS = 256;

/** Every term's words and filters, or a reason that a person can act on (a 400's text). */
export function parseSearchQuery(query: string): SearchParse {
  const terms: SearchTerm[] = [];
  const seen = new Set<string>();
  let i = 0;
  const n = query.length;
  const space = (c: string | undefined) => c !== undefined && /\s/u.test(c);
  while (i < n) {
    if (space(query[i])) {
      i++;
      continue;
    }
    const negated = query[i] === '-' && i + 1 < n && !space(query[i + 1]);
    if (negated) i++;
    let field: string | undefined;
    const name = /^([A-Za-z]+(?:-[A-Za-z]+)?):/.exec(query.slice(i, i + 12));
    if (name && REFUSED[name[1]!.toLowerCase()]) return { ok: false, reason: REFUSED[name[1]!.toLowerCase()]! };
    if (name && FIELDS.has(name[1]!.toLowerCase())) {
      field = name[1]!.toLowerCase();
      i += name[0].length;
    }
    let value: string;
    let quoted = false;
    if (query[i] === '"') {
      const end = query.indexOf('"', i + 1);
      if (end < 0) return { ok: false, reason: `The quote at character ${i + 1} is not closed; end the phrase with another ".` };
      value = query.slice(i + 1, end);
      quoted = true;
      i = end + 1;
    } else {
      const start = i;
      while (i < n && !space(query[i]) && query[i] !== '"') i++;
      value = query.slice(start, i);
    }
    const term = field === undefined ? wordsTerm(value, quoted, negated) : fieldTerm(field, value, negated);
    if (typeof term === 'string') return { ok: false, reason: term };
    // The same term twice asks nothing more: it is kept once (and counted once).
    if (term && !seen.has(JSON.stringify(term))) {
      seen.add(JSON.stringify(term));
      terms.push(term);
    }
  }
  const count = terms.reduce((sum, t) => sum + (t.kind === 'words' ? t.words.length : 1), 0);
  if (count > MAX_SEARCH_TERMS) {
    return { ok: false, reason: `The search has ${count} terms; at most ${MAX_SEARCH_TERMS} are allowed (each word and each field term counts one).` };
  }
  return { ok: true, search: { terms } };
}

/** The words of free text (undefined when it has none: punctuation alone finds nothing and is left out). */
function wordsTerm(text: string, quoted: boolean, negated: boolean): SearchTerm | undefined {
  const words = [...new Set(searchWords(text).map((w) => w.slice(0, MAX_SEARCH_WORD_CHARS)))];
  if (words.length === 0) return undefined;
  // A phrase's words are whole: the index keeps each word once, not where it stood.
  return { kind: 'words', words: words.map((word) => ({ word, prefix: !quoted && word.length >= MIN_PREFIX_CHARS })), negated };
}

function fieldTerm(field: string, value: string, negated: boolean): SearchTerm | string {
  if (value === '') return `${field}: needs a value, e.g. ${example(field)} (no space after the colon).`;
  if (value.length > MAX_FIELD_VALUE_CHARS) return `${field}: takes at most ${MAX_FIELD_VALUE_CHARS} characters.`;
  switch (field) {
    case 'from':
    case 'to':
    case 'cc':
    case 'bcc':
    case 'reply-to':
    case 'subject':
    case 'filename':
      return { kind: field, value: value.toLowerCase(), negated };
    case 'message-id':
      return { kind: field, value: value.trim().replace(/^<(.*)>$/s, '$1').toLowerCase(), negated };
    case 'tag':
      return { kind: field, value: value.toLowerCase(), negated };
    case 'larger':
    case 'smaller': {
      const bytes = sizeOf(value);
      if (bytes === undefined) return `${field}:${value} is not a size; write it as bytes or with K, M or G (powers of 1000; KiB, MiB, GiB of 1024), e.g. ${example(field)}.`;
      return { kind: field, bytes, negated };
    }
    case 'has':
      if (value.toLowerCase() === 'attachment' || value.toLowerCase() === 'attachments') return { kind: 'attachment', negated };
      return `has:${value} is not known; has:attachment is.`;
    case 'is': {
      const v = value.toLowerCase();
      if (v === 'read' || v === 'unread') return { kind: 'read', negated: negated !== (v === 'unread') };
      if (v === 'tagged') return { kind: 'tagged', negated };
      return `is:${value} is not known; is:read, is:unread and is:tagged are.`;
    }
    default: {
      const at = utcDay(value);
      if (at === undefined) return `${field}:${value} is not a date; write it as YYYY-MM-DD, e.g. ${example(field)}.`;
      return { kind: field as 'before' | 'after', at, negated };
    }
  }
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** Bytes of a size such as 500K, 1.5MB or 2MiB (as Mailpit reads them: K, M, G of 1000), or undefined. */
function sizeOf(value: string): number | undefined {
  const m = /^(\d{1,12}(?:\.\d{1,6})?)\s*([a-z]*)$/i.exec(value);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) return undefined;
  const bytes = Math.round(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Midnight UTC of a YYYY-MM-DD calendar date, or undefined. */
function utcDay(value: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const at = Date.UTC(y, mo - 1, d);
  const back = new Date(at);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return at;
}

function example(field: string): string {
  switch (field) {
    case 'from':
      return 'from:alice@example.com';
    case 'to':
    case 'cc':
    case 'bcc':
    case 'reply-to':
      return `${field}:support`;
    case 'message-id':
      return 'message-id:abc123@shop.example';
    case 'tag':
      return 'tag:signup';
    case 'filename':
      return 'filename:invoice.pdf';
    case 'larger':
    case 'smaller':
      return `${field}:500K`;
    case 'subject':
      return 'subject:"order shipped"';
    case 'has':
      return 'has:attachment';
    case 'is':
      return 'is:unread';
    default:
      return `${field}:2024-05-01`;
  }
}

/** The parsed search (a string is parsed; bad syntax throws a bad_request AppError with the reason). */
export function toParsedSearch(query: ParsedSearch | string): ParsedSearch {
  if (typeof query !== 'string') return query;
  const parsed = parseSearchQuery(query);
  if (!parsed.ok) throw badRequest(parsed.reason);
  return parsed.search;
}
