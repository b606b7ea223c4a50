// The PostgreSQL pool of a store: every connection set to the store's schema before it is
// handed out, the schema migrated (migrate.ts), and the transaction every multi-statement
// operation runs in, on one pooled client.
import pg from 'pg';
import { migrate, quoteIdent } from './migrate.js';

export type Queryable = Pick<pg.PoolClient, 'query'>;

/** Runs `fn` in a transaction on one pooled client: committed when it resolves, rolled back when it throws. */
export type Transaction = <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/** Runs `fn` in a transaction on one client of `pool`: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    // A client whose rollback fails is in an unknown state: destroyed, not reused.
    await client.query('ROLLBACK').catch((rollbackErr: Error) => {
      broken = rollbackErr;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

export const query = <R extends pg.QueryResultRow>(db: Queryable, text: string, values: unknown[] = []) => db.query<R>(text, values);

export interface PoolOptions {
  schema?: string;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  /** Called when an idle pooled connection fails (the pool replaces it). */
  onIdleError?: (err: Error) => void;
}

/** The pool, its schema migrated; ended again when the migration fails. */
export async function openPostgresPool(url: string, options: PoolOptions): Promise<{ pool: pg.Pool; transaction: Transaction }> {
  const { schema } = options;
  const setPath = schema === undefined ? undefined : `SET search_path TO ${quoteIdent(schema)}`;
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    application_name: options.applicationName ?? 'temp-inbox',
    // Awaited by the pool before a new connection is handed out; when it fails
    // the connection is closed and the checkout fails, so no query can ever run
    // against the wrong schema.
    onConnect: setPath === undefined ? undefined : async (client) => void (await client.query(setPath)),
  });
  // An idle client losing its connection must not crash the process; the pool
  // drops it and the next checkout opens a fresh one. The caller logs it.
  pool.on('error', (err) => options.onIdleError?.(err));

  const transaction: Transaction = (fn) => inTransaction(pool, fn);

  try {
    await migrate(pool, schema);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return { pool, transaction };
}
