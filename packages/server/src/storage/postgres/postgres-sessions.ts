// Sessions and the addresses each holds (store.ts SessionStore) in PostgreSQL; a rotation
// moves the memberships with the session through ON UPDATE CASCADE.
import type pg from 'pg';
import type { SessionAddressRecord, SessionStore } from '../store.js';
import type { AddressRow } from './postgres-addresses.js';
import { query as q, type Transaction } from './postgres-connection.js';

export function postgresSessionStore(pool: pg.Pool, transaction: Transaction): SessionStore {
  return {
    async createSession(id, createdAt) {
      await q(pool, 'INSERT INTO sessions (id, active_address_id, created_at) VALUES ($1, NULL, $2)', [id, createdAt]);
    },
    async getSession(id) {
      const { rows } = await q<{ id: string; active_address_id: string | null; created_at: string }>(pool, 'SELECT id, active_address_id, created_at FROM sessions WHERE id = $1', [id]);
      const row = rows[0];
      return row && { id: row.id, activeAddressId: row.active_address_id === null ? null : Number(row.active_address_id), createdAt: Number(row.created_at) };
    },
    async addSessionAddress(sessionId, addressId, addedAt, max) {
      await transaction(async (client) => {
        // Serialises concurrent additions to one session so the trim sees them all.
        await q(client, 'SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [sessionId]);
        await q(
          client,
          'INSERT INTO session_addresses (session_id, address_id, added_at) VALUES ($1, $2, $3) ON CONFLICT (session_id, address_id) DO UPDATE SET added_at = excluded.added_at',
          [sessionId, addressId, addedAt],
        );
        await q(
          client,
          'DELETE FROM session_addresses WHERE session_id = $1 AND address_id NOT IN (SELECT address_id FROM session_addresses WHERE session_id = $1 ORDER BY added_at DESC, address_id DESC LIMIT $2)',
          [sessionId, max],
        );
        await q(client, 'UPDATE sessions SET active_address_id = $1, created_at = $2 WHERE id = $3', [addressId, addedAt, sessionId]);
      });
    },
    async listSessionAddresses(sessionId) {
      const { rows } = await q<AddressRow>(
        pool,
        'SELECT a.id, a.address, a.created_at FROM session_addresses s JOIN addresses a ON a.id = s.address_id WHERE s.session_id = $1 ORDER BY s.added_at ASC, a.id ASC',
        [sessionId],
      );
      return rows.map((r): SessionAddressRecord => ({ addressId: Number(r.id), address: r.address, createdAt: Number(r.created_at) }));
    },
    async rotateSession(oldId, newId, activeAddressId, renewedAt) {
      // session_addresses follows through ON UPDATE CASCADE.
      const { rowCount } = await q(pool, 'UPDATE sessions SET id = $1, active_address_id = $2, created_at = $3 WHERE id = $4', [newId, activeAddressId, renewedAt, oldId]);
      return (rowCount ?? 0) > 0;
    },
    async deleteSession(id) {
      const { rowCount } = await q(pool, 'DELETE FROM sessions WHERE id = $1', [id]);
      return (rowCount ?? 0) > 0;
    },
  };
}
