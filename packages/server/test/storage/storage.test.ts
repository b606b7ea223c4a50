// Runs the one storage contract against every backend: SQLite always, and
// PostgreSQL when one is reachable (see helpers/services.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { newMail, storeContract } from '../helpers/store-contract.js';
import { postgresStoreInOwnSchema } from '../helpers/pg-store.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { sqliteMigrations } from '../../src/storage/sqlite/migrate.js';
import { openSqliteStore, RAW_PART_BYTES } from '../../src/storage/sqlite/sqlite-store.js';
import { PG_URL, skipUnless } from '../helpers/services.js';
import { countGarbage, GARBAGE_BYTES } from '../../src/memory/young-garbage.js';

/** Collects what is counted as garbage so far, so that what a test measures next is its own. */
const nothingCounted = () => countGarbage(GARBAGE_BYTES);

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

// Without PostgreSQL every case below is registered as skipped, with the reason.
const pgSkip = skipUnless('postgres');
storeContract('postgres', () => postgresStoreInOwnSchema('t'), { skip: pgSkip });

describe('postgres: a pooled connection that dies while idle', () => {
  it('is reported to the caller, and the next query runs on a fresh connection', { skip: pgSkip }, async () => {
    const schema = `t_${process.pid}_idle_${randomBytes(4).toString('hex')}`;
    const applicationName = `temp-inbox-test-${randomBytes(4).toString('hex')}`;
    const errors: Error[] = [];
    const store = await openPostgresStore(PG_URL, { schema, applicationName, onIdleError: (err) => errors.push(err) });
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await store.ping();
      const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
      assert.ok(killed.rowCount! >= 1, 'the idle pooled connection was found');
      const deadline = Date.now() + 5_000;
      while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(errors.length >= 1, 'the idle error reached the caller');
      await store.ping();
    } finally {
      await store.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});

describe('postgres: large messages and attachments are stored in parts', () => {
  it('of RAW_PART_BYTES, the first in the row itself; read back whole; gone with their mail', { skip: pgSkip }, async () => {
    const schema = `t_${process.pid}_parts_${randomBytes(4).toString('hex')}`;
    const store = await openPostgresStore(PG_URL, { schema });
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      const raw = randomBytes(2 * RAW_PART_BYTES + 5);
      const attachments = [randomBytes(RAW_PART_BYTES + 1), randomBytes(10)];
      const mail = newMail(a, Date.now(), { trace: Buffer.from('T\r\n'), body: { raw, attachments } });
      const { uuid } = mail;
      await store.insertMails([mail]);
      const sizes = async (sql: string) => (await admin.query(sql.replaceAll('$s', `"${schema}"`))).rows;
      assert.deepEqual(await sizes('SELECT parts, octet_length(data) AS first FROM $s.bodies'), [{ parts: 3, first: RAW_PART_BYTES }]);
      assert.deepEqual(await sizes('SELECT part, octet_length(data) AS bytes FROM $s.body_parts ORDER BY part'), [
        { part: 1, bytes: RAW_PART_BYTES },
        { part: 2, bytes: 5 },
      ]);
      assert.deepEqual(await sizes('SELECT idx, parts, octet_length(content) AS first FROM $s.body_attachments ORDER BY idx'), [
        { idx: 0, parts: 2, first: RAW_PART_BYTES },
        { idx: 1, parts: 1, first: 10 },
      ]);
      assert.deepEqual(await sizes('SELECT idx, part, octet_length(data) AS bytes FROM $s.body_attachment_parts'), [{ idx: 0, part: 1, bytes: 1 }]);
      assert.ok((await store.getMail(a.id, uuid))?.raw.equals(Buffer.concat([Buffer.from('T\r\n'), raw])));
      for (const [i, want] of attachments.entries()) assert.ok((await store.getAttachment(a.id, uuid, i))?.content?.equals(want), `attachment ${i}`);
      assert.equal(await store.deleteAddress(a.id), true);
      for (const table of ['bodies', 'body_parts', 'body_attachments', 'body_attachment_parts']) {
        assert.deepEqual(await sizes(`SELECT count(*)::int AS n FROM $s.${table}`), [{ n: 0 }], table);
      }
    } finally {
      await store.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});

describe('postgres: what storing and reading a large message leaves behind', () => {
  const held = () => process.memoryUsage().arrayBuffers;
  /** Runs `work` and returns the most `measure` rose above its value before, read at every turn of the event loop meanwhile (a turn per query). */
  const peakDuring = async (measure: () => number, work: () => Promise<unknown>): Promise<number> => {
    nothingCounted();
    const before = measure();
    let most = 0;
    let working = true;
    const sample = () => {
      most = Math.max(most, measure() - before);
      if (working) setImmediate(sample);
    };
    sample();
    await work().finally(() => (working = false));
    return most;
  };

  it("node-postgres's copies of its parts are collected as it is stored, not left for V8 to find", { skip: pgSkip }, async () => {
    const { store, cleanup } = await postgresStoreInOwnSchema('t');
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      const raw = randomBytes(16 * 1024 * 1024);
      const most = await peakDuring(held, () => store.insertMails([newMail(a, Date.now(), { raw })]));
      // Each 512 KiB part is copied twice (32 MiB in all); left alone, V8 keeps those
      // buffers until its young generation fills, which a few large objects never make it.
      assert.ok(most <= 2 * GARBAGE_BYTES + 4 * RAW_PART_BYTES, `up to ${most} bytes held while 16 MiB was stored`);
    } finally {
      await cleanup();
    }
  });

  it('read back, it is held once, and the hex its parts arrive as is collected as they come', { skip: pgSkip }, async () => {
    const { store, cleanup } = await postgresStoreInOwnSchema('t');
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      const mail = newMail(a, Date.now(), { raw: randomBytes(16 * 1024 * 1024) });
      await store.insertMails([mail]);
      // Buffers and V8's heap both: the socket reads are buffers, the hex strings are heap.
      const inUse = () => held() + process.memoryUsage().heapUsed;
      let got: Buffer | undefined;
      const most = await peakDuring(inUse, async () => (got = (await store.getMail(a.id, mail.uuid))?.raw));
      assert.ok(got?.equals(mail.body.raw), 'read back whole');
      // Beyond the message (held once: its whole is made first and each part copied in):
      // node-postgres's receive buffer, grown to hold one row (a part as hex, 2 MiB); the
      // part in flight as socket reads, hex text and bytes (five times its size); what is
      // counted but not collected yet (under GARBAGE_BYTES); and what the last collection
      // left for V8 to free on another thread, which a busy machine may not have done yet
      // (as much again). 7-8 MB here; 21-44 MB without the count.
      const beyond = most - mail.body.raw.length;
      const allowed = 2 * 1024 * 1024 + 5 * RAW_PART_BYTES + 2 * (GARBAGE_BYTES + 5 * RAW_PART_BYTES);
      assert.ok(beyond <= allowed, `up to ${beyond} bytes beyond the message held while it was read`);
    } finally {
      await cleanup();
    }
  });
});

describe('sqlite: large messages are stored in parts', () => {
  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-parts-'));
    const file = join(dir, 'x.sqlite');
    return { dir, file, store: openSqliteStore(file) };
  };
  const rows = (file: string, table: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    } finally {
      db.close();
    }
  };

  const partRows = (file: string) => rows(file, 'body_parts');

  it('round-trips sizes around the part boundary byte-exactly, with the expected number of parts', async () => {
    const { dir, file, store } = open();
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      let expectedParts = 0;
      for (const size of [RAW_PART_BYTES - 1, RAW_PART_BYTES, RAW_PART_BYTES + 1, 3 * RAW_PART_BYTES, 3 * RAW_PART_BYTES + 5]) {
        const raw = randomBytes(size);
        const m = newMail(a, Date.now(), { raw });
        await store.insertMails([m]);
        expectedParts += Math.ceil(size / RAW_PART_BYTES) - 1;
        const got = await store.getMail(a.id, m.uuid);
        assert.ok(got?.raw.equals(raw), `size ${size}`);
      }
      assert.equal(partRows(file), expectedParts);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('read back, a message is held once: each part is copied into the whole as it is read, then collected', async () => {
    const { dir, store } = open();
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      const m = newMail(a, Date.now(), { raw: randomBytes(16 * 1024 * 1024) });
      await store.insertMails([m]);
      nothingCounted();
      await new Promise((r) => setTimeout(r, 100)); // V8 may free what it collected on another thread
      const before = process.memoryUsage().arrayBuffers;
      const got = (await store.getMail(a.id, m.uuid))?.raw;
      // Measured at once: without, its 32 parts (16 MiB) are all still held. With, what
      // was counted since the last collection (under GARBAGE_BYTES), and what the
      // collections left for V8 to free on another thread, which a busy machine may not
      // have done yet (1-3 MiB in all here).
      const beyond = process.memoryUsage().arrayBuffers - before - (got?.length ?? 0);
      assert.ok(got?.equals(m.body.raw), 'read back whole');
      assert.ok(beyond <= 3 * GARBAGE_BYTES, `${beyond} bytes held beyond the message once it was read`);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parts go with their mail: purge of a soft-deleted mail and deletion of an address', async () => {
    const { dir, file, store } = open();
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      const b = (await store.createAddress('b@example.com', Date.now()))!;
      const ma = newMail(a, Date.now(), { raw: randomBytes(2 * RAW_PART_BYTES + 1) });
      const mb = newMail(b, Date.now(), { raw: randomBytes(2 * RAW_PART_BYTES + 1) });
      await store.insertMails([ma, mb]);
      assert.equal(partRows(file), 4);
      assert.equal(await store.softDeleteMail(a.id, ma.uuid), true);
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      assert.equal(partRows(file), 2);
      assert.equal(await store.deleteAddress(b.id), true);
      assert.equal(partRows(file), 0);
      assert.equal(rows(file, 'bodies'), 0);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a large attachment is stored in parts, each no larger than a part, and they go with their body', async () => {
    const { dir, file, store } = open();
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      const attachments = [randomBytes(3 * RAW_PART_BYTES + 9), randomBytes(RAW_PART_BYTES), randomBytes(10)];
      const m = newMail(a, Date.now(), { body: { raw: randomBytes(100), attachments } });
      await store.insertMails([m]);
      const db = new Database(file, { readonly: true });
      try {
        assert.deepEqual(db.prepare('SELECT idx, parts, length(content) AS first FROM body_attachments ORDER BY idx').all(), [
          { idx: 0, parts: 4, first: RAW_PART_BYTES },
          { idx: 1, parts: 1, first: RAW_PART_BYTES },
          { idx: 2, parts: 1, first: 10 },
        ]);
        assert.deepEqual(db.prepare('SELECT part, length(data) AS bytes FROM body_attachment_parts ORDER BY part').all(), [
          { part: 1, bytes: RAW_PART_BYTES },
          { part: 2, bytes: RAW_PART_BYTES },
          { part: 3, bytes: 9 },
        ]);
      } finally {
        db.close();
      }
      for (const [i, want] of attachments.entries()) assert.ok((await store.getAttachment(a.id, m.uuid, i))?.content?.equals(want), `attachment ${i}`);
      await store.deleteAddress(a.id);
      assert.deepEqual([rows(file, 'bodies'), rows(file, 'body_attachments'), rows(file, 'body_attachment_parts')], [0, 0, 0]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a message to several addresses is stored once, and its body goes with the last mail that refers to it', async () => {
    const { dir, file, store } = open();
    try {
      const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => store.createAddress(`${n}@example.com`, Date.now())));
      const body = { raw: randomBytes(2 * RAW_PART_BYTES + 1), attachments: [randomBytes(1000)] };
      const mails = [a!, b!, c!].map((to) => newMail(to, Date.now(), { trace: Buffer.from(`Received: for ${to.address}\r\n`), body }));
      await store.insertMails(mails);
      assert.deepEqual([rows(file, 'bodies'), partRows(file), rows(file, 'body_attachments')], [1, 2, 1], 'one body, its parts and attachment once');
      await store.softDeleteMail(a!.id, mails[0]!.uuid);
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      await store.deleteAddress(b!.id);
      assert.equal(rows(file, 'bodies'), 1, 'still referred to by c');
      assert.ok((await store.getMail(c!.id, mails[2]!.uuid))?.raw.equals(Buffer.concat([mails[2]!.trace, body.raw])));
      await store.clearMails(c!.id);
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      assert.deepEqual([rows(file, 'bodies'), partRows(file), rows(file, 'body_attachments')], [0, 0, 0], 'freed with the last reference');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a database of schema version 1 is migrated and its mail still reads back', async () => {
    const { dir, file, store } = open();
    await store.close();
    try {
      // Rebuild the file at version 1 with one mail, as an older server left it.
      rmSync(file);
      const db = new Database(file);
      db.exec(sqliteMigrations()[0]!.sql);
      db.pragma('user_version = 1');
      db.prepare("INSERT INTO addresses (address, created_at) VALUES ('old@example.com', 1)").run();
      db.prepare("INSERT INTO mails (uuid, address_id, address, source, message_id, metadata, raw, created_at) VALUES ('u-1', 1, 'old@example.com', '', '', '{}', ?, 1)").run(Buffer.from('Subject: old\r\n\r\nx\r\n'));
      db.close();
      const migrated = openSqliteStore(file);
      try {
        assert.equal((await migrated.getMail(1, 'u-1'))?.raw.toString(), 'Subject: old\r\n\r\nx\r\n');
        assert.deepEqual(await migrated.addressUsage(1), { count: 1, bytes: 19 }, 'its size was filled in by the migration');
        assert.deepEqual(await migrated.getAttachment(1, 'u-1', 0), { metadata: '{}', content: null, legacy: true });
      } finally {
        await migrated.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqlite: WAL checkpoints run off the event loop', () => {
  it('the serving connection never checkpoints; the worker moves committed pages into the database file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-ckpt-'));
    const file = join(dir, 'x.sqlite');
    const store = openSqliteStore(file);
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      // Let the first checkpoint (of the schema's pages) pass, then measure from a quiet
      // file. The worker may take a while to start on a loaded machine: wait for it.
      const started = Date.now() + 10_000;
      while (statSync(file).size <= 4096 && Date.now() < started) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      const before = statSync(file).size;
      assert.ok(before > 4096, 'the worker checkpointed the schema');
      // ~1,200 pages, past the 1,000 at which SQLite would checkpoint inside the commit,
      // in one turn of the event loop (one group commit), so the worker's timer cannot
      // land in the middle of the measurement.
      await Promise.all(
        Array.from({ length: 300 }, () =>
          store.insertMails([newMail(a, Date.now(), { raw: randomBytes(16_000) })]),
        ),
      );
      // (Whether the commit itself checkpointed cannot be told from the file's size: the
      // worker's timer may run between the commit and this line, while the WAL is synced.)
      // The commits may be checkpointed in more than one pass: wait for all of them.
      const deadline = Date.now() + 5_000;
      while (statSync(file).size < before + 300 * 16_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(statSync(file).size >= before + 300 * 16_000, `the worker checkpointed (${before} -> ${statSync(file).size} bytes)`);
    } finally {
      const t = Date.now();
      await store.close();
      assert.ok(Date.now() - t < 2_000, 'close stops the worker promptly');
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('a store closed before its checkpointing thread has started keeps its writes, leaves no WAL, and opens again at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-ckpt-early-'));
    const file = join(dir, 'x.sqlite');
    try {
      for (let round = 0; round < 3; round++) {
        const store = openSqliteStore(file);
        const a = (await store.createAddress(`early${round}@example.com`, Date.now()))!;
        await store.insertMails([newMail(a, Date.now(), { raw: randomBytes(20_000) })]);
        await store.close();
        assert.equal(existsSync(`${file}-wal`), false, 'the last connection checkpointed and removed the WAL');
      }
      // A thread left starting would open the file when it got there (a new WAL with it).
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(existsSync(`${file}-wal`), false, 'no checkpointing thread outlived its store');
      const db = new Database(file, { readonly: true });
      try {
        assert.deepEqual(db.prepare('SELECT address FROM addresses ORDER BY id').pluck().all(), ['early0@example.com', 'early1@example.com', 'early2@example.com']);
        assert.equal(db.prepare('SELECT count(*) FROM mails').pluck().get(), 3);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  /** A store in a directory of its own, and a second connection that reads how often the worker started the WAL. */
  const walStore = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    const file = join(dir, 'x.sqlite');
    const store = openSqliteStore(file);
    const reader = new Database(file, { readonly: true });
    const restarts = () => (reader.prepare('SELECT count FROM wal_restarts').pluck().get() as number | undefined) ?? 0;
    return { dir, file, store, reader, restarts };
  };
  it('the worker starts each new WAL itself after a checkpoint that emptied it, and an idle server does nothing', async () => {
    const { dir, store, reader, restarts } = walStore('temp-inbox-walrestart-');
    const until = async (ok: () => boolean, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      assert.ok(ok(), what);
    };
    try {
      await store.createAddress('a@example.com', Date.now());
      await until(() => restarts() >= 1, 'the worker started the WAL after its first checkpoint');
      // Its first round may have come before the address's commit: let the next one pass.
      await new Promise((r) => setTimeout(r, 600));
      const first = restarts();
      // Idle: nothing else commits, so no checkpoint and no restart (the restart's own
      // commit does not count as new work). Four rounds of the worker's timer.
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(restarts(), first, 'an idle server makes no restart');
      // A commit from the serving connection: checkpointed, then the WAL started again.
      await store.createAddress('b@example.com', Date.now());
      await until(() => restarts() === first + 1, `one restart after one commit (${restarts()} after ${first})`);
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(restarts(), first + 1, 'and only one');
    } finally {
      reader.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('under steady writes the WAL is still started again every round, so its file stays small', async () => {
    const { dir, file, store, reader, restarts } = walStore('temp-inbox-walsteady-');
    try {
      const a = (await store.createAddress('a@example.com', Date.now()))!;
      await new Promise((r) => setTimeout(r, 600));
      const first = restarts();
      // Four writers, each committing its next mail as soon as the last is durable. Measured
      // from the first time the worker starts the WAL again under them (on a loaded machine
      // its first round can take seconds, the WAL growing meanwhile), for 2 s and 4 MB at
      // least: eight rounds of the worker, none of which finds a moment without a new commit.
      let written = 0;
      let largestWal = 0;
      const started = Date.now();
      let steady: { at: number; written: number; restarts: number; largestWal: number } | undefined;
      // The bytes written when each restart after the first steady one was first seen: the
      // rounds' sizes, which a loaded machine makes larger (its worker runs less often).
      const marks: number[] = [];
      const writing = () => {
        if (!steady) {
          const now = restarts();
          if (now === first) return Date.now() - started < 10_000;
          steady = { at: Date.now(), written, restarts: now, largestWal: Math.max(largestWal, statSync(`${file}-wal`).size) };
          marks.push(written);
        }
        const seen = restarts() - steady.restarts;
        while (marks.length <= seen) marks.push(written);
        const ms = Date.now() - steady.at;
        return ms < 2_000 || (ms < 10_000 && written - steady.written <= 4_000_000);
      };
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (writing()) {
            const raw = randomBytes(8_000);
            await store.insertMails([newMail(a, Date.now(), { raw })]);
            written += raw.length;
            largestWal = Math.max(largestWal, statSync(`${file}-wal`).size);
          }
        }),
      );
      assert.ok(steady, `the WAL was never started again in 10 s of steady writes (${written} bytes written)`);
      const rounds = restarts() - steady.restarts;
      const took = Date.now() - steady.at;
      const writtenSteady = written - steady.written;
      assert.ok(writtenSteady > 4_000_000, `the writers kept the store busy (${writtenSteady} bytes in ${took} ms)`);
      assert.ok(rounds >= 4, `the WAL was started again in most rounds (${rounds} of ${Math.floor(took / 250)})`);
      // Each round's commits append their pages to the WAL (about three times the mail's
      // bytes here), so a WAL that is never started again grows by near 3x what is written
      // (268 MB for 96 MB before the RESTART checkpoint); one restarted every round holds
      // about a round's worth, so its file (the largest it has been) grows by no more than
      // what the largest two consecutive rounds wrote, times those three. The bound follows
      // the rounds, not the clock: on a loaded machine the worker's rounds are fewer and
      // larger, and the WAL rightly larger with them.
      marks.push(written);
      let largestTwoRounds = 0;
      for (let i = 2; i < marks.length; i++) largestTwoRounds = Math.max(largestTwoRounds, marks[i]! - marks[i - 2]!);
      const grew = largestWal - steady.largestWal;
      assert.ok(
        grew <= 3.5 * largestTwoRounds,
        `the WAL stayed small (its file grew ${grew} bytes, to ${largestWal}, while ${writtenSteady} were written in ${rounds} rounds, at most ${largestTwoRounds} in two)`,
      );
      // Once quiet, the next start of the WAL cuts a file longer than journal_size_limit back to it.
      const after = restarts();
      const deadline = Date.now() + 10_000;
      while (restarts() === after && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(statSync(`${file}-wal`).size <= 32 * 1024 * 1024, `the WAL was cut back to 32 MiB (${statSync(`${file}-wal`).size} bytes)`);
    } finally {
      reader.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
