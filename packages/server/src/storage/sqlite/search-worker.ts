// The search thread of search-thread.ts: its own read-only connection to the database,
// one search at a time, so a search never holds the server's event loop however long
// the index takes (docs/decisions.md "Search"). A statement that runs past its budget
// stops itself (search_budget() in search-sql.ts) and is answered as such.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { ParsedSearch } from '../search-query.js';
import { BUDGET_SPENT, createSearcher } from './search-sql.js';

export interface SearchRequest {
  id: number;
  addressId: number;
  search: ParsedSearch;
  limit: number;
  offset: number;
  budgetMs: number;
}

export type SearchReply = { id: number; rows: unknown[]; count: number } | { id: number; error: 'budget' | string };

const { file } = workerData as { file: string };
const db = new Database(file, { readonly: true, fileMustExist: true });
// A writer never blocks a reader in WAL mode; this covers a checkpoint's brief lock of the WAL index.
db.pragma('busy_timeout = 1000');
db.pragma('cache_size = -4096');
const search = createSearcher(db);

parentPort!.on('message', (message: SearchRequest | 'close') => {
  if (message === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  let reply: SearchReply;
  try {
    const page = search(message.addressId, message.search, message.limit, message.offset, message.budgetMs);
    reply = { id: message.id, rows: page.rows, count: page.count };
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    reply = { id: message.id, error: text.includes(BUDGET_SPENT) ? 'budget' : text };
  }
  parentPort!.postMessage(reply);
});
parentPort!.postMessage('ready');
