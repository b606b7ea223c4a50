// A database an older server left (test/fixtures/upgrade/: SQLite at user_version 18,
// PostgreSQL at schema_migrations version 14 in its own old numbering) is opened by this
// code: it is upgraded in place to the common numbering (docs/deploy.md "Upgrades"), every
// row is still there and still reads back, and the schema is the one a fresh database gets.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { FIXTURE_SCHEMA, POSTGRES_FIXTURE, SQLITE_FIXTURE, T0 } from '../fixtures/upgrade/make-fixtures.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { BEFORE_COMMON_NUMBERING, postgresMigrations } from '../../src/storage/postgres/migrate.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { sqliteMigrations } from '../../src/storage/sqlite/migrate.js';
import type { Store } from '../../src/storage/store.js';
import { PG_URL, skipUnless } from '../helpers/services.js';

const pgSkip = skipUnless('postgres');
const uuid = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;

/** What make-fixtures.ts stored, read back through the Store; then a new mail is stored and found. */
async function assertFixtureData(store: Store): Promise<void> {
  const alice = (await store.findAddress('alice@example.com'))!;
  const bob = (await store.findAddress('bob@example.com'))!;
  assert.deepEqual([alice.createdAt, bob.createdAt], [T0, T0]);
  assert.equal(await store.claimAddress('bob@example.com').then((a) => a?.id), bob.id, 'bob was unclaimed');
  const list = await store.listMails(alice.id, 10, 0);
  assert.deepEqual(list.results.map((m) => [m.uuid, m.seen]), [[uuid(2), false], [uuid(1), true]], 'the soft-deleted mail stays out');
  const first = (await store.getMail(alice.id, uuid(1)))!;
  assert.equal(first.raw.toString(), 'Received: from fixture for <alice@example.com>\r\nSubject: Your code\r\n\r\nYour verification code is 123456\r\n');
  assert.equal((await store.getAttachment(alice.id, uuid(1), 0))?.content?.toString(), 'attachment one');
  assert.equal((await store.getMail(bob.id, uuid(3)))?.raw.toString(), 'Received: from fixture for <bob@example.com>\r\nSubject: News\r\n\r\nWeekly news for everyone\r\n', 'the shared body');
  assert.deepEqual([...(await store.mailTags(alice.id, [first.id]))], [[first.id, ['important']]]);
  assert.equal((await store.getMailHead(alice.id, uuid(1)))?.degradedView?.toString(), '{"degraded":true}');
  assert.deepEqual((await store.searchMails(alice.id, 'verification', 10, 0)).results.map((m) => m.uuid), [uuid(1)]);
  assert.deepEqual((await store.searchMails(alice.id, 'news', 10, 0)).results.map((m) => m.uuid), [uuid(2)]);
  assert.equal((await store.getSession('session-fixture'))?.activeAddressId, alice.id);
  assert.deepEqual((await store.listSessionAddresses('session-fixture')).map((a) => a.address), ['alice@example.com']);
  assert.equal((await store.getWebhook(alice.id))?.url, 'https://hooks.example.com/in');
  assert.equal((await store.getAddressPassword(alice.id))?.hash, '$scrypt$fixture');
  assert.deepEqual((await store.listBlocks()).map((b) => [b.kind, b.value]), [['sender', 'spam@example.net']]);
  assert.equal((await store.findSandbox('box'))?.address, 'box@sandbox.invalid');
  assert.deepEqual(await store.mailsPerDay(Math.floor(T0 / 86_400_000)), [{ day: Math.floor(T0 / 86_400_000), mails: 4 }]);
  // The admin's per-domain counts are filled from what the older server stored (migration 0024).
  assert.deepEqual([...(await store.addressesPerDomain())].sort((a, b) => a.domain.localeCompare(b.domain)), [
    { domain: 'example.com', addresses: 2 },
    { domain: 'sandbox.invalid', addresses: 1 },
  ]);
  assert.deepEqual(await store.domainMailCounts(T0, T0), [{ domain: 'example.com', senderDomain: 'example.org', mails: 4, recent: 4 }]);
  const claimed = await store.claimDeliveries({ owner: 'test', now: T0 + 60_000, leaseMs: 1000, limit: 10, busyWebhooks: [], operator: false });
  assert.deepEqual(claimed.map((d) => [d.mail.uuid, d.url]), [[uuid(1), 'https://hooks.example.com/in']], 'the queued webhook deliveries, one at a time');
  const body = { raw: Buffer.from('Subject: After\r\n\r\nupgraded\r\n'), attachments: [] };
  const trace = Buffer.alloc(0);
  await store.insertMails([{ uuid: uuid(5), addressId: alice.id, address: alice.address, source: '', messageId: '', metadata: '{}', trace, body, createdAt: T0 + 9, searchText: 'upgraded' }]);
  assert.deepEqual((await store.searchMails(alice.id, 'upgraded', 10, 0)).results.map((m) => m.uuid), [uuid(5)]);
}

