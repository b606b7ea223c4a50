// Another connection holding SQLite's write lock (a tool, a second process) makes the
// store's writes wait, but never with the event loop held: they try again between
// short waits (storage/sqlite/sqlite-connection.ts unlessBusy) and go through as soon as
// the lock is released.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { tmp } from '../helpers/harness.js';

describe('sqlite: another connection holds the write lock', () => {
  it('deliveries and other writes wait with the event loop free, and complete once it is released', async () => {
    const dir = tmp('temp-inbox-busy-');
    const file = join(dir, 'x.sqlite');
    const store = openSqliteStore(file);
    const other = new Database(file);
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      other.exec('BEGIN IMMEDIATE');
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const mail = { uuid: randomUUID(), addressId: a.id, address: a.address, source: 's@x', messageId: '<m@x>', metadata: '{}', trace: Buffer.alloc(0), body: { raw: Buffer.from('Subject: x\r\n\r\nx'), attachments: [] }, createdAt: Date.now() };
      let inserted = false;
      let created = false;
      const insert = store.insertMails([mail]).then((ids) => ((inserted = true), ids));
      const create = store.createAddress('b@example.com', Date.now()).then((r) => ((created = true), r));
      // Held for a second: nothing completes, and the loop keeps turning.
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(inserted, false, 'the delivery waits for the lock');
      assert.equal(created, false, 'the address waits for the lock');
      other.exec('ROLLBACK');
      const [ids, b] = await Promise.all([insert, create]);
      delay.disable();
      assert.equal(ids.length, 1);
      assert.equal(b?.address, 'b@example.com');
      assert.equal((await store.listMails(a.id, 10, 0)).count, 1);
      const worstMs = delay.max / 1e6;
      assert.ok(worstMs < 200, `the event loop was held ${worstMs.toFixed(0)} ms at once (a lock wait inside a statement held it 5 s)`);
    } finally {
      other.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
