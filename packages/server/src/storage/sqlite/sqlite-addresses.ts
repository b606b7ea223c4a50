// Addresses (store.ts AddressStore) and their tombstones (tombstone-store.ts) in SQLite; an
// address's mail, memberships, webhook, password, sandbox and tags go with it through ON
// DELETE CASCADE.
import type Database from 'better-sqlite3';
import type { AddressRecord, AddressStore, TombstoneStore } from '../store.js';
import type { SqliteWrite } from './sqlite-connection.js';

type AddressRow = { id: number; address: string; created_at: number };

const toAddress = (r: AddressRow): AddressRecord => ({ id: r.id, address: r.address, createdAt: r.created_at });

/** Leaves (or renews) a tombstone; shared with the retention purge (sqlite-purge.ts). */
export const SQLITE_PUT_TOMBSTONE = 'INSERT INTO address_tombstones (key, deleted_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET deleted_at = excluded.deleted_at';

export function sqliteAddressStore(db: Database.Database, write: SqliteWrite): AddressStore & TombstoneStore {
  const q = {
    insert: db.prepare('INSERT INTO addresses (address, created_at, unclaimed) VALUES (?, ?, ?) ON CONFLICT (address) DO NOTHING RETURNING id, address, created_at'),
    // One statement on SQLite's one writer: no deletion can commit between the check and the insert.
    insertUnlessTombstone: db.prepare(
      'INSERT INTO addresses (address, created_at, unclaimed) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM address_tombstones WHERE key = ? AND deleted_at >= ?) ' +
        'ON CONFLICT (address) DO NOTHING RETURNING id, address, created_at',
    ),
    claim: db.prepare('UPDATE addresses SET unclaimed = 0 WHERE address = ? AND unclaimed = 1 RETURNING id, address, created_at'),
    get: db.prepare('SELECT id, address, created_at FROM addresses WHERE id = ?'),
    find: db.prepare('SELECT id, address, created_at FROM addresses WHERE address = ?'),
    delete: db.prepare('DELETE FROM addresses WHERE id = ? RETURNING address'),
    putTombstone: db.prepare(SQLITE_PUT_TOMBSTONE),
    hasTombstone: db.prepare('SELECT 1 FROM address_tombstones WHERE key = ? AND deleted_at >= ?'),
    purgeKey: db.prepare('DELETE FROM address_tombstones WHERE key = ?'),
    purgeBefore: db.prepare('DELETE FROM address_tombstones WHERE deleted_at < ?'),
  };
  const one = (row: unknown) => (row as AddressRow | undefined) && toAddress(row as AddressRow);
  const deleteWithTombstone = db.transaction((id: number, tombstone: { keyOf: (address: string) => string; at: number } | undefined): boolean => {
    const row = q.delete.get(id) as { address: string } | undefined;
    if (row && tombstone) q.putTombstone.run(tombstone.keyOf(row.address), tombstone.at);
    return row !== undefined;
  });
  return {
    async createAddress(address, createdAt, opts = {}) {
      const unclaimed = opts.unclaimed ? 1 : 0;
      const t = opts.tombstone;
      return write(() => one(t ? q.insertUnlessTombstone.get(address, createdAt, unclaimed, t.key, t.since) : q.insert.get(address, createdAt, unclaimed)));
    },
    async claimAddress(address) {
      return write(() => one(q.claim.get(address)));
    },
    async getAddress(id) {
      return one(q.get.get(id));
    },
    async findAddress(address) {
      return one(q.find.get(address));
    },
    async deleteAddress(id, tombstone) {
      return write(() => deleteWithTombstone(id, tombstone));
    },
    async hasTombstone(key, since) {
      return q.hasTombstone.get(key, since) !== undefined;
    },
    async purgeTombstones(opts) {
      if (opts.key !== undefined) return write(() => q.purgeKey.run(opts.key).changes);
      return write(() => q.purgeBefore.run(opts.before ?? Number.MAX_SAFE_INTEGER).changes);
    },
  };
}
