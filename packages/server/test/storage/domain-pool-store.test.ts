// The domain pool's store (storage/domain-pool-store.ts, migration 0022) on SQLite and on
// PostgreSQL alike: seeded once per database (even when emptied since), added in order,
// changed with the state's time and retiredUntil moving only with the state, deleted, and a
// version that moves at every change, also when another connection (another node) makes it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { tmp } from '../helpers/harness.js';
import { PG_URL, skipUnless } from '../helpers/services.js';

const skipPg = skipUnless('postgres');

async function contract(store: Store, other: Store): Promise<void> {
  const v0 = await store.poolVersion();
  assert.equal(await store.seedPoolDomains([{ domain: 'a.test', subdomains: false }, { domain: 'b.test', subdomains: true }], 1000), true);
  assert.equal(await store.seedPoolDomains([{ domain: 'c.test', subdomains: false }], 2000), false, 'seeded once');
  const v1 = await other.poolVersion();
  assert.notEqual(v1, v0, 'the seed moved the version, as another connection sees it');
  assert.deepEqual(await other.listPoolDomains(), [
    { domain: 'a.test', state: 'active', subdomains: false, addedAt: 1000, stateChangedAt: 1000, retiredUntil: null },
    { domain: 'b.test', state: 'active', subdomains: true, addedAt: 1000, stateChangedAt: 1000, retiredUntil: null },
  ]);
  assert.equal(await store.addPoolDomain({ domain: 'a.test', subdomains: true, addedAt: 3000 }), undefined, 'a duplicate');
  assert.equal(await store.poolVersion(), v1, 'nothing changed, nothing moved');
  const added = await other.addPoolDomain({ domain: 'c.test', subdomains: false, addedAt: 3000 });
  assert.deepEqual(added, { domain: 'c.test', state: 'active', subdomains: false, addedAt: 3000, stateChangedAt: 3000, retiredUntil: null });
  const v2 = await store.poolVersion();
  assert.notEqual(v2, v1, "another connection's add moved it");

  const retired = await store.updatePoolDomain('a.test', { state: 'retired', at: 4000, retiredUntil: 9000 });
  assert.deepEqual(retired, { domain: 'a.test', state: 'retired', subdomains: false, addedAt: 1000, stateChangedAt: 4000, retiredUntil: 9000 });
  const same = await store.updatePoolDomain('a.test', { state: 'retired', subdomains: true, at: 5000, retiredUntil: 10_000 });
  assert.deepEqual(same, { ...retired, subdomains: true }, 'the same state again keeps its time and grace');
  const active = await store.updatePoolDomain('a.test', { state: 'active', at: 6000, retiredUntil: 11_000 });
  assert.deepEqual(active, { domain: 'a.test', state: 'active', subdomains: true, addedAt: 1000, stateChangedAt: 6000, retiredUntil: null });
  assert.equal(await store.updatePoolDomain('nowhere.test', { state: 'disabled', at: 1, retiredUntil: 1 }), undefined);
  assert.notEqual(await other.poolVersion(), v2, 'an update moved it');

  const v3 = await store.poolVersion();
  assert.equal(await store.deletePoolDomain('b.test'), true);
  assert.equal(await store.deletePoolDomain('b.test'), false);
  assert.notEqual(await other.poolVersion(), v3, 'a delete moved it');
  assert.deepEqual(
    (await other.listPoolDomains()).map((d) => d.domain),
    ['a.test', 'c.test'],
    'in the order added',
  );
  for (const d of ['a.test', 'c.test']) await store.deletePoolDomain(d);
  assert.equal(await store.seedPoolDomains([{ domain: 'z.test', subdomains: false }], 7000), false, 'an emptied pool is not seeded again');
  assert.deepEqual(await store.listPoolDomains(), []);
}

describe('domain pool store', () => {
  it('SQLite: the contract, with a second connection to the same file', async () => {
    const dir = tmp('temp-inbox-pool-');
    const file = join(dir, 'pool.sqlite');
    const store = openSqliteStore(file);
    const other = openSqliteStore(file);
    try {
      await contract(store, other);
    } finally {
      await other.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('PostgreSQL: the contract, with a second pool on the same schema (another node)', { skip: skipPg }, async () => {
    const schema = `pool_${process.pid}_${randomBytes(4).toString('hex')}`;
    const store = await openPostgresStore(PG_URL, { schema });
    const other = await openPostgresStore(PG_URL, { schema });
    try {
      await contract(store, other);
    } finally {
      await other.close();
      await store.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });
});
