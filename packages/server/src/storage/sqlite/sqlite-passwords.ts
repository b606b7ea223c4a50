// The passwords of addresses (store.ts PasswordStore) in SQLite: one row per address
// that has one, removed with the address by ON DELETE CASCADE (deletion and purge alike).
import type Database from 'better-sqlite3';
import type { PasswordStore } from '../store.js';

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqlitePasswordStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): PasswordStore {
  const q = {
    // Through a SELECT of the address, so that a password never outlives (or precedes) it.
    set: db.prepare(
      'INSERT INTO address_passwords (address_id, hash, updated_at) SELECT id, ?, ? FROM addresses WHERE id = ? ' +
        'ON CONFLICT (address_id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at',
    ),
    get: db.prepare('SELECT hash, updated_at FROM address_passwords WHERE address_id = ?'),
  };
  return {
    async setAddressPassword(addressId, hash, at) {
      return write(() => q.set.run(hash, at, addressId).changes > 0);
    },
    async getAddressPassword(addressId) {
      const row = q.get.get(addressId) as { hash: string; updated_at: number } | undefined;
      return row && { hash: row.hash, updatedAt: row.updated_at };
    },
  };
}
