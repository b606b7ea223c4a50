// Searching the open inbox (GET /api/mails/search): a search field whose results
// replace the list while it holds words, and the words marked where they match.
import { useEffect, useState } from 'preact/hooks';
import { api, type MailListItem } from './api.js';
import { s } from './strings.js';

export interface Found {
  query: string;
  /** The words the server looked for, as it splits them (letters and digits). */
  words: string[];
  results: MailListItem[];
  count: number;
}

const DEBOUNCE_MS = 250;

/** A field term (from:, is:unread, …) or a negated one: nothing of it is marked. */
const NOT_MARKED = /^(-|(from|to|subject|has|is|before|after):)/i;

/** The free words as the server splits them: letters and digits, case and accents aside. */
export const wordsOf = (q: string) =>
  (
    q
      .split(/\s+/)
      .filter((t) => !NOT_MARKED.test(t))
      .join(' ')
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).slice(0, 8);

export function SearchBox(props: { onFound: (found: Found | undefined) => void; onError: (message: string) => void }) {
  const { onFound, onError } = props;
  const [query, setQuery] = useState('');
  useEffect(() => {
    const q = query.trim();
    if (!q) {
      onFound(undefined);
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      api.search(q, 100, 0).then(
        (page) => current && onFound({ query: q, words: wordsOf(q), results: page.results, count: page.count }),
        (err: unknown) => current && onError(err instanceof Error ? err.message : String(err)),
      );
    }, DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query, onFound, onError]);
  return (
    <input
      type="search"
      class="search"
      aria-label={s.searchLabel}
      placeholder={s.searchPlaceholder}
      title={s.searchHelp}
      maxLength={200}
      value={query}
      onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
    />
  );
}

/** `text` with every word that starts with one of `words` in a <mark>. */
export function Highlight(props: { text: string; words: string[] | undefined }) {
  const { text, words } = props;
  if (!words || words.length === 0 || !text) return <>{text}</>;
  const parts = text.split(/([\p{L}\p{N}]+)/u);
  return (
    <>
      {parts.map((part, i) => {
        const folded = part.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
        return i % 2 === 1 && words.some((w) => folded.startsWith(w)) ? <mark key={i}>{part}</mark> : part;
      })}
    </>
  );
}