/** A SQLite file's schema: every object's SQL, its whitespace made single spaces. */
function sqliteSchema(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
    return rows.map((r) => `${r.type} ${r.name} ${r.tbl_name}: ${(r.sql ?? '').replace(/\s+/g, ' ')}`);
  } finally {
    db.close();
  }
}

describe('upgrading a database of the release before the common numbering', () => {
  it('sqlite: user_version 18 is upgraded in place; the rows read back; the schema is a fresh one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-upgrade-'));
    try {
      const file = join(dir, 'old.sqlite');
      copyFileSync(SQLITE_FIXTURE, file);
      const before = new Database(file, { readonly: true });
      assert.equal(before.pragma('user_version', { simple: true }), 18, 'the fixture is as the release left it');
      before.close();
      const store = openSqliteStore(file);
      try {
        await assertFixtureData(store);
      } finally {
        await store.close();
      }
      const fresh = openSqliteStore(join(dir, 'fresh.sqlite'));
      await fresh.close();
      assert.deepEqual(sqliteSchema(file), sqliteSchema(join(dir, 'fresh.sqlite')));
      const after = new Database(file, { readonly: true });
      assert.equal(after.pragma('user_version', { simple: true }), sqliteMigrations().length);
      after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('postgres: schema_migrations 1-14 are translated once; the rows read back; the schema is a fresh one', { skip: pgSkip }, async () => {
    const tag = `${process.pid}_${randomBytes(4).toString('hex')}`;
    const [old, fresh] = [`t_upgrade_old_${tag}`, `t_upgrade_fresh_${tag}`];
    const dump = readFileSync(POSTGRES_FIXTURE, 'utf8');
    const oldApplied = new Map([...dump.matchAll(/schema_migrations VALUES \((\d+), (\d+)\)/g)].map((m) => [Number(m[1]), m[2]!]));
    assert.equal(oldApplied.size, 14, 'the fixture is as the release left it');
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query(dump.replaceAll(FIXTURE_SCHEMA, old));
      for (let open = 0; open < 2; open++) {
        const store = await openPostgresStore(PG_URL, { schema: old });
        try {
          if (open === 0) await assertFixtureData(store);
        } finally {
          await store.close();
        }
      }
      await (await openPostgresStore(PG_URL, { schema: fresh })).close();
      const history = (schema: string) => admin.query<{ version: number; name: string; applied_at: string }>(`SELECT version, name, applied_at FROM "${schema}".schema_migrations ORDER BY version`);
      const rows = (await history(old)).rows;
      assert.deepEqual(rows.map((r) => [r.version, r.name]), postgresMigrations().map((m) => [m.version, m.name]), 'every migration once, by its common number');
      assert.deepEqual(rows.map((r) => [r.version, r.name]), (await history(fresh)).rows.map((r) => [r.version, r.name]));
      for (const [oldVersion, at] of oldApplied) assert.equal(rows.find((r) => r.version === BEFORE_COMMON_NUMBERING[oldVersion - 1])?.applied_at, at, `old v${oldVersion} keeps its time`);
      assert.deepEqual(await postgresSchema(admin, old), await postgresSchema(admin, fresh));
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE; DROP SCHEMA IF EXISTS "${fresh}" CASCADE`);
      await admin.end();
    }
  });
});

/** A PostgreSQL schema as the catalog describes it: columns, indexes, constraints, triggers and functions (whitespace made single spaces), its name left out. */
async function postgresSchema(admin: pg.Client, schema: string): Promise<Record<string, string[]>> {
  const list = async (sql: string) => (await admin.query<{ d: string }>(sql, [schema])).rows.map((r) => r.d.replaceAll(`"${schema}".`, '').replaceAll(`${schema}.`, '').replace(/\s+/g, ' '));
  return {
    columns: await list(
      "SELECT concat_ws(' ', table_name, ordinal_position, column_name, data_type, is_nullable, column_default, is_identity, identity_generation) AS d FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
    ),
    indexes: await list('SELECT indexdef AS d FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname'),
    constraints: await list(
      'SELECT c.conrelid::regclass::text || \' \' || c.conname || \' \' || pg_get_constraintdef(c.oid) AS d FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 ORDER BY 1',
    ),
    triggers: await list('SELECT pg_get_triggerdef(t.oid) AS d FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY 1'),
    functions: await list('SELECT p.proname || \' \' || p.prosrc AS d FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1'),
  };
}
