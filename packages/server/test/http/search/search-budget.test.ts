// A search past its time budget is stopped and answered as a 503 with Retry-After
// (docs/security.md "Search"): on SQLite by the search thread's own check on every
// candidate row, on PostgreSQL by statement_timeout. The store answers the next search.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { AppError } from '../../../src/domain/errors.js';
import { openPostgresStore } from '../../../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { MAX_WAITING_SEARCHES } from '../../../src/storage/sqlite/search-thread.js';
import type { Store } from '../../../src/storage/store.js';
import { tmp } from '../../helpers/harness.js';
import { PG_URL, skipUnless } from '../../helpers/services.js';
import { newMail } from '../../helpers/store-contract.js';

const pgSkip = skipUnless('postgres');
const MAILS = 2000;
/** A scan of every mail's metadata (no word narrows it). */
const COSTLY = '-from:nobody -subject:nothing is:unread';

async function fill(store: Store): Promise<number> {
  const a = await store.createAddress(`budget-${randomBytes(4).toString('hex')}@example.com`, Date.now());
  assert.ok(a);
  const preview = 'lorem ipsum dolor sit amet '.repeat(60);
  for (let c = 0; c < MAILS; c += 200) {
    await store.insertMails(
      Array.from({ length: 200 }, (_, i) =>
        newMail(a, Date.now() + c + i, {
          metadata: JSON.stringify({ subject: `mail ${c + i}`, from: { name: 'Sender', address: 's@example.org' }, to: [], preview, attachments: [] }),
          searchText: `mail number ${c + i}`,
        }),
      ),
    );
  }
  return a.id;
}

async function assertOverBudget(search: Promise<unknown>, seconds: number): Promise<void> {
  await assert.rejects(search, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.code, 'unavailable');
    assert.equal(err.retryAfterSeconds, 1);
    assert.match(err.message, new RegExp(`longer than its ${seconds} s budget and was stopped`));
    return true;
  });
}

describe('search budget', { timeout: 120_000 }, () => {
  it('sqlite: a search past its budget is stopped on the search thread (unavailable, Retry-After 1); with the default budget the same search is answered', async () => {
    const dir = tmp('temp-inbox-search-budget-');
    try {
      const spent = openSqliteStore(join(dir, 'x.sqlite'), { searchBudgetMs: 0 });
      let addressId: number;
      try {
        addressId = await fill(spent);
        await assertOverBudget(spent.searchMails(addressId, COSTLY, 10, 0), 0);
        await assertOverBudget(spent.searchMails(addressId, 'mail number', 10, 0), 0);
      } finally {
        await spent.close();
      }
      const store = openSqliteStore(join(dir, 'x.sqlite'));
      try {
        assert.equal((await store.searchMails(addressId, COSTLY, 10, 0)).count, MAILS);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`sqlite: past ${MAX_WAITING_SEARCHES} searches waiting for the thread, a search is refused at once (unavailable, Retry-After 1)`, async () => {
    const dir = tmp('temp-inbox-search-waiting-');
    const store = openSqliteStore(join(dir, 'x.sqlite'));
    try {
      const addressId = await fill(store);
      const all = await Promise.allSettled(Array.from({ length: MAX_WAITING_SEARCHES + 10 }, () => store.searchMails(addressId, 'mail number', 10, 0)));
      const refused = all.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.ok(refused.length >= 9, `${refused.length} refused`);
      for (const r of refused) {
        assert.ok(r.reason instanceof AppError && r.reason.code === 'unavailable' && r.reason.retryAfterSeconds === 1, String(r.reason));
        assert.match(r.reason.message, new RegExp(`${MAX_WAITING_SEARCHES} searches are already waiting`));
      }
      assert.ok(all.some((r) => r.status === 'fulfilled'));
      assert.equal((await store.searchMails(addressId, 'mail number', 10, 0)).count, MAILS, 'answered again once the queue is short');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('postgres: a search past its budget is cancelled by statement_timeout (unavailable, Retry-After 1); the pool answers the next one', { skip: pgSkip }, async () => {
    const schema = `t_${process.pid}_search_budget_${randomBytes(4).toString('hex')}`;
    const store = await openPostgresStore(PG_URL, { schema, searchBudgetMs: 1 });
    try {
      const addressId = await fill(store);
      await assertOverBudget(store.searchMails(addressId, COSTLY, 10, 0), 0.001);
      assert.equal((await store.listMails(addressId, 1, 0)).count, MAILS, 'the connection is usable afterwards');
    } finally {
      await store.close();
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
