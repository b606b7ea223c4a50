// A parsed search (storage/search-query.ts) as SQLite statements, and their run on one
// connection: the search thread's (search-worker.ts), or the serving one for a store in
// memory. Free words go to the FTS5 index (mail_search, each word in its address's
// namespace: search-words.ts indexWord); fields are read from the mail's row and its
// metadata. Every candidate row passes search_budget(), which stops the statement once
// the search has run for its budget.
import type Database from 'better-sqlite3';
import type { ParsedSearch, SearchTerm } from '../search-query.js';
import { indexWord } from '../search-words.js';
import { SUMMARY_COLUMNS, type SummaryRow } from './summary-row.js';

/** A matching mail's row: the summary's columns (summary-row.ts). */
export type SearchRow = SummaryRow;

export interface SearchPage {
  rows: SearchRow[];
  count: number;
}

/** Thrown by search_budget() once the budget is spent; the statement stops with it. */
export const BUDGET_SPENT = 'temp-inbox: search budget spent';


interface Statement {
  sql: string;
  params: unknown[];
}

interface Plan {
  page: Statement;
  count: Statement;
}

const ftsWords = (addressId: number, t: Extract<SearchTerm, { kind: 'words' }>): string =>
  // Words are letters and digits only, so quoting them is all the escaping FTS5 needs.
  `(${t.words.map((w) => `"${indexWord(addressId, w.word)}"${w.prefix ? '*' : ''}`).join(' AND ')})`;

/** One field term as a condition on `m` that is never NULL, and its parameters. */
function fieldCondition(t: Exclude<SearchTerm, { kind: 'words' }>): Statement {
  const has = (path: string) => `search_contains(json_extract(m.metadata, '${path}'), ?)`;
  // A mailbox of the list at `path` whose name or address contains the value (two parameters).
  const people = (path: string) =>
    `EXISTS (SELECT 1 FROM json_each(m.metadata, '${path}') r WHERE search_contains(json_extract(r.value, '$.name'), ?) OR search_contains(json_extract(r.value, '$.address'), ?))`;
  switch (t.kind) {
    case 'from':
      return { sql: `(${has('$.from.name')} OR ${has('$.from.address')})`, params: [t.value, t.value] };
    case 'to':
      // The To header, the address it was delivered to, and a sandbox's envelope recipients (as MailHog's kind=to looks in the envelope).
      return {
        sql: `(${people('$.to')} OR ${has('$.delivered_to')} OR EXISTS (SELECT 1 FROM json_each(m.envelope, '$.to') e WHERE search_contains(e.value, ?)))`,
        params: [t.value, t.value, t.value, t.value],
      };
    case 'cc':
      return { sql: people('$.cc'), params: [t.value, t.value] };
    case 'reply-to':
      return { sql: people('$.reply_to'), params: [t.value, t.value] };
    case 'bcc':
      // An envelope recipient that neither To nor Cc names.
      return {
        sql:
          "EXISTS (SELECT 1 FROM json_each(m.envelope, '$.to') e WHERE search_contains(e.value, ?) AND NOT EXISTS (" +
          "SELECT 1 FROM json_each(m.metadata, '$.to') r WHERE lower(json_extract(r.value, '$.address')) = lower(e.value) UNION ALL " +
          "SELECT 1 FROM json_each(m.metadata, '$.cc') r WHERE lower(json_extract(r.value, '$.address')) = lower(e.value)))",
        params: [t.value],
      };
    case 'subject':
      return { sql: has('$.subject'), params: [t.value] };
    case 'filename':
      return { sql: "EXISTS (SELECT 1 FROM json_each(m.metadata, '$.attachments') a WHERE search_contains(json_extract(a.value, '$.filename'), ?))", params: [t.value] };
    case 'message-id':
      return { sql: "lower(trim(m.message_id)) IN (?, '<' || ? || '>')", params: [t.value, t.value] };
    case 'tag':
      return { sql: 'EXISTS (SELECT 1 FROM mail_tags g WHERE g.mail_id = m.id AND lower(g.tag) = ?)', params: [t.value] };
    case 'tagged':
      return { sql: 'EXISTS (SELECT 1 FROM mail_tags g WHERE g.mail_id = m.id)', params: [] };
    case 'larger':
      return { sql: "coalesce(json_extract(m.metadata, '$.size'), 0) >= ?", params: [t.bytes] };
    case 'smaller':
      return { sql: "coalesce(json_extract(m.metadata, '$.size'), 0) < ?", params: [t.bytes] };
    case 'attachment':
      return { sql: "coalesce(json_array_length(m.metadata, '$.attachments'), 0) > 0", params: [] };
    case 'read':
      return { sql: 'm.seen = 1', params: [] };
    case 'before':
      return { sql: 'm.created_at < ?', params: [t.at] };
    case 'after':
      return { sql: 'm.created_at >= ?', params: [t.at] };
  }
}

