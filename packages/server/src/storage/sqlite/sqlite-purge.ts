// Retention (store.ts PurgeStore) in SQLite: one transaction removes what is past its time.
import type Database from 'better-sqlite3';
import type { PurgeResult, PurgeStore, TombstoneMark } from '../store.js';
import { SQLITE_PUT_TOMBSTONE } from './sqlite-addresses.js';
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
    // The same, naming what it removed: each claimed one leaves its tombstone.
    addressesNamed: db.prepare('DELETE FROM addresses WHERE created_at < ? AND id NOT IN (SELECT address_id FROM sandboxes) RETURNING address, unclaimed'),
    putTombstone: db.prepare(SQLITE_PUT_TOMBSTONE),
    sessions: db.prepare('DELETE FROM sessions WHERE created_at < ?'),
  };
  const purgeAddresses = (before: number, tombstones: TombstoneMark | undefined): number => {
    if (!tombstones) return q.addresses.run(before).changes;
    const gone = q.addressesNamed.all(before) as { address: string; unclaimed: number }[];
    for (const a of gone) if (!a.unclaimed) q.putTombstone.run(tombstones.keyOf(a.address), tombstones.at);
    return gone.length;
  };
  const purge = db.transaction((c: { mailBefore: number; addressBefore: number; sessionBefore: number; now?: number; tombstones?: TombstoneMark }): PurgeResult => {
    // Addresses first: their mail goes with them through ON DELETE CASCADE.
    const addresses = purgeAddresses(c.addressBefore, c.tombstones);
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
