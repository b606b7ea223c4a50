// The search index as an older server left it is migrated to per-address words
// (docs/decisions.md "Search"): migration 0011 reads SQLite's words (0006) back from the
// contentless FTS5 index (fts5vocab) and writes them anew, and rewrites each PostgreSQL
// tsvector's lexemes; afterwards the same searches find the same mail, another address's mail is
// not found, deleted mail is not counted, and new mail is indexed the new way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { postgresMigrations } from '../../src/storage/postgres/migrate.js';
import { sqliteMigrations } from '../../src/storage/sqlite/migrate.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { PG_URL, skipUnless } from '../helpers/services.js';

const pgSkip = skipUnless('postgres');

/** The schema version before the per-address words (0011), on either backend. */
const BEFORE = 10;

const TEXTS = ['Your verification code is 482913', 'Your order has shipped', 'Newsletter about nothing'];

/** What the migrated store finds for address 1 (three mails, the second soft-deleted) and address 2 (one mail). */
async function assertSearches(store: Store): Promise<void> {
  const found = async (addressId: number, q: string, limit = 10) => {
    const r = await store.searchMails(addressId, q, limit, 0);
    return { count: r.count, uuids: r.results.map((m) => m.uuid) };
  };
  assert.deepEqual(await found(1, 'verif'), { count: 1, uuids: ['m-1'] });
  assert.deepEqual(await found(1, 'your'), { count: 1, uuids: ['m-1'] }, 'the deleted mail is not found');
  assert.deepEqual(await found(1, 'news', 1), { count: 1, uuids: ['m-3'] });
  assert.deepEqual(await found(1, 'your', 1), { count: 1, uuids: ['m-1'] }, 'nor counted past a full page');
  assert.deepEqual(await found(1, 'anoth'), { count: 0, uuids: [] }, "not the other address's word");
  assert.deepEqual(await found(2, 'anoth'), { count: 1, uuids: ['m-4'] });
  assert.deepEqual(await found(2, 'your'), { count: 0, uuids: [] });
  // New mail is indexed the new way and found with the old.
  await store.insertMails([
    { uuid: 'm-5', addressId: 1, address: 'one@example.com', source: '', messageId: '', metadata: '{}', trace: Buffer.alloc(0), body: { raw: Buffer.from('x'), attachments: [] }, createdAt: 5, searchText: 'Your second code' },
  ]);
  assert.deepEqual(await found(1, 'your', 1), { count: 2, uuids: ['m-5'] });
}

describe('search index migration', () => {
  it(`sqlite: v${BEFORE}'s index is migrated to per-address words`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-search-index-'));
    const file = join(dir, 'x.sqlite');
    try {
      const db = new Database(file);
      for (const m of sqliteMigrations().slice(0, BEFORE)) db.exec(m.sql);
      db.pragma(`user_version = ${BEFORE}`);
      db.prepare("INSERT INTO addresses (address, created_at) VALUES ('one@example.com', 1), ('two@example.com', 1)").run();
      const mail = db.prepare("INSERT INTO mails (uuid, address_id, address, source, message_id, metadata, raw, created_at, deleted_at) VALUES (?, ?, '', '', '', '{}', x'00', ?, ?)");
      // As 0006 indexed them: the address's word, then the words.
      const index = db.prepare('INSERT INTO mail_search (rowid, words) VALUES (?, ?)');
      const rows: [string, number, string, number | null][] = [
        ['m-1', 1, TEXTS[0]!, null],
        ['m-2', 1, TEXTS[1]!, 9],
        ['m-3', 1, TEXTS[2]!, null],
        ['m-4', 2, 'Another address', null],
      ];
      for (const [uuid, addressId, text, deletedAt] of rows) {
        const id = Number(mail.run(uuid, addressId, Number(uuid.slice(2)), deletedAt).lastInsertRowid);
        index.run(id, `zzaddress${addressId}zz ${text.toLowerCase()}`);
      }
      db.close();
      const store = openSqliteStore(file);
      try {
        await assertSearches(store);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`postgres: v${BEFORE}'s tsvectors are migrated to per-address lexemes`, { skip: pgSkip }, async () => {
    const schema = `t_${process.pid}_search_index_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA "${schema}"; SET search_path TO "${schema}"`);
      await admin.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
      for (const m of postgresMigrations().slice(0, BEFORE)) {
        await admin.query(m.sql);
        await admin.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)', [m.version, m.name]);
      }
      await admin.query("INSERT INTO addresses (address, created_at) VALUES ('one@example.com', 1), ('two@example.com', 1)");
      const rows: [string, number, string, number | null][] = [
        ['m-1', 1, TEXTS[0]!, null],
        ['m-2', 1, TEXTS[1]!, 9],
        ['m-3', 1, TEXTS[2]!, null],
        ['m-4', 2, 'Another address', null],
      ];
      // As 0006 indexed them: to_tsvector('simple', the words).
      for (const [uuid, addressId, text, deletedAt] of rows) {
        await admin.query(
          "INSERT INTO mails (uuid, address_id, address, source, message_id, metadata, raw, created_at, deleted_at, search) VALUES ($1, $2, '', '', '', '{}', '\\x00', $3, $4, to_tsvector('simple', $5))",
          [uuid, addressId, Number(uuid.slice(2)), deletedAt, text.toLowerCase()],
        );
      }
      const store = await openPostgresStore(PG_URL, { schema });
      try {
        await assertSearches(store);
        const { rows: lexemes } = await admin.query<{ s: string }>("SELECT search::text AS s FROM mails WHERE uuid = 'm-4'");
        assert.equal(lexemes[0]!.s, "'z2zaddress' 'z2zanother'");
      } finally {
        await store.close();
      }
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
