// The admin's per-domain figures in the store, on SQLite and PostgreSQL: mails counted at
// delivery per hour, recipient domain and sender domain (a subdomain of a pool domain under
// the pool domain), kept after the mail is deleted, read by window; addresses per domain,
// counted as they are made and deleted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMAIN_COUNT_HOURS, HOUR_MS } from '../../src/storage/domain-counts.js';
import type { DomainMailCount } from '../../src/storage/operator-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { postgresStoreInOwnSchema } from '../helpers/pg-store.js';
import { skipUnless } from '../helpers/services.js';
import { address, newMail, T0 } from '../helpers/store-fixtures.js';

type Opened = { store: Store; cleanup: () => Promise<void> };

const sorted = (rows: DomainMailCount[]) => [...rows].sort((a, b) => `${a.domain} ${a.senderDomain}`.localeCompare(`${b.domain} ${b.senderDomain}`));

function cases(kind: string, open: () => Promise<Opened>, skip: string | false) {
  describe(`${kind}: per-domain figures`, { skip }, () => {
    it('counts each mail under its hour, domain and sender domain, and keeps the count after deletion', async () => {
      const { store, cleanup } = await open();
      try {
        await store.addPoolDomain({ domain: 'pool.test', subdomains: true, addedAt: T0 });
        const a = await address(store, 'a@pool.test');
        const sub = await address(store, 'b@k3x9.pool.test');
        const other = await address(store, 'c@other.test');
        const now = T0 + 10 * 24 * HOUR_MS;
        await store.insertMails([
          newMail(a, now - 2 * HOUR_MS, { source: 'x@Shop.Example' }),
          newMail(sub, now - 2 * HOUR_MS, { source: 'y@shop.example' }),
          newMail(other, now - 2 * HOUR_MS, { source: '' }),
        ]);
        const [old] = await store.insertMails([newMail(a, now - 3 * 24 * HOUR_MS, { source: 'z@news.example' })]);
        assert.ok(old);
        const mail = await store.insertMails([newMail(a, now - 30 * 24 * HOUR_MS, { source: 'z@news.example' })]);
        assert.equal(mail.length, 1);
        await store.clearMails(a.id);

        const week = await store.domainMailCounts(now - 7 * 24 * HOUR_MS, now - 24 * HOUR_MS);
        assert.deepEqual(sorted(week), [
          { domain: 'other.test', senderDomain: '', mails: 1, recent: 1 },
          { domain: 'pool.test', senderDomain: 'news.example', mails: 1, recent: 0 },
          { domain: 'pool.test', senderDomain: 'shop.example', mails: 2, recent: 2 },
        ]);
        const month = await store.domainMailCounts(now - 31 * 24 * HOUR_MS, now - 24 * HOUR_MS);
        assert.equal(month.find((r) => r.senderDomain === 'news.example')?.mails, 2);
        assert.deepEqual(await store.domainMailCounts(now, now), [], 'nothing from the hour after the last mail');

        const addresses = [...(await store.addressesPerDomain())].sort((x, y) => x.domain.localeCompare(y.domain));
        assert.deepEqual(addresses, [
          { domain: 'other.test', addresses: 1 },
          { domain: 'pool.test', addresses: 2 },
        ]);
        // Counted as they come and go: a subdomain's address is taken back from its pool domain even once the pool has no such domain.
        await store.deletePoolDomain('pool.test');
        assert.ok(await store.deleteAddress(sub.id));
        await address(store, 'd@pool.test');
        assert.ok(await store.deleteAddress(other.id));
        assert.deepEqual([...(await store.addressesPerDomain())].sort((x, y) => x.domain.localeCompare(y.domain)), [{ domain: 'pool.test', addresses: 2 }]);
      } finally {
        await cleanup();
      }
    });

    it('sums concurrent deliveries and prunes hours past the kept window', async () => {
      const { store, cleanup } = await open();
      try {
        const a = await address(store, 'a@busy.test');
        const b = await address(store, 'b@busy.test');
        const start = T0;
        await store.insertMails([newMail(a, start, { source: 's@old.example' })]);
        await Promise.all(Array.from({ length: 20 }, (_, i) => store.insertMails([newMail(i % 2 ? a : b, start + HOUR_MS, { source: 's@busy.example' })])));
        const counts = await store.domainMailCounts(start, start + HOUR_MS);
        assert.deepEqual(sorted(counts), [
          { domain: 'busy.test', senderDomain: 'busy.example', mails: 20, recent: 20 },
          { domain: 'busy.test', senderDomain: 'old.example', mails: 1, recent: 0 },
        ]);
        // A delivery in a later hour removes the hours older than the kept window.
        const later = start + (DOMAIN_COUNT_HOURS + 1) * HOUR_MS + HOUR_MS / 2;
        await store.insertMails([newMail(a, later, { source: 's@new.example' })]);
        assert.deepEqual(
          (await store.domainMailCounts(0, 0)).map((r) => r.senderDomain).sort(),
          ['busy.example', 'new.example'],
          'the first hour is gone, the second is still within the window',
        );
      } finally {
        await cleanup();
      }
    });
  });
}

cases(
  'sqlite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-domain-stats-'));
    const store = openSqliteStore(join(dir, 'x.sqlite'));
    return {
      store,
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  false,
);
cases('postgres', () => postgresStoreInOwnSchema('ds'), skipUnless('postgres'));
