// Refusal counts per hour (store.ts RefusalStore) in PostgreSQL, as sqlite-refusals.ts does in
// SQLite: a batch is one statement (unnest of its columns), so nodes adding to the same row
// at once each add their own count; BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { RefusalStore } from '../store.js';

export function postgresRefusalStore(pool: pg.Pool): RefusalStore {
  return {
    async addRefusals(rows) {
      if (rows.length === 0) return;
      await pool.query(
        'INSERT INTO smtp_refusals (hour, reason, recipient_domain, count) ' +
          'SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) ' +
          'ON CONFLICT (hour, reason, recipient_domain) DO UPDATE SET count = smtp_refusals.count + excluded.count',
        [rows.map((r) => r.hour), rows.map((r) => r.reason), rows.map((r) => r.recipientDomain), rows.map((r) => r.count)],
      );
    },
    async listRefusals(since) {
      const { rows } = await pool.query<{ hour: string; reason: string; recipient_domain: string; count: string }>(
        'SELECT hour, reason, recipient_domain, count FROM smtp_refusals WHERE hour >= $1 ORDER BY hour, reason, recipient_domain',
        [since],
      );
      return rows.map((r) => ({ hour: Number(r.hour), reason: r.reason, recipientDomain: r.recipient_domain, count: Number(r.count) }));
    },
    async purgeRefusals(before) {
      const { rowCount } = await pool.query('DELETE FROM smtp_refusals WHERE hour < $1', [before]);
      return rowCount ?? 0;
    },
  };
}
