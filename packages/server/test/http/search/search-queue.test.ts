// SQLite's search index is written after the delivery, in batches (search-queue.ts):
// a delivery queues its mail's words in search_pending, in its own transaction. These
// check that nothing is found later than before (a search indexes what is pending
// first), that the queue drains by itself, that a mail deleted while queued is never
// indexed, and that what one connection left queued is indexed by the next.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import type { AddressRecord, Store } from '../../../src/storage/store.js';
import { newMail } from '../../helpers/store-contract.js';

const NEVER = 3_600_000;
const mail = (to: AddressRecord, searchText: string) => newMail(to, Date.now(), { searchText });

describe('sqlite: the search index is written after the delivery', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  const fileOf = () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-search-queue-'));
    dirs.push(dir);
    return join(dir, 'x.sqlite');
  };
  const open = (file: string, searchIndexDelayMs: number) => {
    const store = openSqliteStore(file, { searchIndexDelayMs });
    stores.push(store);
    return store;
  };
  /** What another connection sees: the queue's length, and the mails the index holds for a word of an address. */
  const read = <T>(file: string, query: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true });
    try {
      return query(db);
    } finally {
      db.close();
    }
  };
  const pending = (file: string) => read(file, (db) => db.prepare('SELECT count(*) FROM search_pending').pluck().get() as number);
  const indexed = (file: string, addressId: number, word: string) =>
    read(file, (db) => db.prepare('SELECT rowid FROM mail_search WHERE mail_search MATCH ? ORDER BY rowid').pluck().all(`"z${addressId}z${word}"`) as number[]);
  const until = async (what: string, ok: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > end) assert.fail(`timed out waiting until ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('a delivery only queues its words; the queue drains into the index by itself within the delay', async () => {
    const file = fileOf();
    const store = open(file, 50);
    const a = (await store.createAddress('a@example.com', Date.now()))!;
    const [id] = await store.insertMails([mail(a, 'Hello marmalade')]);
    assert.equal(pending(file), 1, 'queued in the delivery');
    assert.deepEqual(indexed(file, a.id, 'marmalade'), [], 'not yet in the index');
    await until('the queue is empty', () => pending(file) === 0);
    assert.deepEqual(indexed(file, a.id, 'marmalade'), [id]);
    assert.deepEqual(indexed(file, a.id, 'hello'), [id], 'words are folded to lower case when indexed');
  });

  it('a search finds a mail that is still queued (it indexes the queue first)', async () => {
    const file = fileOf();
    const store = open(file, NEVER);
    const a = (await store.createAddress('a@example.com', Date.now()))!;
    const b = (await store.createAddress('b@example.com', Date.now()))!;
    const [m1] = await store.insertMails([mail(a, 'your code marmalade')]);
    await store.insertMails([mail(b, 'marmalade too')]);
    assert.equal(pending(file), 2);
    const found = await store.searchMails(a.id, 'marm', 10, 0);
    assert.deepEqual(
      found.results.map((r) => r.id),
      [m1],
      "only the address's own mail",
    );
    assert.equal(found.count, 1);
    assert.equal(pending(file), 0, 'the whole queue was indexed, every address');
    assert.equal((await store.searchMails(b.id, 'too', 10, 0)).count, 1);
  });

  it('a search indexes a queue longer than one batch (256) before it answers', async () => {
    const file = fileOf();
    const store = open(file, NEVER);
    const a = (await store.createAddress('a@example.com', Date.now()))!;
    await store.insertMails(Array.from({ length: 600 }, (_, i) => mail(a, `marmalade n${i}`)));
    assert.equal(pending(file), 600);
    const found = await store.searchMails(a.id, 'marmalade', 10, 0);
    assert.equal(found.count, 600);
    assert.equal(found.results.length, 10);
    assert.equal(pending(file), 0);
  });

  it('a mail deleted, soft-deleted or purged while queued leaves the queue and is never indexed', async () => {
    const file = fileOf();
    const store = open(file, NEVER);
    const a = (await store.createAddress('a@example.com', Date.now()))!;
    const gone = (await store.createAddress('gone@example.com', Date.now()))!;
    const kept = mail(a, 'marmalade kept');
    const soft = mail(a, 'marmalade soft');
    const [keptId] = await store.insertMails([kept]);
    await store.insertMails([soft]);
    await store.insertMails([mail(gone, 'marmalade gone')]);
    const old = newMail(a, Date.now() - 10 * 86_400_000, { searchText: 'marmalade old' });
    await store.insertMails([old]);
    assert.equal(pending(file), 4);
    assert.equal(await store.softDeleteMail(a.id, soft.uuid), true);
    assert.equal(await store.deleteAddress(gone.id), true);
    await store.purge({ mailBefore: Date.now() - 86_400_000, addressBefore: 0, sessionBefore: 0 });
    assert.equal(pending(file), 1, 'only the kept mail is still queued');
    const found = await store.searchMails(a.id, 'marmalade', 10, 0);
    assert.deepEqual(
      found.results.map((r) => r.id),
      [keptId],
    );
    assert.deepEqual(indexed(file, a.id, 'marmalade'), [keptId], 'the index holds the kept mail alone');
    assert.deepEqual(indexed(file, gone.id, 'marmalade'), []);
  });

  it('what one connection left queued, the next one to open the file indexes at once, in batches', async () => {
    const file = fileOf();
    const first = open(file, NEVER);
    const a = (await first.createAddress('a@example.com', Date.now()))!;
    // More than one batch (256), each delivery its own transaction as SMTP makes them.
    const ids: number[] = [];
    for (let i = 0; i < 600; i++) ids.push(...(await first.insertMails([mail(a, `marmalade n${i}`)])));
    await first.close();
    assert.equal(pending(file), 600, 'closing leaves the queue for the next start');
    open(file, NEVER);
    await until('the queue is empty', () => pending(file) === 0);
    assert.deepEqual(indexed(file, a.id, 'marmalade'), ids);
    assert.deepEqual(indexed(file, a.id, 'n599'), [ids[599]]);
  });

  it("a search while another connection holds the write lock waits for it, and the event loop is free meanwhile", async () => {
    const file = fileOf();
    const store = open(file, NEVER);
    const a = (await store.createAddress('a@example.com', Date.now()))!;
    const [id] = await store.insertMails([mail(a, 'marmalade')]);
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const search = store.searchMails(a.id, 'marmalade', 10, 0).finally(() => (settled = true));
    // Timers run while the search waits: the wait is not a block of the event loop.
    let ticks = 0;
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 20));
      ticks++;
    }
    assert.equal(settled, false, 'the search waits while the lock is held');
    assert.equal(ticks, 10);
    other.exec('COMMIT');
    other.close();
    assert.deepEqual(
      (await search).results.map((r) => r.id),
      [id],
    );
  });
});
