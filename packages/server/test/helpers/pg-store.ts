// A PostgreSQL store in a schema of its own (openPostgresStore creates and migrates
// it), dropped again by cleanup: one per contract case, so cases never see each other.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/store.js';
import { PG_URL } from './services.js';

let counter = 0;

export async function postgresStoreInOwnSchema(prefix: string): Promise<{ store: Store; cleanup: () => Promise<void> }> {
  const schema = `${prefix}_${process.pid}_${++counter}_${randomBytes(4).toString('hex')}`;
  const store = await openPostgresStore(PG_URL, { schema });
  return {
    store,
    cleanup: async () => {
      await store.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
