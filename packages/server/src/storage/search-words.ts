// The words a mail is indexed by and a search looks for, made the same way for
// every backend so that both find the same mails: Unicode letters and digits,
// lower-cased, without accents (é is e). Everything else separates words, so
// "alice@example.com" is found by "alice", "example" or "com".

/** Words of a search, at most this many and this long (longer ones are cut). */
export const MAX_SEARCH_WORDS = 8;
export const MAX_SEARCH_WORD_CHARS = 64;

export function searchWords(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The words of a query, bounded; each matches words that start with it. */
export function queryWords(query: string): string[] {
  return [...new Set(searchWords(query).map((w) => w.slice(0, MAX_SEARCH_WORD_CHARS)))].slice(0, MAX_SEARCH_WORDS);
}
