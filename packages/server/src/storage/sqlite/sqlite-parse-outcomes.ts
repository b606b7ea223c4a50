// Kept parse outcomes (store.ts ParseOutcomeStore) in SQLite: the degraded parsed view of
// a mail whose parse read only its header block, one row per such mail, removed with the
// mail by ON DELETE CASCADE (purge of the mail or of its address alike).
import type Database from 'better-sqlite3';
import type { MailSummary, ParseOutcomeStore } from '../store.js';

interface HeadRow {
  id: number;
  uuid: string;
  source: string;
  address: string;
  metadata: string;
  message_id: string;
  created_at: number;
  seen: number;
  view: Buffer | null;
}

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqliteParseOutcomeStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): ParseOutcomeStore {
  const q = {
    head: db.prepare(
      'SELECT m.id, m.uuid, m.source, m.address, m.metadata, m.message_id, m.created_at, m.seen, o.view FROM mails m ' +
        'LEFT JOIN parse_outcomes o ON o.mail_id = m.id WHERE m.address_id = ? AND m.uuid = ? AND m.deleted_at IS NULL',
    ),
    // Through a SELECT of the mail, so that an outcome never outlives (or precedes) it.
    keep: db.prepare('INSERT INTO parse_outcomes (mail_id, view) SELECT id, ? FROM mails WHERE id = ? ON CONFLICT (mail_id) DO UPDATE SET view = excluded.view'),
  };
  return {
    async getMailHead(addressId, uuid) {
      const row = q.head.get(addressId, uuid) as HeadRow | undefined;
      if (!row) return undefined;
      const mail: MailSummary = {
        id: row.id,
        uuid: row.uuid,
        source: row.source,
        address: row.address,
        metadata: row.metadata,
        messageId: row.message_id,
        createdAt: row.created_at,
        seen: row.seen === 1,
      };
      return { mail, degradedView: row.view ?? undefined };
    },
    async keepDegradedView(mailId, view) {
      await write(() => q.keep.run(view, mailId));
    },
  };
}
