// Mailpit's search filters (https://mailpit.axllent.org/docs/usage/search-filters/) as our
// parsed search (storage/search-query.ts, the syntax GET /api/mails/search takes): from:,
// to:, cc:, bcc:, reply-to:, subject:, message-id:, tag:, filename:, is:read, is:unread,
// is:tagged, has:attachment, before:, after:, larger:, smaller:, "quoted phrases", free
// words and a leading - to negate any of them are the same. Mailpit's `tz` parameter
// moves before:/after: to that time zone's midnight. addressed: is refused with a 400
// that names it (the parser's) rather than searched for as words.
import { badRequest } from '../domain/errors.js';
import { parseSearchQuery, type ParsedSearch } from '../storage/search-query.js';

/** Longest query taken (characters). */
export const MAX_QUERY_CHARS = 1024;

/** Milliseconds to add to a UTC wall-clock time to get that wall-clock time in `tz` (at about `at`). */
function zoneOffset(tz: string, at: number): number {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  } catch {
    throw badRequest(`Unknown time zone "${tz.slice(0, 64)}"; use an IANA name such as Europe/Berlin.`);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  const wall = Date.UTC(Number(parts['year']), Number(parts['month']) - 1, Number(parts['day']), Number(parts['hour']), Number(parts['minute']), Number(parts['second']));
  return at - wall;
}

/** A Mailpit search query (and its optional time zone) as our parsed search; a 400 for what cannot be searched. */
export function mailpitSearch(query: string, tz?: string): ParsedSearch {
  const q = query.trim();
  if (q === '') throw badRequest('Error: no search query');
  if (q.length > MAX_QUERY_CHARS) throw badRequest(`The search query has more than ${MAX_QUERY_CHARS} characters.`);
  const parsed = parseSearchQuery(q);
  if (!parsed.ok) throw badRequest(parsed.reason);
  if (!tz) return parsed.search;
  return {
    terms: parsed.search.terms.map((t) => (t.kind === 'before' || t.kind === 'after' ? { ...t, at: t.at + zoneOffset(tz, t.at) } : t)),
  };
}

/** The unread ones among a search's matches (or of all mail for none). */
export const unreadOf = (search?: ParsedSearch): ParsedSearch => ({ terms: [...(search?.terms ?? []), { kind: 'read', negated: true }] });
