// A parsed search (storage/search-query.ts) as PostgreSQL statements: free words as a
// tsquery over mails.search (each word in its address's namespace: search-words.ts
// indexWord), fields from the mail's row and its metadata. The same semantics as the
// SQLite backend's search-sql.ts; the store runs them under a statement_timeout.
import type { ParsedSearch, SearchTerm } from '../search-query.js';
import { indexWord } from '../search-words.js';

export interface PgSearchPlan {
  /** The conditions on mails (aliased m), without ORDER BY or paging. */
  where: string;
  params: unknown[];
}

const tsWords = (addressId: number, t: Extract<SearchTerm, { kind: 'words' }>): string =>
  // Words are letters and digits only; quoted, a prefix where it is one.
  `(${t.words.map((w) => `'${indexWord(addressId, w.word)}'${w.prefix ? ':*' : ''}`).join(' & ')})`;

/** Conditions that never yield NULL, so that NOT negates them. */
function fieldCondition(t: Exclude<SearchTerm, { kind: 'words' }>, param: (value: unknown) => string): string {
  // metadata is TEXT holding JSON that the server wrote; lower() as JavaScript's toLowerCase() in the other backend.
  const has = (expr: string, p: string) => `coalesce(strpos(lower(${expr}), ${p}) > 0, false)`;
  const meta = '(m.metadata::jsonb)';
  const env = '(m.envelope::jsonb)';
  // The array at `key` of a JSON object, or an empty one (absent, NULL or not an array).
  const list = (of: string, key: string) => `(CASE jsonb_typeof(${of}->'${key}') WHEN 'array' THEN ${of}->'${key}' ELSE '[]'::jsonb END)`;
  // A mailbox of the list at `key` whose name or address contains the value.
  const people = (key: string, p: string) => `EXISTS (SELECT 1 FROM jsonb_array_elements(${list(meta, key)}) r WHERE ${has("r->>'name'", p)} OR ${has("r->>'address'", p)})`;
  switch (t.kind) {
    case 'from': {
      const p = param(t.value);
      return `(${has(`${meta}->'from'->>'name'`, p)} OR ${has(`${meta}->'from'->>'address'`, p)})`;
    }
    case 'to': {
      // As in the SQLite backend: the To header, the address it was delivered to, a sandbox's envelope recipients.
      const p = param(t.value);
      return `(${people('to', p)} OR ${has(`${meta}->>'delivered_to'`, p)} OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(${list(env, 'to')}) e WHERE ${has('e', p)}))`;
    }
    case 'cc':
      return people('cc', param(t.value));
    case 'reply-to':
      return people('reply_to', param(t.value));
    case 'bcc': {
      // An envelope recipient that neither To nor Cc names.
      const named = `SELECT lower(r->>'address') FROM jsonb_array_elements(${list(meta, 'to')} || ${list(meta, 'cc')}) r`;
      return `EXISTS (SELECT 1 FROM jsonb_array_elements_text(${list(env, 'to')}) e WHERE ${has('e', param(t.value))} AND lower(e) NOT IN (${named} WHERE r->>'address' IS NOT NULL))`;
    }
    case 'subject':
      return has(`${meta}->>'subject'`, param(t.value));
    case 'filename':
      return `EXISTS (SELECT 1 FROM jsonb_array_elements(${list(meta, 'attachments')}) a WHERE ${has("a->>'filename'", param(t.value))})`;
    case 'message-id': {
      const p = param(t.value);
      return `lower(btrim(m.message_id)) IN (${p}, '<' || ${p} || '>')`;
    }
    case 'tag':
      return `EXISTS (SELECT 1 FROM mail_tags g WHERE g.mail_id = m.id AND lower(g.tag) = ${param(t.value)})`;
    case 'tagged':
      return 'EXISTS (SELECT 1 FROM mail_tags g WHERE g.mail_id = m.id)';
    case 'larger':
      return `coalesce((${meta}->>'size')::bigint, 0) >= ${param(t.bytes)}`;
    case 'smaller':
      return `coalesce((${meta}->>'size')::bigint, 0) < ${param(t.bytes)}`;
    case 'attachment':
      return `coalesce(CASE jsonb_typeof(${meta}->'attachments') WHEN 'array' THEN jsonb_array_length(${meta}->'attachments') > 0 END, false)`;
    case 'read':
      return 'm.seen';
    case 'before':
      return `m.created_at < ${param(t.at)}`;
    case 'after':
      return `m.created_at >= ${param(t.at)}`;
  }
}

/** The search's conditions on the address's live mail; undefined when it has no terms (nothing is found). */
export function pgSearchPlan(addressId: number, search: ParsedSearch): PgSearchPlan | undefined {
  if (search.terms.length === 0) return undefined;
  const params: unknown[] = [addressId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const positive: string[] = [];
  const negative: string[] = [];
  const conditions = ['m.address_id = $1', 'm.deleted_at IS NULL'];
  for (const t of search.terms) {
    if (t.kind === 'words') (t.negated ? negative : positive).push(tsWords(addressId, t));
    else conditions.push(t.negated ? `NOT ${fieldCondition(t, param)}` : fieldCondition(t, param));
  }
  // Mail without words (stored before search existed, or with no text) never has a word, so it
  // passes a "must not have"; as in the SQLite backend, where it is not in the index.
  if (positive.length > 0) conditions.push(`m.search @@ to_tsquery('simple', ${param(positive.join(' & '))})`);
  if (negative.length > 0) conditions.push(`NOT coalesce(m.search @@ to_tsquery('simple', ${param(negative.join(' | '))}), false)`);
  return { where: conditions.join(' AND '), params };
}
