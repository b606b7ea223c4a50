// What the operators' admin reads and writes in PostgreSQL (store.ts OperatorStore),
// as sqlite-operator.ts does in SQLite. The mails per day are counted by
// postgres-mail-writes.ts's insertMails, in the delivery's own transaction. BIGINT and
// aggregate columns arrive from pg as strings and are converted here.
import type pg from 'pg';
import type { AddressOverview, BlockKind, BlockRecord, OperatorStore } from '../store.js';
import { postgresDomainStats } from './postgres-domain-stats.js';

interface BlockRow {
  id: string;
  kind: BlockKind;
  value: string;
  note: string;
  created_at: string;
}

interface OverviewRow {
  id: string;
  address: string;
  created_at: string;
  unclaimed: boolean;
  mails: string;
  bytes: string;
  last_mail: string | null;
}

const BLOCK_COLUMNS = 'id, kind, value, note, created_at';
const toBlock = (r: BlockRow): BlockRecord => ({ id: Number(r.id), kind: r.kind, value: r.value, note: r.note, createdAt: Number(r.created_at) });

/** The rows one day's count is spread over (migrations/0007_admin.sql); a delivery adds to the row of its first address. */
export const MAIL_DAY_SHARDS = 16;

export function postgresOperatorStore(pool: pg.Pool): OperatorStore {
  return {
    ...postgresDomainStats(pool),
    async listAddresses(contains, limit, offset) {
      // strpos(address, '') is 1: an empty filter matches every address.
      const { rows } = await pool.query<OverviewRow>(
        'WITH page AS (SELECT id, address, created_at, unclaimed FROM addresses WHERE strpos(address, $1) > 0 ORDER BY id DESC LIMIT $2 OFFSET $3) ' +
          'SELECT p.id, p.address, p.created_at, p.unclaimed, count(m.id) AS mails, coalesce(sum(m.size), 0) AS bytes, max(m.created_at) AS last_mail ' +
          'FROM page p LEFT JOIN mails m ON m.address_id = p.id AND m.deleted_at IS NULL GROUP BY p.id, p.address, p.created_at, p.unclaimed ORDER BY p.id DESC',
        [contains, limit, offset],
      );
      let count = rows.length;
      if (!(offset === 0 && rows.length < limit)) count = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM addresses WHERE strpos(address, $1) > 0', [contains])).rows[0]!.n);
      return {
        results: rows.map(
          (r): AddressOverview => ({
            id: Number(r.id),
            address: r.address,
            createdAt: Number(r.created_at),
            unclaimed: r.unclaimed,
            mails: Number(r.mails),
            bytes: Number(r.bytes),
            lastMailAt: r.last_mail === null ? null : Number(r.last_mail),
          }),
        ),
        count,
      };
    },
    async addBlock(b) {
      const { rows } = await pool.query<BlockRow>(
        `INSERT INTO blocks (kind, value, note, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, value) DO NOTHING RETURNING ${BLOCK_COLUMNS}`,
        [b.kind, b.value, b.note, b.createdAt],
      );
      return rows[0] && toBlock(rows[0]);
    },
    async listBlocks() {
      return (await pool.query<BlockRow>(`SELECT ${BLOCK_COLUMNS} FROM blocks ORDER BY id DESC`)).rows.map(toBlock);
    },
    async deleteBlock(id) {
      return ((await pool.query('DELETE FROM blocks WHERE id = $1', [id])).rowCount ?? 0) > 0;
    },
    async blocksVersion() {
      return (await pool.query<{ version: string }>('SELECT version FROM blocks_version WHERE id = 1')).rows[0]!.version;
    },
    async mailsPerDay(fromDay) {
      const { rows } = await pool.query<{ day: number; mails: string }>('SELECT day, sum(mails) AS mails FROM mail_days WHERE day >= $1 GROUP BY day ORDER BY day', [fromDay]);
      return rows.map((r) => ({ day: r.day, mails: Number(r.mails) }));
    },
    async topSenders(since, limit) {
      const { rows } = await pool.query<{ sender: string; mails: string }>(
        'SELECT source AS sender, count(*) AS mails FROM mails WHERE created_at >= $1 GROUP BY source ORDER BY mails DESC, source ASC LIMIT $2',
        [since, limit],
      );
      return rows.map((r) => ({ sender: r.sender, mails: Number(r.mails) }));
    },
    async storageUsage() {
      const { rows } = await pool.query<{ addresses: string; mails: string; mail_bytes: string; database_bytes: string }>(
        'SELECT (SELECT count(*) FROM addresses) AS addresses, ' +
          '(SELECT count(*) FROM mails WHERE deleted_at IS NULL) AS mails, ' +
          '(SELECT coalesce(sum(size), 0) FROM mails WHERE deleted_at IS NULL) AS mail_bytes, ' +
          // Every table of the schema with its indexes and TOAST (the message bodies).
          "(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r') AS database_bytes",
      );
      const r = rows[0]!;
      return { addresses: Number(r.addresses), mails: Number(r.mails), mailBytes: Number(r.mail_bytes), databaseBytes: Number(r.database_bytes) };
    },
  };
}
