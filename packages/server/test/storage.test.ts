// Runs the one storage contract against every backend: SQLite always, and
// PostgreSQL when one is reachable (see helpers/services.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { storeContract } from '../src/storage/contract/store-contract.js';
import { openPostgresStore } from '../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { PG_URL, serviceAvailable } from './helpers/services.js';

storeContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-store-'));
  const store = openSqliteStore(join(dir, 'x.sqlite'));
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

if (await serviceAvailable('postgres')) {
  let counter = 0;
  storeContract('postgres', async () => {
    // A schema of its own per case; openPostgresStore creates and migrates it.
    const schema = `t_${process.pid}_${++counter}_${randomBytes(4).toString('hex')}`;
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
  });
}
