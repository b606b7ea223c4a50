// Sessions and the addresses each holds (store.ts SessionStore) in SQLite; a rotation
// moves the memberships with the session through ON UPDATE CASCADE.
import type Database from 'better-sqlite3';
import type { SessionAddressRecord, SessionStore } from '../store.js';
import type { SqliteWrite } from './sqlite-connection.js';

export function sqliteSessionStore(db: Database.Database, write: SqliteWrite): SessionStore {
  const q = {
    create: db.prepare('INSERT INTO sessions (id, active_address_id, created_at) VALUES (?, NULL, ?)'),
    get: db.prepare('SELECT id, active_address_id, created_at FROM sessions WHERE id = ?'),
    upsertMember: db.prepare(
      'INSERT INTO session_addresses (session_id, address_id, added_at) VALUES (?, ?, ?) ON CONFLICT (session_id, address_id) DO UPDATE SET added_at = excluded.added_at',
    ),
    trimMembers: db.prepare(
      'DELETE FROM session_addresses WHERE session_id = ? AND address_id NOT IN (SELECT address_id FROM session_addresses WHERE session_id = ? ORDER BY added_at DESC, address_id DESC LIMIT ?)',
    ),
    renew: db.prepare('UPDATE sessions SET active_address_id = ?, created_at = ? WHERE id = ?'),
    listMembers: db.prepare(
      'SELECT a.id, a.address, a.created_at FROM session_addresses s JOIN addresses a ON a.id = s.address_id WHERE s.session_id = ? ORDER BY s.added_at ASC, a.id ASC',
    ),
    rotate: db.prepare('UPDATE sessions SET id = ?, active_address_id = ?, created_at = ? WHERE id = ?'),
    delete: db.prepare('DELETE FROM sessions WHERE id = ?'),
  };
  const addMember = db.transaction((sessionId: string, addressId: number, addedAt: number, max: number) => {
    q.upsertMember.run(sessionId, addressId, addedAt);
    q.trimMembers.run(sessionId, sessionId, max);
    q.renew.run(addressId, addedAt, sessionId);
  });
  return {
    async createSession(id, createdAt) {
      await write(() => q.create.run(id, createdAt));
    },
    async getSession(id) {
      const row = q.get.get(id) as { id: string; active_address_id: number | null; created_at: number } | undefined;
      return row && { id: row.id, activeAddressId: row.active_address_id, createdAt: row.created_at };
    },
    async addSessionAddress(sessionId, addressId, addedAt, max) {
      await write(() => addMember(sessionId, addressId, addedAt, max));
    },
    async listSessionAddresses(sessionId) {
      const rows = q.listMembers.all(sessionId) as { id: number; address: string; created_at: number }[];
      return rows.map((r): SessionAddressRecord => ({ addressId: r.id, address: r.address, createdAt: r.created_at }));
    },
    async rotateSession(oldId, newId, activeAddressId, renewedAt) {
      return write(() => q.rotate.run(newId, activeAddressId, renewedAt, oldId).changes > 0);
    },
    async deleteSession(id) {
      return write(() => q.delete.run(id).changes > 0);
    },
  };
}
