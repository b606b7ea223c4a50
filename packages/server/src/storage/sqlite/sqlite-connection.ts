// The SQLite connection of a store: the file (created 0600), WAL journal, the pragmas,
// the schema migrated, the WAL synced off the event loop and checkpointed by a thread
// of its own; and how a write is made (retried while another connection holds the lock,
// resolved once durable).
import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { startCheckpointer } from './checkpointer.js';
import { migrate } from './migrate.js';
import { createWalSync } from './wal-sync.js';

/** How long a statement of the serving connection waits for another connection's lock, holding the event loop. */
const BUSY_BLOCK_MS = 20;
/** How long a write keeps trying, between waits that leave the event loop free, before it fails. */
export const BUSY_GIVE_UP_MS = 5000;
export const BUSY_RETRY_MS = 20;

export const isBusy = (err: unknown) => typeof (err as { code?: unknown })?.code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test((err as { code: string }).code);

/** Runs a write, and again after short waits (the event loop free meanwhile) while the database is locked by another connection. */
export async function unlessBusy<T>(write: () => T): Promise<T> {
  const until = Date.now() + BUSY_GIVE_UP_MS;
  for (;;) {
    try {
      return write();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= until) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
}

/** A write of the store: retried off the event loop while another connection holds the lock, resolved with its result once its commit is durable. */
export type SqliteWrite = <T>(write: () => T) => Promise<T>;

export interface SqliteConnection {
  db: Database.Database;
  /** Resolves once every commit made so far is as durable as configured. */
  durable: () => Promise<void>;
  afterSync: SqliteWrite;
  /** Stops the WAL's sync and checkpoint threads (before the connection closes). */
  closeThreads: () => Promise<void>;
}

export function openSqliteConnection(file: string, synchronous: 'FULL' | 'NORMAL'): SqliteConnection {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database file's mode.
    closeSync(openSync(file, 'a', 0o600));
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // https://sqlite.org/pragma.html#pragma_synchronous: in WAL mode FULL syncs the WAL at
  // every commit, on the committing thread. The connection commits with NORMAL and
  // FULL's sync is made by walSync, off the event loop (wal-sync.ts); deliveries
  // that arrive together share one commit (see sqlite-mail-writes.ts), commits made during a
  // sync share the next.
  const full = synchronous === 'FULL' && file !== ':memory:';
  db.pragma('synchronous = NORMAL');
  // better-sqlite3 sets a 16 MiB page cache. A large message's pages pass through it on
  // their way to the WAL, so that much memory was taken by one 10 MB message and kept;
  // 4 MiB holds the indexes' hot pages (docs/benchmarks-journal.md "Memory of one large message").
  db.pragma('cache_size = -4096');
  const walSync = full ? createWalSync(`${file}-wal`) : undefined;
  const durable = (): Promise<void> => walSync?.sync() ?? Promise.resolve();
  // Each write in a transaction of its own (a savepoint inside one already open): a
  // statement with RETURNING read by .get() commits when better-sqlite3 resets it, which
  // ignores what the reset says, so on a full disk the row came back while its commit had
  // failed; an explicit COMMIT throws instead.
  const transaction = db.transaction((write: () => unknown) => write());
  const inTransaction = <T>(write: () => T): T => transaction(write) as T;
  const afterSync: SqliteWrite = async (write) => {
    const value = await unlessBusy(() => inTransaction(write));
    await durable();
    return value;
  };
  db.pragma('foreign_keys = ON');
  // Opening waits for another connection's lock as long as it takes to start; serving
  // never holds the event loop that long (see unlessBusy).
  db.pragma(`busy_timeout = ${BUSY_GIVE_UP_MS}`);
  migrate(db);
  db.pragma(`busy_timeout = ${BUSY_BLOCK_MS}`);
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(db, file);
  const closeThreads = async () => {
    await walSync?.close();
    await checkpointer?.close();
  };
  return { db, durable, afterSync, closeThreads };
}
