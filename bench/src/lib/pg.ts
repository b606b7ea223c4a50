// The PostgreSQL the benches use when one is reachable: 127.0.0.1:5432/test, or
// BENCH_DATABASE_URL. Each bench keeps its tables in a schema of its own and drops it.
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';

// The user named in the URL: libpq's default (the login name) is not there when USER is unset.
export const PG_URL = process.env['BENCH_DATABASE_URL'] ?? `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;

export async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh schema name for one bench's tables (the server creates it). */
export function benchSchema(bench: string): string {
  return `bench_${bench}_${randomBytes(4).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
