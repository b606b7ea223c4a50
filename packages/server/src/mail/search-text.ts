// What a mail is found by in search (GET /api/mails/search): its subject, sender,
// recipients and decoded text (from the HTML when it has no text part), made once
// in the parser's worker thread and indexed with the mail.
import type { Email } from 'postal-mime';
import { htmlToText } from './extract.js';

/** Indexed text per mail: enough for any body a person searches, bounded for the index. */
export const SEARCH_TEXT_CHARS = 32 * 1024;

export function searchTextOf(email: Email | undefined): string {
  if (!email) return '';
  const people = [email.from, ...(email.to ?? []), ...(email.cc ?? [])].flatMap((a) => (a ? (a.group ? a.group : [a]) : [])).map((a) => `${a.name ?? ''} ${a.address ?? ''}`);
  const body = email.text ?? (email.html ? htmlToText(email.html.slice(0, SEARCH_TEXT_CHARS * 4)) : '');
  return [email.subject ?? '', ...people, body].join('\n').slice(0, SEARCH_TEXT_CHARS);
}
