// The caching store (storage/caching-store.ts): it passes the whole store
// contract over SQLite and PostgreSQL, and what it remembers is forgotten by
// every change that could make it wrong: a deletion or purge through it, another
// process's write, a deletion that lands while a look-up is in flight.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeContract } from '../helpers/store-contract.js';
import { createCachingStore, type VersionedStore } from '../../src/storage/caching-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { AddressRecord, NewMail, Store } from '../../src/storage/store.js';
import { skipUnless } from '../helpers/services.js';
import { postgresStoreInOwnSchema } from '../helpers/pg-store.js';

const T0 = 1_700_000_000_000;

storeContract('caching store over sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-cache-'));
  const store = createCachingStore(openSqliteStore(join(dir, 'x.sqlite')));
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// Without PostgreSQL its cases are registered as skipped, with the reason.
const pgSkip = skipUnless('postgres');
const postgresStore = () => postgresStoreInOwnSchema('c');

storeContract(
  'caching store over postgres',
  async () => {
    const inner = await postgresStore();
    return { store: createCachingStore(inner.store), cleanup: inner.cleanup };
  },
  { skip: pgSkip },
);

/** Counts the look-ups that reach the real store underneath (and can hold one back). */
function counted(inner: Store) {
  const calls = { getAddress: 0, findAddress: 0 };
  let gate: Promise<void> | undefined;
  const store: Store = {
    ...inner,
    kind: inner.kind,
    createAddress: (a, t, o) => inner.createAddress(a, t, o),
    claimAddress: (a) => inner.claimAddress(a),
    getAddress: async (id) => {
      calls.getAddress++;
      const r = await inner.getAddress(id);
      await gate;
      return r;
    },
    findAddress: async (a) => {
      calls.findAddress++;
      const r = await inner.findAddress(a);
      await gate;
      return r;
    },
    deleteAddress: (id) => inner.deleteAddress(id),
    insertMails: (m) => inner.insertMails(m),
    listMails: (a, l, o) => inner.listMails(a, l, o),
    getMail: (a, u) => inner.getMail(a, u),
    getAttachment: (a, u, i) => inner.getAttachment(a, u, i),
    addressUsage: (a) => inner.addressUsage(a),
    softDeleteMail: (a, u) => inner.softDeleteMail(a, u),
    setSeen: (a, u, s) => inner.setSeen(a, u, s),
    clearMails: (a) => inner.clearMails(a),
    purge: (c) => inner.purge(c),
    externalWriteMark: () => inner.externalWriteMark(),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return {
    store,
    calls,
    /** Look-ups started after this wait until the returned function is called. */
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

function mailTo(a: AddressRecord, uuid: string = randomUUID()): NewMail {
  return {
    uuid,
    addressId: a.id,
    address: a.address,
    source: 'sender@example.org',
    messageId: '<m@example.org>',
    metadata: JSON.stringify({ subject: 'x', attachments: [] }),
    trace: Buffer.alloc(0),
    body: { raw: Buffer.from('Subject: x\r\n\r\nhello\r\n'), attachments: [] },
    createdAt: T0 + 1,
  };
}

async function withSqlite(run: (ctx: { cache: VersionedStore; calls: { getAddress: number; findAddress: number }; hold: () => () => void; file: string }) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-cache-'));
  const file = join(dir, 'x.sqlite');
  const { store, calls, hold } = counted(openSqliteStore(file));
  const cache = createCachingStore(store);
  try {
    await run({ cache, calls, hold, file });
  } finally {
    await cache.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('caching store: what it remembers', () => {
  it('answers a repeated look-up by id or by name without reaching the store, and a delivery keeps it', async () => {
    await withSqlite(async ({ cache, calls }) => {
      const a = (await cache.createAddress('a@x.test', T0))!;
      assert.deepEqual(await cache.getAddress(a.id), a);
      assert.deepEqual(await cache.getAddress(a.id), a);
      assert.deepEqual(await cache.findAddress('a@x.test'), a);
      assert.deepEqual(await cache.findAddress('a@x.test'), a);
      assert.deepEqual(calls, { getAddress: 1, findAddress: 1 });
      await cache.insertMails([mailTo(a)]);
      assert.deepEqual(await cache.getAddress(a.id), a);
      assert.deepEqual(await cache.findAddress('a@x.test'), a);
      assert.deepEqual(calls, { getAddress: 1, findAddress: 1 }, 'a delivery leaves the address remembered');
    });
  });

  it('never remembers a miss: an address created after a failed look-up is found', async () => {
    await withSqlite(async ({ cache, calls }) => {
      assert.equal(await cache.findAddress('late@x.test'), undefined);
      const a = (await cache.createAddress('late@x.test', T0))!;
      assert.deepEqual(await cache.findAddress('late@x.test'), a);
      assert.equal(calls.findAddress, 2);
    });
  });

  it('forgets an address deleted through it, by id and by name, and finds its successor', async () => {
    await withSqlite(async ({ cache }) => {
      const a = (await cache.createAddress('a@x.test', T0))!;
      await cache.getAddress(a.id);
      await cache.findAddress('a@x.test');
      assert.equal(await cache.deleteAddress(a.id), true);
      assert.equal(await cache.getAddress(a.id), undefined);
      assert.equal(await cache.findAddress('a@x.test'), undefined);
      const b = (await cache.createAddress('a@x.test', T0 + 5))!;
      assert.notEqual(b.id, a.id);
      assert.deepEqual(await cache.findAddress('a@x.test'), b);
    });
  });

  it('forgets everything after a purge', async () => {
    await withSqlite(async ({ cache, calls }) => {
      const a = (await cache.createAddress('a@x.test', T0))!;
      await cache.getAddress(a.id);
      await cache.findAddress('a@x.test');
      await cache.purge({ mailBefore: 0, addressBefore: T0 + 1, sessionBefore: 0 });
      assert.equal(await cache.getAddress(a.id), undefined);
      assert.equal(await cache.findAddress('a@x.test'), undefined);
      assert.deepEqual(calls, { getAddress: 2, findAddress: 2 });
    });
  });

  it("forgets an address another process deleted (the store's external write mark moved)", async () => {
    await withSqlite(async ({ cache, file }) => {
      const a = (await cache.createAddress('a@x.test', T0))!;
      await cache.getAddress(a.id);
      await cache.findAddress('a@x.test');
      const other = openSqliteStore(file);
      try {
        assert.equal(await other.deleteAddress(a.id), true);
      } finally {
        await other.close();
      }
      assert.equal(await cache.getAddress(a.id), undefined);
      assert.equal(await cache.findAddress('a@x.test'), undefined);
    });
  });

  it('remembers nothing from a look-up during which the address was deleted', async () => {
    await withSqlite(async ({ cache, calls, hold }) => {
      const a = (await cache.createAddress('a@x.test', T0))!;
      const release = hold();
      const byName = cache.findAddress('a@x.test');
      const byId = cache.getAddress(a.id);
      await new Promise((r) => setImmediate(r));
      await cache.deleteAddress(a.id);
      release();
      assert.deepEqual(await byName, a, 'the look-up answers what it read');
      assert.deepEqual(await byId, a);
      assert.equal(await cache.findAddress('a@x.test'), undefined);
      assert.equal(await cache.getAddress(a.id), undefined);
      assert.deepEqual(calls, { getAddress: 2, findAddress: 2 });
    });
  });
});

describe('caching store: mail-set versions', () => {
  it('moves with every write to the address and only its own; reads leave it', async () => {
    await withSqlite(async ({ cache }) => {
      const a = (await cache.createAddress('a@x.test', T0))!;
      const b = (await cache.createAddress('b@x.test', T0))!;
      const seen = new Set<string>();
      const step = async (what: string, write: () => Promise<unknown>, moves = true) => {
        const before = cache.mailSetVersion(a.id);
        const other = cache.mailSetVersion(b.id);
        assert.ok(before !== undefined);
        seen.add(before);
        await write();
        const after = cache.mailSetVersion(a.id);
        if (moves) {
          assert.notEqual(after, before, `${what} moves the version`);
          assert.ok(!seen.has(after!), `${what}: a version is never reused`);
        } else assert.equal(after, before, `${what} leaves the version`);
        assert.equal(cache.mailSetVersion(b.id), other, `${what} leaves another address's version`);
      };
      const m = mailTo(a);
      await step('a delivery', () => cache.insertMails([m]));
      await step('a list', () => cache.listMails(a.id, 10, 0), false);
      await step('a read', () => cache.getMail(a.id, m.uuid), false);
      await step('marking a mail read', () => cache.setSeen(a.id, m.uuid, true));
      await step('marking it unread', () => cache.setSeen(a.id, m.uuid, false));
      await step('a deletion of one mail', () => cache.softDeleteMail(a.id, m.uuid));
      await step('a deletion of a mail that is gone', () => cache.softDeleteMail(a.id, m.uuid));
      await step('clearing the inbox', () => cache.clearMails(a.id));
      await step('a failed delivery (the commit may have happened)', () =>
        cache.insertMails([mailTo(a, m.uuid)]).then(
          () => assert.fail('a duplicate uuid is refused'),
          () => undefined,
        ),
      );
      await step('deleting the address', () => cache.deleteAddress(a.id));
    });
  });

  it('moves for every address after a purge and after another process writes', async () => {
    await withSqlite(async ({ cache, file }) => {
      const a = (await cache.createAddress('a@x.test', T0))!;
      const v1 = cache.mailSetVersion(a.id);
      await cache.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      const v2 = cache.mailSetVersion(a.id);
      assert.notEqual(v2, v1);
      const other = openSqliteStore(file);
      try {
        await other.createAddress('c@x.test', T0);
      } finally {
        await other.close();
      }
      assert.notEqual(cache.mailSetVersion(a.id), v2);
    });
  });

  it('over a store that cannot see other processes (PostgreSQL), remembers nothing and has no version', { skip: pgSkip }, async () => {
    const { store: inner, cleanup } = await postgresStore();
    const { store, calls } = counted(inner);
    const cache = createCachingStore(store);
    try {
      const a = (await cache.createAddress('a@x.test', T0))!;
      await cache.getAddress(a.id);
      await cache.getAddress(a.id);
      await cache.findAddress('a@x.test');
      await cache.findAddress('a@x.test');
      assert.deepEqual(calls, { getAddress: 2, findAddress: 2 });
      assert.equal(cache.mailSetVersion(a.id), undefined);
    } finally {
      await cleanup();
    }
  });
});
