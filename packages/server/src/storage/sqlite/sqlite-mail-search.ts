// Search in SQLite (store.ts MailStore.searchMails): mail delivered since the queue's last
// batch is indexed first (search-queue.ts), then the search runs on a thread of its own,
// off the event loop (search-thread.ts); a store in memory has no file another connection
// could open, so it searches on its own connection.
import type Database from 'better-sqlite3';
import type { MailStore } from '../store.js';
import { SEARCH_BUDGET_MS, searchOverBudget, toParsedSearch, type ParsedSearch } from '../search-query.js';
import { toSummary } from './sqlite-mail-reads.js';
import type { SearchQueue } from './search-queue.js';
import { BUDGET_SPENT, createSearcher } from './search-sql.js';
import { startSearchThread } from './search-thread.js';

export type MailSearch = Pick<MailStore, 'searchMails'> & { close(): Promise<void> };

export function sqliteMailSearch(db: Database.Database, file: string, searchQueue: SearchQueue, budgetMs?: number): MailSearch {
  const searchThread = file === ':memory:' ? undefined : startSearchThread(file, { budgetMs });
  const searchHere = searchThread ? undefined : createSearcher(db);
  const budget = budgetMs ?? SEARCH_BUDGET_MS;
  const searchInMemory = (addressId: number, search: ParsedSearch, limit: number, offset: number) => {
    try {
      return searchHere!(addressId, search, limit, offset, budget);
    } catch (err) {
      throw err instanceof Error && err.message.includes(BUDGET_SPENT) ? searchOverBudget(budget) : err;
    }
  };
  return {
    async searchMails(addressId, query, limit, offset) {
      const search = toParsedSearch(query);
      if (search.terms.length === 0) return { results: [], count: 0 };
      // Mail delivered since the last batch is indexed first, so a search finds every mail stored.
      await searchQueue.catchUp();
      const page = searchThread ? await searchThread.search(addressId, search, limit, offset) : searchInMemory(addressId, search, limit, offset);
      return { results: page.rows.map(toSummary), count: page.count };
    },
    close: async () => searchThread?.close(),
  };
}
