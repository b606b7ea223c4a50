// The storage contract's tombstone cases (tombstone-store.ts; docs/decisions.md "Deleted
// address"), run by store-contract.ts against every backend: a deletion or a purge given a
// mark leaves its address's tombstone in the same transaction, a create given a check refuses
// a name a tombstone holds (and only while it holds it), and the operators' purge removes them.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import type { Store, TombstoneMark } from '../../src/storage/store.js';

type Case = [name: string, run: (store: Store) => Promise<void>];

const T0 = 1_700_000_000_000;
const FOREVER = Number.MIN_SAFE_INTEGER;
const SECRET = randomBytes(16);
const keyOf = (address: string) => createHmac('sha256', SECRET).update(address).digest('hex');
const mark = (at: number): TombstoneMark => ({ keyOf, at });
const unique = (label: string) => `${label}-${randomBytes(4).toString('hex')}@tomb.test`;

async function created(store: Store, address: string, at = T0) {
  const a = await store.createAddress(address, at);
  assert.ok(a, `could not create ${address}`);
  return a;
}

export const TOMBSTONE_CASES: Case[] = [
  [
    'tombstones: a deletion with a mark holds the name against a create with a check, for ever',
    async (s) => {
      const name = unique('gone');
      const a = await created(s, name);
      assert.equal(await s.deleteAddress(a.id, mark(T0 + 10)), true);
      assert.equal(await s.findAddress(name), undefined);
      assert.equal(await s.hasTombstone(keyOf(name), FOREVER), true);
      assert.equal(await s.createAddress(name, T0 + 20, { tombstone: { key: keyOf(name), since: FOREVER } }), undefined);
      assert.equal(await s.findAddress(name), undefined, 'the refused create left no address');
      // Another name is not held by it.
      const other = unique('other');
      assert.ok(await s.createAddress(other, T0 + 20, { tombstone: { key: keyOf(other), since: FOREVER } }));
    },
  ],
  [
    'tombstones: a tombstone older than the check\'s `since` no longer holds its name',
    async (s) => {
      const name = unique('ttl');
      const a = await created(s, name);
      await s.deleteAddress(a.id, mark(T0 + 100));
      assert.equal(await s.hasTombstone(keyOf(name), T0 + 100), true, 'held at exactly its time');
      assert.equal(await s.createAddress(name, T0 + 200, { tombstone: { key: keyOf(name), since: T0 + 100 } }), undefined);
      assert.equal(await s.hasTombstone(keyOf(name), T0 + 101), false);
      const again = await s.createAddress(name, T0 + 200, { tombstone: { key: keyOf(name), since: T0 + 101 } });
      assert.ok(again, 'past its time the name is free');
      // Deleted again: the tombstone is renewed to the new deletion's time.
      await s.deleteAddress(again.id, mark(T0 + 300));
      assert.equal(await s.hasTombstone(keyOf(name), T0 + 300), true);
    },
  ],
  [
    'tombstones: a deletion without a mark leaves none, and a live name is refused by the insert, not by a tombstone',
    async (s) => {
      const name = unique('plain');
      const a = await created(s, name);
      await s.deleteAddress(a.id);
      assert.equal(await s.hasTombstone(keyOf(name), FOREVER), false);
      const b = await s.createAddress(name, T0, { tombstone: { key: keyOf(name), since: FOREVER } });
      assert.ok(b);
      assert.equal(await s.createAddress(name, T0, { tombstone: { key: keyOf(name), since: FOREVER } }), undefined);
      assert.equal(await s.hasTombstone(keyOf(name), FOREVER), false);
      // Deleting an address that is not there leaves no tombstone.
      assert.equal(await s.deleteAddress(b.id + 1_000_000, mark(T0)), false);
    },
  ],
  [
    'tombstones: the retention purge with a mark leaves one for each claimed address, none for an unclaimed one or a sandbox',
    async (s) => {
      const claimed = await created(s, unique('old'));
      const unclaimed = await s.createAddress(unique('caught'), T0, { unclaimed: true });
      assert.ok(unclaimed);
      const box = await s.putSandbox({ name: 'tomb-box', address: `tomb-box-${randomBytes(3).toString('hex')}@sandbox.invalid`, passwordHash: 'h', maxMails: 10, maxBytes: 1 << 20, retentionMs: 1000, at: T0 });
      const young = await created(s, unique('young'), T0 + 10_000);
      const result = await s.purge({ mailBefore: T0 + 5000, addressBefore: T0 + 5000, sessionBefore: T0, tombstones: mark(T0 + 5000) });
      assert.equal(result.addresses, 2);
      assert.equal(await s.hasTombstone(keyOf(claimed.address), FOREVER), true);
      assert.equal(await s.hasTombstone(keyOf(unclaimed.address), FOREVER), false);
      assert.equal(await s.hasTombstone(keyOf(box.address), FOREVER), false);
      assert.equal(await s.hasTombstone(keyOf(young.address), FOREVER), false);
      assert.ok(await s.findAddress(young.address));
      // Without a mark the purge leaves none.
      const later = await created(s, unique('later'), T0 + 10_000);
      await s.purge({ mailBefore: T0 + 20_000, addressBefore: T0 + 20_000, sessionBefore: T0 });
      assert.equal(await s.findAddress(later.address), undefined);
      assert.equal(await s.hasTombstone(keyOf(later.address), FOREVER), false);
    },
  ],
  [
    "tombstones: the operators' purge removes one key's, those older than a time, or all",
    async (s) => {
      const names = [unique('p1'), unique('p2'), unique('p3'), unique('p4')];
      for (const [i, name] of names.entries()) await s.deleteAddress((await created(s, name)).id, mark(T0 + i * 100));
      assert.equal(await s.purgeTombstones({ key: keyOf(names[0]!) }), 1);
      assert.equal(await s.hasTombstone(keyOf(names[0]!), FOREVER), false);
      assert.equal(await s.hasTombstone(keyOf(names[1]!), FOREVER), true);
      assert.equal(await s.purgeTombstones({ key: keyOf(unique('never')) }), 0);
      assert.equal(await s.purgeTombstones({ before: T0 + 200 }), 1, 'only p2 (at T0+100) is older than T0+200');
      assert.equal(await s.hasTombstone(keyOf(names[2]!), FOREVER), true);
      assert.equal(await s.purgeTombstones({}), 2);
      for (const name of names) assert.equal(await s.hasTombstone(keyOf(name), FOREVER), false);
      assert.ok(await s.createAddress(names[3]!, T0, { tombstone: { key: keyOf(names[3]!), since: FOREVER } }), 'a purged name is free again');
    },
  ],
];
