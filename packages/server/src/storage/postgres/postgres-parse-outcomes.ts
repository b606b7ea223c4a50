// Kept parse outcomes (store.ts ParseOutcomeStore) in PostgreSQL, as
// sqlite-parse-outcomes.ts does in SQLite; BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { ParseOutcomeStore } from '../store.js';

interface HeadRow {
  id: string;
  uuid: string;
  source: string;
  address: string;
  metadata: string;
  message_id: string;
  created_at: string;
  seen: boolean;
  view: Buffer | null;
}

export function postgresParseOutcomeStore(pool: pg.Pool): ParseOutcomeStore {
  return {
    async getMailHead(addressId, uuid) {
      const { rows } = await pool.query<HeadRow>(
        'SELECT m.id, m.uuid, m.source, m.address, m.metadata, m.message_id, m.created_at, m.seen, o.view FROM mails m ' +
          'LEFT JOIN parse_outcomes o ON o.mail_id = m.id WHERE m.address_id = $1 AND m.uuid = $2 AND m.deleted_at IS NULL',
        [addressId, uuid],
      );
      const row = rows[0];
      if (!row) return undefined;
      const mail = {
        id: Number(row.id),
        uuid: row.uuid,
        source: row.source,
        address: row.address,
        metadata: row.metadata,
        messageId: row.message_id,
        createdAt: Number(row.created_at),
        seen: row.seen,
      };
      return { mail, degradedView: row.view ?? undefined };
    },
    async keepDegradedView(mailId, view) {
      // Through a SELECT of the mail, so that an outcome never outlives (or precedes) it.
      await pool.query('INSERT INTO parse_outcomes (mail_id, view) SELECT id, $2 FROM mails WHERE id = $1 ON CONFLICT (mail_id) DO UPDATE SET view = excluded.view', [mailId, view]);
    },
  };
}
