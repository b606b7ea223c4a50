// Report summaries (store.ts ReportSummaryStore) in PostgreSQL, as
// sqlite-report-summaries.ts does in SQLite: kept with the mail (the first kept stays),
// and the mail's webhook deliveries that wait for it made due, in one transaction.
import type { ReportSummaryStore } from '../store.js';
import type { Transaction } from './postgres-connection.js';

export function postgresReportSummaryStore(transaction: Transaction): ReportSummaryStore {
  return {
    async keepReportSummary(mails, summary, now) {
      if (mails.length === 0) return 0;
      const ids = mails.map((m) => m.id);
      return transaction(async (client) => {
        // Through a SELECT of the mails, so that a summary never outlives (or precedes) its mail.
        if (summary !== null) await client.query('INSERT INTO report_summaries (mail_id, summary) SELECT id, $2 FROM mails WHERE id = ANY($1::bigint[]) ON CONFLICT (mail_id) DO NOTHING', [ids, summary]);
        // Only deliveries never attempted and not yet due: a retry keeps its back-off. One
        // a node has leased is skipped (SKIP LOCKED), never waited for: it is being sent.
        const due = await client.query(
          'UPDATE webhook_outbox SET next_at = $2 WHERE id IN (SELECT id FROM webhook_outbox WHERE mail_id = ANY($1::bigint[]) AND attempts = 0 AND next_at > $2 FOR UPDATE SKIP LOCKED)',
          [ids, now],
        );
        return due.rowCount ?? 0;
      });
    },
  };
}
