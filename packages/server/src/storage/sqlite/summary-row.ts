// A live mail's summary as SQLite answers it: the columns read (as m.*) and the row they
// make. The reads (sqlite-mail-reads.ts) and the search thread (search-sql.ts) read it alike.

/** The columns of a MailSummary (as m.*), for the queries that read one. */
export const SUMMARY_COLUMNS = 'm.id, m.uuid, m.source, m.address, m.metadata, m.message_id, m.created_at, m.seen, m.envelope';

export interface SummaryRow {
  id: number;
  uuid: string;
  source: string;
  address: string;
  metadata: string;
  message_id: string;
  created_at: number;
  seen: number;
  envelope: string | null;
}
