// The passwords of addresses (store.ts PasswordStore) in PostgreSQL, as
// sqlite-passwords.ts does in SQLite; BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { PasswordStore } from '../store.js';

export function postgresPasswordStore(pool: pg.Pool): PasswordStore {
  return {
    async setAddressPassword(addressId, hash, at) {
      // Through a SELECT of the address, so that a password never outlives (or precedes) it.
      const { rowCount } = await pool.query(
        'INSERT INTO address_passwords (address_id, hash, updated_at) SELECT id, $2, $3 FROM addresses WHERE id = $1 ' +
          'ON CONFLICT (address_id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at',
        [addressId, hash, at],
      );
      return (rowCount ?? 0) > 0;
    },
    async getAddressPassword(addressId) {
      const { rows } = await pool.query<{ hash: string; updated_at: string }>('SELECT hash, updated_at FROM address_passwords WHERE address_id = $1', [addressId]);
      const row = rows[0];
      return row && { hash: row.hash, updatedAt: Number(row.updated_at) };
    },
  };
}
