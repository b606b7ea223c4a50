// Addresses (store.ts AddressStore) in PostgreSQL, as sqlite-addresses.ts does in SQLite;
// BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { AddressRecord, AddressStore } from '../store.js';
import { query as q } from './postgres-connection.js';

export interface AddressRow {
  id: string;
  address: string;
  created_at: string;
}

const toAddress = (r: AddressRow): AddressRecord => ({ id: Number(r.id), address: r.address, createdAt: Number(r.created_at) });

export function postgresAddressStore(pool: pg.Pool): AddressStore {
  return {
    async createAddress(address, createdAt, opts = {}) {
      const { rows } = await q<AddressRow>(
        pool,
        'INSERT INTO addresses (address, created_at, unclaimed) VALUES ($1, $2, $3) ON CONFLICT (address) DO NOTHING RETURNING id, address, created_at',
        [address, createdAt, opts.unclaimed === true],
      );
      return rows[0] && toAddress(rows[0]);
    },
    async claimAddress(address) {
      const { rows } = await q<AddressRow>(pool, 'UPDATE addresses SET unclaimed = false WHERE address = $1 AND unclaimed RETURNING id, address, created_at', [address]);
      return rows[0] && toAddress(rows[0]);
    },
    async getAddress(id) {
      const { rows } = await q<AddressRow>(pool, 'SELECT id, address, created_at FROM addresses WHERE id = $1', [id]);
      return rows[0] && toAddress(rows[0]);
    },
    async findAddress(address) {
      const { rows } = await q<AddressRow>(pool, 'SELECT id, address, created_at FROM addresses WHERE address = $1', [address]);
      return rows[0] && toAddress(rows[0]);
    },
    async deleteAddress(id) {
      const { rowCount } = await q(pool, 'DELETE FROM addresses WHERE id = $1', [id]);
      return (rowCount ?? 0) > 0;
    },
  };
}
