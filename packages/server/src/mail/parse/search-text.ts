// What a mail is found by in search (GET /api/mails/search): its subject, sender,
// recipients and decoded text (from the HTML when it has no text part), made once
// in the parser's worker thread and indexed with the mail.
import type { Email } from 'postal-mime';
import { uniqueSearchWords } from '../../storage/search-words.js';
import { htmlToText } from './extract.js';

/** Indexed text per mail: enough for any body a person searches, bounded for the index. */
export const SEARCH_TEXT_CHARS = 32 * 1024;

export function searchTextOf(email: Email | undefined): string {
  if (!email) return '';
  const people = [email.from, ...(email.to ?? []), ...(email.cc ?? [])].flatMap((a) => (a ? (a.group ? a.group : [a]) : [])).map((a) => `${a.name ?? ''} ${a.address ?? ''}`);
  const body = email.text ?? (email.html ? htmlToText(email.html.slice(0, SEARCH_TEXT_CHARS * 4)) : '');
  return [email.subject ?? '', ...people, body].join('\n').slice(0, SEARCH_TEXT_CHARS);
}

/**
 * What the mail is indexed by, made in the parser's thread: the words of its search
 * text, each once, in order, joined by spaces. The store's indexWords reads the same
 * words from this as from the text itself (folding folded words changes nothing,
 * search-words.test.ts), at a tenth of the cost on the server's thread: 34 µs for a
 * 3 KB verification mail's text, 3.7 µs for its words, and about 14 KB less garbage
 * there (docs/benchmarks-journal.md "Still open").
 */
export function searchWordsOf(email: Email | undefined): string {
  return uniqueSearchWords(searchTextOf(email)).join(' ');
}
