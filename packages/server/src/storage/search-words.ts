// The words a mail is indexed by and a search looks for, made the same way for
// every backend so that both find the same mails: Unicode letters and digits,
// lower-cased, without accents (é is e). Everything else separates words, so
// "alice@example.com" is found by "alice", "example" or "com".

/** Longest word of a search (a longer one is cut); how many a search may have is search-query.ts's MAX_SEARCH_TERMS. */
export const MAX_SEARCH_WORD_CHARS = 64;

export function searchWords(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A word as the index holds it: inside its address's own namespace, z<id>z (no other
 * address's words start with it: ids are digits). A search then reads only its
 * address's entries, however large the store and however common the word
 * (docs/decisions.md "Search"): "code" across a store of 1,000,000 mails was every
 * mail's entry of "code"; z12zcode is only the inbox's.
 */
export function indexWord(addressId: number, word: string): string {
  return `z${addressId}z${word}`;
}

/** The words of `text`, each once, in order of first appearance (search asks only whether a mail has a word). */
export function uniqueSearchWords(text: string): string[] {
  return [...new Set(searchWords(text))];
}

/** Lower-case ASCII letters and digits, one space between words: text that folding leaves as it is. */
const FOLDED_ASCII = /^[a-z0-9]+(?: [a-z0-9]+)*$/;

/** A mail's words for the index: each once, in its address's namespace. */
export function indexWords(addressId: number, text: string): string[] {
  // The parser's words of an ASCII mail (search-text.ts) are split, not folded again:
  // searchWords would give the same words, for about 15% of the garbage a mail leaves on the server's thread.
  const words = FOLDED_ASCII.test(text) ? new Set(text.split(' ')) : new Set(searchWords(text));
  return Array.from(words, (w) => indexWord(addressId, w));
}
