// Addresses (store.ts AddressStore) and their tombstones (tombstone-store.ts) in PostgreSQL,
// as sqlite-addresses.ts does in SQLite; BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { AddressRecord, AddressStore, TombstoneStore } from '../store.js';
import { query as q, type Transaction } from './postgres-connection.js';

/** Leaves (or renews) the tombstones of $1 (keys) at $2; shared with the retention purge (postgres-purge.ts). */
export const PG_PUT_TOMBSTONES =
  'INSERT INTO address_tombstones (key, deleted_at) SELECT k, $2 FROM unnest($1::text[]) AS k ON CONFLICT (key) DO UPDATE SET deleted_at = EXCLUDED.deleted_at';

export interface AddressRow {
  id: string;
  address: string;
  created_at: string;
}

const toAddress = (r: AddressRow): AddressRecord => ({ id: Number(r.id), address: r.address, createdAt: Number(r.created_at) });

const INSERT = 'INSERT INTO addresses (address, created_at, unclaimed) VALUES ($1, $2, $3) ON CONFLICT (address) DO NOTHING RETURNING id, address, created_at';

export function postgresAddressStore(pool: pg.Pool, transaction: Transaction): AddressStore & TombstoneStore {
  return {
    async createAddress(address, createdAt, opts = {}) {
      const values = [address, createdAt, opts.unclaimed === true];
      const t = opts.tombstone;
      if (!t) {
        const { rows } = await q<AddressRow>(pool, INSERT, values);
        return rows[0] && toAddress(rows[0]);
      }
      // The tombstone is read after the insert, in a statement of its own: an insert that waited
      // on a deletion of that name sees the tombstone it committed, and is rolled back.
      return transaction(async (client) => {
        const { rows } = await q<AddressRow>(client, INSERT, values);
        if (!rows[0]) return undefined;
        const held = await q(client, 'SELECT 1 FROM address_tombstones WHERE key = $1 AND deleted_at >= $2', [t.key, t.since]);
        if ((held.rowCount ?? 0) > 0) throw new TombstoneHeld();
        return toAddress(rows[0]);
      }).catch((err: unknown) => {
        if (err instanceof TombstoneHeld) return undefined;
        throw err;
      });
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
    async deleteAddress(id, tombstone) {
      if (!tombstone) {
        const { rowCount } = await q(pool, 'DELETE FROM addresses WHERE id = $1', [id]);
        return (rowCount ?? 0) > 0;
      }
      return transaction(async (client) => {
        const { rows } = await q<{ address: string }>(client, 'DELETE FROM addresses WHERE id = $1 RETURNING address', [id]);
        if (rows[0]) await q(client, PG_PUT_TOMBSTONES, [[tombstone.keyOf(rows[0].address)], tombstone.at]);
        return rows[0] !== undefined;
      });
    },
    async hasTombstone(key, since) {
      const { rowCount } = await q(pool, 'SELECT 1 FROM address_tombstones WHERE key = $1 AND deleted_at >= $2', [key, since]);
      return (rowCount ?? 0) > 0;
    },
    async purgeTombstones(opts) {
      const { rowCount } =
        opts.key !== undefined
          ? await q(pool, 'DELETE FROM address_tombstones WHERE key = $1', [opts.key])
          : await q(pool, 'DELETE FROM address_tombstones WHERE deleted_at < $1', [opts.before ?? Number.MAX_SAFE_INTEGER]);
      return rowCount ?? 0;
    },
  };
}

/** Thrown inside createAddress's transaction to roll it back when a tombstone holds the name. */
class TombstoneHeld extends Error {}
