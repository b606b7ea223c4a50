import { join } from 'node:path';
import type { StorageConfig } from '../config/index.js';
import { backupSqlite, BackupError, type BackupResult } from './sqlite/backup.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { createCachingStore, type VersionedStore } from './caching-store.js';
import type { Store } from './store.js';

export type { Store } from './store.js';

/** The SQLite database's file name in DATA_DIR. */
export const SQLITE_FILE = 'temp-inbox.sqlite';
export type { VersionedStore } from './caching-store.js';
export { BackupError, type BackupResult } from './sqlite/backup.js';

/**
 * Opens the backend the configuration selects (SQLite in DATA_DIR unless
 * DATABASE_URL is set), behind the caching store.
 */
export async function createStore(
  config: Pick<StorageConfig, 'dataDir' | 'databaseUrl' | 'databaseSchema' | 'sqliteSynchronous'>,
  events: { onDatabaseError?: (err: Error) => void } = {},
): Promise<VersionedStore> {
  return createCachingStore(await openBackend(config, events));
}

async function openBackend(
  config: Pick<StorageConfig, 'dataDir' | 'databaseUrl' | 'databaseSchema' | 'sqliteSynchronous'>,
  events: { onDatabaseError?: (err: Error) => void },
): Promise<Store> {
  if (config.databaseUrl) {
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore(config.databaseUrl, {
      ...(config.databaseSchema === undefined ? {} : { schema: config.databaseSchema }),
      ...(events.onDatabaseError ? { onIdleError: events.onDatabaseError } : {}),
    });
  }
  return openSqliteStore(join(config.dataDir, SQLITE_FILE), { synchronous: config.sqliteSynchronous });
}

/**
 * An online backup of the configured store to `target` (SQLite only: a PostgreSQL
 * database is backed up with its own tools, pg_dump or a base backup).
 */
export function backupStore(config: Pick<StorageConfig, 'dataDir' | 'databaseUrl'>, target: string): BackupResult {
  if (config.databaseUrl) throw new BackupError('DATABASE_URL is set: back up PostgreSQL with pg_dump or a base backup (see docs/deploy.md "Backups").');
  return backupSqlite(join(config.dataDir, SQLITE_FILE), target);
}
