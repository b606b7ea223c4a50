// SQLite backend: one file, WAL journal, synchronous transactions. A commit has
// returned before insertMails resolves, so SMTP answers 250 only for stored mail;
// with synchronous=FULL (the default) the WAL holding that commit has also been
// synced to disk (off the event loop, wal-sync.ts), so the mail survives a power
// loss, not only a crash of the process.
import { type MailRecord, type SessionRecord, type Store } from '../store.js';
import { PART_BYTES } from '../parts.js';
import { createSearchQueue } from './search-queue.js';
import { openSqliteConnection, unlessBusy } from './sqlite-connection.js';
import { sqliteAddressStore } from './sqlite-addresses.js';
import { sqliteMailReads, SUMMARY_COLUMNS, toSummary } from './sqlite-mail-reads.js';
import { sqliteMailSearch } from './sqlite-mail-search.js';
import { sqliteMailWrites } from './sqlite-mail-writes.js';
import { sqliteOperatorStore } from './sqlite-operator.js';
import { sqliteDomainPoolStore } from './sqlite-domain-pool.js';
import { sqliteParseOutcomeStore } from './sqlite-parse-outcomes.js';
import { sqlitePasswordStore } from './sqlite-passwords.js';
import { sqlitePurgeStore } from './sqlite-purge.js';
import { sqliteRefusalStore } from './sqlite-refusals.js';
import { sqliteReportSummaryStore } from './sqlite-report-summaries.js';
import { sqliteSandboxStore } from './sqlite-sandboxes.js';
import { sqliteSessionStore } from './sqlite-sessions.js';
import { sqliteTagStore } from './sqlite-tags.js';
import { sqliteWebhookStore } from './sqlite-webhooks.js';

/** Messages and attachments above this size are stored in parts of this size (their own row holds the first; storage/parts.ts). */
export const RAW_PART_BYTES = PART_BYTES;

export interface SqliteOptions {
  /** FULL: every commit is on disk before the store reports it. NORMAL: survives a crash of the process, not of the machine. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long after a delivery its words reach the search index (search-queue.ts); a search never waits for it. */
  searchIndexDelayMs?: number;
  /** How long one search may run before it is stopped (search-query.ts SEARCH_BUDGET_MS). */
  searchBudgetMs?: number;
}

/** The store: one connection (sqlite-connection.ts) shared by each role's statements (one file per role). */
export function openSqliteStore(file: string, options: SqliteOptions = {}): Store {
  const { db, durable, afterSync, closeThreads } = openSqliteConnection(file, options.synchronous ?? 'FULL');
  // Each stored mail's words, indexed for search after its delivery (search-queue.ts).
  const searchQueue = createSearchQueue(db, { delayMs: options.searchIndexDelayMs, unlessBusy });
  const search = sqliteMailSearch(db, file, searchQueue, options.searchBudgetMs);
  const { flush, ...mailWrites } = sqliteMailWrites(db, afterSync, durable, searchQueue);
  const q = {
    ping: db.prepare('SELECT 1').pluck(),
    // Changes only when another connection commits (https://sqlite.org/pragma.html#pragma_data_version).
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
  };
  // PRAGMA data_version takes the WAL read lock (system calls), so it is not free.
  let mark: number | undefined;
  const forgetMark = () => {
    mark = undefined;
  };

  return {
    kind: 'sqlite',
    ...sqliteAddressStore(db, afterSync),
    ...sqliteMailReads(db),
    ...mailWrites,
    searchMails: search.searchMails,
    ...sqliteSessionStore(db, afterSync),
    ...sqlitePurgeStore(db, afterSync),
    ...sqliteOperatorStore(db, afterSync),
    ...sqliteDomainPoolStore(db, afterSync),
    ...sqlitePasswordStore(db, afterSync),
    ...sqliteSandboxStore(db, afterSync),
    ...sqliteTagStore(db, afterSync),
    ...sqliteParseOutcomeStore(db, afterSync, { columns: SUMMARY_COLUMNS, of: toSummary }),
    ...sqliteReportSummaryStore(db, afterSync),
    ...sqliteWebhookStore(db, afterSync),
    ...sqliteRefusalStore(db, afterSync),
    externalWriteMark() {
      // Read once per turn of the event loop and shared by the requests handled in it:
      // each such request arrived before the turn began, so before the read.
      if (mark === undefined) {
        mark = q.dataVersion.get() as number;
        setImmediate(forgetMark);
      }
      return mark;
    },
    async ping() {
      q.ping.get();
    },
    async close() {
      if (!db.open) return;
      flush();
      searchQueue.close();
      await search.close();
      await closeThreads();
      db.close();
    },
  };
}

export type { SessionRecord, MailRecord };
