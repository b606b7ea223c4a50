// PostgreSQL backend for multi-node deployments. Same semantics as the SQLite
// backend: every multi-statement operation is one transaction on one pooled
// client, and insertMails resolves only after COMMIT, so SMTP answers 250 only
// for stored mail. BIGINT columns (ids, ms timestamps, counts) arrive from pg as
// strings and are converted to numbers here.
import type { Store } from '../store.js';
import { openPostgresPool } from './postgres-connection.js';
import { postgresAddressStore } from './postgres-addresses.js';
import { M_COLUMNS, postgresMailReads, toSummary } from './postgres-mail-reads.js';
import { postgresMailSearch } from './postgres-mail-search.js';
import { postgresMailWrites } from './postgres-mail-writes.js';
import { postgresOperatorStore } from './postgres-operator.js';
import { postgresDomainPoolStore } from './postgres-domain-pool.js';
import { postgresParseOutcomeStore } from './postgres-parse-outcomes.js';
import { postgresPasswordStore } from './postgres-passwords.js';
import { postgresPurgeStore } from './postgres-purge.js';
import { postgresRefusalStore } from './postgres-refusals.js';
import { postgresReportSummaryStore } from './postgres-report-summaries.js';
import { postgresSandboxStore } from './postgres-sandboxes.js';
import { postgresSessionStore } from './postgres-sessions.js';
import { postgresTagStore } from './postgres-tags.js';
import { postgresWebhookStore } from './postgres-webhooks.js';

export interface PostgresOptions {
  schema?: string;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  /** Called when an idle pooled connection fails (the pool replaces it). */
  onIdleError?: (err: Error) => void;
  /** How long one search may run before PostgreSQL cancels it (search-query.ts SEARCH_BUDGET_MS). */
  searchBudgetMs?: number;
}

/** The store: one pool (postgres-connection.ts) shared by each role's queries (one file per role). */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<Store> {
  const { pool, transaction } = await openPostgresPool(url, options);
  let closed = false;
  return {
    kind: 'postgres',
    ...postgresAddressStore(pool, transaction),
    ...postgresMailReads(pool),
    ...postgresMailWrites(pool, transaction),
    ...postgresMailSearch(transaction, options.searchBudgetMs),
    ...postgresSessionStore(pool, transaction),
    ...postgresPurgeStore(transaction),
    ...postgresOperatorStore(pool),
    ...postgresDomainPoolStore(pool, transaction),
    ...postgresPasswordStore(pool),
    ...postgresSandboxStore(pool, transaction),
    ...postgresTagStore(pool, transaction),
    ...postgresParseOutcomeStore(pool, { columns: M_COLUMNS, of: toSummary }),
    ...postgresReportSummaryStore(transaction),
    ...postgresWebhookStore(pool),
    ...postgresRefusalStore(pool),
    // Other nodes write to the same database; there is no cheap way to know when.
    externalWriteMark() {
      return undefined;
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
