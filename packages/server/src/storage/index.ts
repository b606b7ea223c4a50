import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { createCachingStore, type VersionedStore } from './caching-store.js';
import type { Store } from './store.js';

export type { Store } from './store.js';
export type { VersionedStore } from './caching-store.js';

/**
 * Opens the backend the configuration selects (SQLite in DATA_DIR unless
 * DATABASE_URL is set), behind the caching store.
 */
export async function createStore(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'databaseSchema' | 'sqliteSynchronous'>,
  events: { onDatabaseError?: (err: Error) => void } = {},
): Promise<VersionedStore> {
  return createCachingStore(await openBackend(config, events));
}

async function openBackend(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'databaseSchema' | 'sqliteSynchronous'>,
  events: { onDatabaseError?: (err: Error) => void },
): Promise<Store> {
  if (config.databaseUrl) {
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore(config.databaseUrl, {
      ...(config.databaseSchema === undefined ? {} : { schema: config.databaseSchema }),
      ...(events.onDatabaseError ? { onIdleError: events.onDatabaseError } : {}),
    });
  }
  return openSqliteStore(join(config.dataDir, 'temp-inbox.sqlite'), { synchronous: config.sqliteSynchronous });
}
