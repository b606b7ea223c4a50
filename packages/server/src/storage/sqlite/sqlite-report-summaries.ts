// Report summaries (store.ts ReportSummaryStore) in SQLite: one row per mail whose report
// was built, removed with the mail by ON DELETE CASCADE; keeping one makes the mail's
// webhook deliveries that wait for it due, in the same transaction.
import type Database from 'better-sqlite3';
import type { ReportSummaryStore } from '../store.js';

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqliteReportSummaryStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): ReportSummaryStore {
  const q = {
    // Through a SELECT of the mail, so that a summary never outlives (or precedes) it; the first kept stays.
    keep: db.prepare('INSERT INTO report_summaries (mail_id, summary) SELECT id, ? FROM mails WHERE id = ? ON CONFLICT (mail_id) DO NOTHING'),
    // Only deliveries never attempted and not yet due: a retry keeps its back-off.
    due: db.prepare('UPDATE webhook_outbox SET next_at = @now WHERE mail_id = @id AND attempts = 0 AND next_at > @now'),
  };
  const keep = db.transaction((ids: number[], summary: string | null, now: number) => {
    let due = 0;
    for (const id of ids) {
      if (summary !== null) q.keep.run(summary, id);
      due += q.due.run({ id, now }).changes;
    }
    return due;
  });
  return {
    async keepReportSummary(mails, summary, now) {
      if (mails.length === 0) return 0;
      return write(() => keep(mails.map((m) => m.id), summary, now));
    },
  };
}
