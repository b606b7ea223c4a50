// Addresses (store.ts AddressStore) in SQLite; an address's mail, memberships, webhook,
// password, sandbox and tags go with it through ON DELETE CASCADE.
import type Database from 'better-sqlite3';
import type { AddressRecord, AddressStore } from '../store.js';
import type { SqliteWrite } from './sqlite-connection.js';

type AddressRow = { id: number; address: string; created_at: number };

const toAddress = (r: AddressRow): AddressRecord => ({ id: r.id, address: r.address, createdAt: r.created_at });

export function sqliteAddressStore(db: Database.Database, write: SqliteWrite): AddressStore {
  const q = {
    insert: db.prepare('INSERT INTO addresses (address, created_at, unclaimed) VALUES (?, ?, ?) ON CONFLICT (address) DO NOTHING RETURNING id, address, created_at'),
    claim: db.prepare('UPDATE addresses SET unclaimed = 0 WHERE address = ? AND unclaimed = 1 RETURNING id, address, created_at'),
    get: db.prepare('SELECT id, address, created_at FROM addresses WHERE id = ?'),
    find: db.prepare('SELECT id, address, created_at FROM addresses WHERE address = ?'),
    delete: db.prepare('DELETE FROM addresses WHERE id = ?'),
  };
  const one = (row: unknown) => (row as AddressRow | undefined) && toAddress(row as AddressRow);
  return {
    async createAddress(address, createdAt, opts = {}) {
      return write(() => one(q.insert.get(address, createdAt, opts.unclaimed ? 1 : 0)));
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
    async deleteAddress(id) {
      return write(() => q.delete.run(id).changes > 0);
    },
  };
}