/** The page's and the count's statements; undefined when the search has no terms (nothing is found). */
export function sqliteSearchPlan(addressId: number, search: ParsedSearch, limit: number, offset: number): Plan | undefined {
  if (search.terms.length === 0) return undefined;
  const positive: string[] = [];
  const negative: string[] = [];
  const filters: string[] = [];
  const filterParams: unknown[] = [];
  for (const t of search.terms) {
    if (t.kind === 'words') {
      (t.negated ? negative : positive).push(ftsWords(addressId, t));
      continue;
    }
    const c = fieldCondition(t);
    filters.push(t.negated ? `NOT ${c.sql}` : c.sql);
    filterParams.push(...c.params);
  }
  const where = filters.map((f) => ` AND ${f}`).join('');
  if (positive.length > 0) {
    // Newest first in the index's own order (rowid = mails.id, in delivery order), so the
    // index stops after the page instead of every match being joined and sorted. Only
    // live mail is in the index (deleted mail leaves it: triggers of v11), so counting
    // without fields needs no join; the join's conditions only guard the page.
    const match = positive.join(' AND ') + (negative.length > 0 ? ` NOT (${negative.join(' OR ')})` : '');
    const from = 'FROM mail_search JOIN mails m ON m.id = mail_search.rowid WHERE mail_search MATCH ? AND m.address_id = ? AND m.deleted_at IS NULL AND search_budget()';
    return {
      page: { sql: `SELECT ${SUMMARY_COLUMNS} ${from}${where} ORDER BY mail_search.rowid DESC LIMIT ? OFFSET ?`, params: [match, addressId, ...filterParams, limit, offset] },
      count:
        filters.length === 0
          ? { sql: 'SELECT count(*) FROM mail_search WHERE mail_search MATCH ? AND search_budget()', params: [match] }
          : { sql: `SELECT count(*) ${from}${where}`, params: [match, addressId, ...filterParams] },
    };
  }
  // Fields (and words it must not have) only: the address's live mail, newest first, as listed.
  const without = negative.length > 0 ? ' AND m.id NOT IN (SELECT rowid FROM mail_search WHERE mail_search MATCH ?)' : '';
  const params = [addressId, ...(negative.length > 0 ? [negative.join(' OR ')] : []), ...filterParams];
  const from = `FROM mails m WHERE m.address_id = ? AND m.deleted_at IS NULL AND search_budget()${without}${where}`;
  return {
    page: { sql: `SELECT ${SUMMARY_COLUMNS} ${from} ORDER BY m.created_at DESC, m.id DESC LIMIT ? OFFSET ?`, params: [...params, limit, offset] },
    count: { sql: `SELECT count(*) ${from}`, params },
  };
}

/** Prepared statements kept per connection: searches of a few shapes recur. */
const KEPT_STATEMENTS = 64;

export type Searcher = (addressId: number, search: ParsedSearch, limit: number, offset: number, budgetMs: number) => SearchPage;

/** Searches on `db`, registering the functions the statements call. Throws BUDGET_SPENT past the budget. */
export function createSearcher(db: Database.Database): Searcher {
  let deadline = Infinity;
  db.function('search_budget', { deterministic: false, varargs: false }, () => {
    if (Date.now() >= deadline) throw new Error(BUDGET_SPENT);
    return 1;
  });
  db.function('search_contains', { deterministic: true }, (value: unknown, needle: unknown) =>
    typeof value === 'string' && typeof needle === 'string' && value.toLowerCase().includes(needle) ? 1 : 0,
  );
  const kept = new Map<string, Database.Statement>();
  const prepared = (sql: string): Database.Statement => {
    let s = kept.get(sql);
    if (!s) {
      s = db.prepare(sql);
      if (kept.size >= KEPT_STATEMENTS) kept.delete(kept.keys().next().value!);
      kept.set(sql, s);
    }
    return s;
  };
  return (addressId, search, limit, offset, budgetMs) => {
    const plan = sqliteSearchPlan(addressId, search, limit, offset);
    if (!plan) return { rows: [], count: 0 };
    deadline = Date.now() + budgetMs;
    try {
      const rows = prepared(plan.page.sql).all(...plan.page.params) as SearchRow[];
      // The count is only needed past a short first page.
      const count = offset === 0 && rows.length < limit ? rows.length : (prepared(plan.count.sql).pluck().get(...plan.count.params) as number);
      return { rows, count };
    } finally {
      deadline = Infinity;
    }
  };
}
