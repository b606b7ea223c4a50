// Kept parse outcomes (store.ts ParseOutcomeStore) in SQLite: the degraded parsed view of
// a mail whose parse read only its header block, one row per such mail, removed with the
// mail by ON DELETE CASCADE (purge of the mail or of its address alike); the head also
// reads the mail's report summary (sqlite-report-summaries.ts).
import type Database from 'better-sqlite3';
import type { MailSummary, ParseOutcomeStore } from '../store.js';

/** How the store reads a mail's summary: its columns of `mails m`, and the summary of such a row. */
export interface SummaryColumns<R> {
  columns: string;
  of: (row: R) => MailSummary;
}

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqliteParseOutcomeStore<R>(db: Database.Database, write: <T>(run: () => T) => Promise<T>, summary: SummaryColumns<R>): ParseOutcomeStore {
  const q = {
    head: db.prepare(
      `SELECT ${summary.columns}, o.view AS parse_outcome, r.summary AS report_summary FROM mails m ` +
        'LEFT JOIN parse_outcomes o ON o.mail_id = m.id LEFT JOIN report_summaries r ON r.mail_id = m.id WHERE m.address_id = ? AND m.uuid = ? AND m.deleted_at IS NULL',
    ),
    // Through a SELECT of the mail, so that an outcome never outlives (or precedes) it.
    keep: db.prepare('INSERT INTO parse_outcomes (mail_id, view) SELECT id, ? FROM mails WHERE id = ? ON CONFLICT (mail_id) DO UPDATE SET view = excluded.view'),
  };
  return {
    async getMailHead(addressId, uuid) {
      const row = q.head.get(addressId, uuid) as (R & { parse_outcome: Buffer | null; report_summary: string | null }) | undefined;
      if (!row) return undefined;
      return { mail: summary.of(row), degradedView: row.parse_outcome ?? undefined, reportSummary: row.report_summary ?? undefined };
    },
    async keepDegradedView(mailId, view) {
      await write(() => q.keep.run(view, mailId));
    },
  };
}
