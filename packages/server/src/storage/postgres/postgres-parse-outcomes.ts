// Kept parse outcomes (store.ts ParseOutcomeStore) in PostgreSQL, as
// sqlite-parse-outcomes.ts does in SQLite; BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { MailSummary, ParseOutcomeStore } from '../store.js';

/** How the store reads a mail's summary: its columns of `mails m`, and the summary of such a row. */
export interface SummaryColumns<R> {
  columns: string;
  of: (row: R) => MailSummary;
}

export function postgresParseOutcomeStore<R extends pg.QueryResultRow>(pool: pg.Pool, summary: SummaryColumns<R>): ParseOutcomeStore {
  return {
    async getMailHead(addressId, uuid) {
      const { rows } = await pool.query<R & { parse_outcome: Buffer | null; report_summary: string | null }>(
        `SELECT ${summary.columns}, o.view AS parse_outcome, r.summary AS report_summary FROM mails m ` +
          'LEFT JOIN parse_outcomes o ON o.mail_id = m.id LEFT JOIN report_summaries r ON r.mail_id = m.id WHERE m.address_id = $1 AND m.uuid = $2 AND m.deleted_at IS NULL',
        [addressId, uuid],
      );
      const row = rows[0];
      if (!row) return undefined;
      return { mail: summary.of(row), degradedView: row.parse_outcome ?? undefined, reportSummary: row.report_summary ?? undefined };
    },
    async keepDegradedView(mailId, view) {
      // Through a SELECT of the mail, so that an outcome never outlives (or precedes) it.
      await pool.query('INSERT INTO parse_outcomes (mail_id, view) SELECT id, $2 FROM mails WHERE id = $1 ON CONFLICT (mail_id) DO UPDATE SET view = excluded.view', [mailId, view]);
    },
  };
}
