// Tags of mails (store.ts TagStore; the Mailpit-compatible API's tags) in SQLite: a row
// per mail and tag, removed with the mail by ON DELETE CASCADE (purge and address
// deletion alike). Only live mail is tagged, listed or counted.
import type Database from 'better-sqlite3';
import type { TagStore } from '../store.js';

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqliteTagStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): TagStore {
  const q = {
    liveId: db.prepare('SELECT id FROM mails WHERE address_id = ? AND uuid = ? AND deleted_at IS NULL').pluck(),
    clear: db.prepare('DELETE FROM mail_tags WHERE mail_id = ?'),
    add: db.prepare('INSERT OR IGNORE INTO mail_tags (mail_id, address_id, tag) VALUES (?, ?, ?)'),
    list: db.prepare(
      'SELECT t.tag, count(*) AS mails FROM mail_tags t JOIN mails m ON m.id = t.mail_id WHERE t.address_id = ? AND m.deleted_at IS NULL GROUP BY t.tag ORDER BY t.tag',
    ),
    rename: db.prepare('INSERT OR IGNORE INTO mail_tags (mail_id, address_id, tag) SELECT mail_id, address_id, ? FROM mail_tags WHERE address_id = ? AND tag = ?'),
    remove: db.prepare('DELETE FROM mail_tags WHERE address_id = ? AND tag = ?'),
  };
  const set = db.transaction((addressId: number, uuids: string[], tags: string[]): number => {
    let found = 0;
    for (const uuid of uuids) {
      const id = q.liveId.get(addressId, uuid) as number | undefined;
      if (id === undefined) continue;
      found++;
      q.clear.run(id);
      for (const tag of tags) q.add.run(id, addressId, tag);
    }
    return found;
  });
  const rename = db.transaction((addressId: number, from: string, to: string): number => {
    q.rename.run(to, addressId, from);
    return q.remove.run(addressId, from).changes;
  });
  return {
    setMailTags: (addressId, uuids, tags) => write(() => set(addressId, uuids, tags)),
    async mailTags(addressId, mailIds) {
      const out = new Map<number, string[]>();
      if (mailIds.length === 0) return out;
      const rows = db
        .prepare(`SELECT mail_id, tag FROM mail_tags WHERE address_id = ? AND mail_id IN (${mailIds.map(() => '?').join(',')}) ORDER BY tag`)
        .all(addressId, ...mailIds) as { mail_id: number; tag: string }[];
      for (const r of rows) {
        const list = out.get(r.mail_id);
        if (list) list.push(r.tag);
        else out.set(r.mail_id, [r.tag]);
      }
      return out;
    },
    async listTags(addressId) {
      return q.list.all(addressId) as { tag: string; mails: number }[];
    },
    renameTag: (addressId, from, to) => write(() => (from === to ? 0 : rename(addressId, from, to))),
    deleteTag: (addressId, tag) => write(() => q.remove.run(addressId, tag).changes),
  };
}
