// Sandboxes (store.ts SandboxStore) in SQLite: a row per sandbox, removed with its address
// by ON DELETE CASCADE; the quota's trim soft-deletes the oldest live mail.
import type Database from 'better-sqlite3';
import type { SandboxRecord, SandboxStore } from '../store.js';

interface SandboxRow {
  id: number;
  name: string;
  password_hash: string;
  address_id: number;
  address: string;
  max_mails: number;
  max_bytes: number;
  retention_ms: number;
  chaos: string;
  created_at: number;
  updated_at: number;
}

const toSandbox = (r: SandboxRow): SandboxRecord => ({
  id: r.id,
  name: r.name,
  passwordHash: r.password_hash,
  addressId: r.address_id,
  address: r.address,
  maxMails: r.max_mails,
  maxBytes: r.max_bytes,
  retentionMs: r.retention_ms,
  chaos: r.chaos,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const SELECT = 'SELECT s.id, s.name, s.password_hash, s.address_id, a.address, s.max_mails, s.max_bytes, s.retention_ms, s.chaos, s.created_at, s.updated_at FROM sandboxes s JOIN addresses a ON a.id = s.address_id';

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqliteSandboxStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): SandboxStore {
  const q = {
    insertAddress: db.prepare('INSERT INTO addresses (address, created_at) VALUES (?, ?) ON CONFLICT (address) DO NOTHING'),
    upsert: db.prepare(
      'INSERT INTO sandboxes (name, password_hash, address_id, max_mails, max_bytes, retention_ms, created_at, updated_at) ' +
        'SELECT ?, ?, id, ?, ?, ?, ?, ? FROM addresses WHERE address = ? ' +
        'ON CONFLICT (name) DO UPDATE SET password_hash = excluded.password_hash, max_mails = excluded.max_mails, max_bytes = excluded.max_bytes, ' +
        'retention_ms = excluded.retention_ms, updated_at = excluded.updated_at',
    ),
    byId: db.prepare(`${SELECT} WHERE s.id = ?`),
    byName: db.prepare(`${SELECT} WHERE s.name = ?`),
    list: db.prepare(`${SELECT} ORDER BY s.name`),
    count: db.prepare('SELECT count(*) FROM sandboxes').pluck(),
    setPassword: db.prepare('UPDATE sandboxes SET password_hash = ?, updated_at = ? WHERE id = ?'),
    setChaos: db.prepare('UPDATE sandboxes SET chaos = ?, updated_at = ? WHERE id = ?'),
    // Newest first (the order the quota keeps them in).
    live: db.prepare('SELECT id, uuid, size FROM mails WHERE address_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, id DESC'),
    softDelete: db.prepare('UPDATE mails SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL'),
  };
  const put = db.transaction((input: Parameters<SandboxStore['putSandbox']>[0]): SandboxRecord => {
    q.insertAddress.run(input.address, input.at);
    q.upsert.run(input.name, input.passwordHash, input.maxMails, input.maxBytes, input.retentionMs, input.at, input.at, input.address);
    return toSandbox(q.byName.get(input.name) as SandboxRow);
  });
  const trim = db.transaction((addressId: number, maxMails: number, maxBytes: number): string[] => {
    const rows = q.live.all(addressId) as { id: number; uuid: string; size: number }[];
    const removed: string[] = [];
    let bytes = 0;
    rows.forEach((r, i) => {
      bytes += r.size;
      const over = (maxMails > 0 && i >= maxMails) || (maxBytes > 0 && bytes > maxBytes);
      if (i > 0 && over && q.softDelete.run(Date.now(), r.id).changes > 0) removed.push(r.uuid);
    });
    return removed;
  });
  return {
    putSandbox: (input) => write(() => put(input)),
    async getSandbox(id) {
      const row = q.byId.get(id) as SandboxRow | undefined;
      return row && toSandbox(row);
    },
    async findSandbox(name) {
      const row = q.byName.get(name) as SandboxRow | undefined;
      return row && toSandbox(row);
    },
    async listSandboxes() {
      return (q.list.all() as SandboxRow[]).map(toSandbox);
    },
    async countSandboxes() {
      return q.count.get() as number;
    },
    setSandboxPassword: (id, hash, at) => write(() => q.setPassword.run(hash, at, id).changes > 0),
    setSandboxChaos: (id, chaos, at) =>
      write(() => {
        if (q.setChaos.run(chaos, at, id).changes === 0) return undefined;
        return toSandbox(q.byId.get(id) as SandboxRow);
      }),
    trimMails: (addressId, maxMails, maxBytes) => write(() => trim(addressId, maxMails, maxBytes)),
  };
}
