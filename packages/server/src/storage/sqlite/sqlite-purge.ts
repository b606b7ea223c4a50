// Retention (store.ts PurgeStore) in SQLite: one transaction removes what is past its time.
import type Database from 'better-sqlite3';
import type { PurgeResult, PurgeStore } from '../store.js';
import type { SqliteWrite } from './sqlite-connection.js';

export function sqlitePurgeStore(db: Database.Database, write: SqliteWrite): PurgeStore {
  const q = {
    // Two statements: with an OR, SQLite cannot use either index and scans every mail.
    // A sandbox's mail is kept for its own retention, and its address as long as it exists.
    oldMails: db.prepare('DELETE FROM mails WHERE created_at < ? AND address_id NOT IN (SELECT address_id FROM sandboxes)'),
    sandboxMails: db.prepare(
      'DELETE FROM mails WHERE id IN (SELECT m.id FROM sandboxes s JOIN mails m ON m.address_id = s.address_id WHERE m.created_at < ? - s.retention_ms)',
    ),
    deletedMails: db.prepare('DELETE FROM mails WHERE deleted_at IS NOT NULL'),
    addresses: db.prepare('DELETE FROM addresses WHERE created_at < ? AND id NOT IN (SELECT address_id FROM sandboxes)'),
    sessions: db.prepare('DELETE FROM sessions WHERE created_at < ?'),
  };
  const purge = db.transaction((c: { mailBefore: number; addressBefore: number; sessionBefore: number; now?: number }): PurgeResult => {
    // Addresses first: their mail goes with them through ON DELETE CASCADE.
    const addresses = q.addresses.run(c.addressBefore).changes;
    const mails = q.oldMails.run(c.mailBefore).changes + (c.now === undefined ? 0 : q.sandboxMails.run(c.now).changes) + q.deletedMails.run().changes;
    const sessions = q.sessions.run(c.sessionBefore).changes;
    return { mails, addresses, sessions };
  });
  return {
    async purge(cutoffs) {
      return write(() => purge(cutoffs));
    },
  };
}
