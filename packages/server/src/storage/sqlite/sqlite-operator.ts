// What the operators' admin reads and writes in SQLite (store.ts OperatorStore): the
// address overview, the blocks refused at MAIL FROM and the statistics. The mails per
// day are counted by sqlite-mail-writes.ts's insertMails, in the delivery's own transaction.
import type Database from 'better-sqlite3';
import type { AddressOverview, BlockKind, BlockRecord, OperatorStore } from '../store.js';
import { sqliteDomainStats } from './sqlite-domain-stats.js';

interface BlockRow {
  id: number;
  kind: BlockKind;
  value: string;
  note: string;
  created_at: number;
}

interface OverviewRow {
  id: number;
  address: string;
  created_at: number;
  unclaimed: number;
  mails: number;
  bytes: number;
  last_mail: number | null;
}

const BLOCK_COLUMNS = 'id, kind, value, note, created_at';
const toBlock = (r: BlockRow): BlockRecord => ({ id: r.id, kind: r.kind, value: r.value, note: r.note, createdAt: r.created_at });

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqliteOperatorStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): OperatorStore {
  const q = {
    // instr(address, '') is 1: an empty filter matches every address.
    countAddresses: db.prepare('SELECT count(*) FROM addresses WHERE instr(address, ?) > 0').pluck(),
    listAddresses: db.prepare(
      'WITH page AS (SELECT id, address, created_at, unclaimed FROM addresses WHERE instr(address, ?) > 0 ORDER BY id DESC LIMIT ? OFFSET ?) ' +
        'SELECT p.id, p.address, p.created_at, p.unclaimed, count(m.id) AS mails, coalesce(sum(m.size), 0) AS bytes, max(m.created_at) AS last_mail ' +
        'FROM page p LEFT JOIN mails m ON m.address_id = p.id AND m.deleted_at IS NULL GROUP BY p.id ORDER BY p.id DESC',
    ),
    addBlock: db.prepare(`INSERT INTO blocks (kind, value, note, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (kind, value) DO NOTHING RETURNING ${BLOCK_COLUMNS}`),
    listBlocks: db.prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks ORDER BY id DESC`),
    deleteBlock: db.prepare('DELETE FROM blocks WHERE id = ?'),
    blocksVersion: db.prepare('SELECT version FROM blocks_version WHERE id = 1').pluck(),
    mailsPerDay: db.prepare('SELECT day, sum(mails) AS mails FROM mail_days WHERE day >= ? GROUP BY day ORDER BY day'),
    topSenders: db.prepare('SELECT source AS sender, count(*) AS mails FROM mails WHERE created_at >= ? GROUP BY source ORDER BY mails DESC, source ASC LIMIT ?'),
    addressCount: db.prepare('SELECT count(*) FROM addresses').pluck(),
    liveMails: db.prepare('SELECT count(*) AS count, coalesce(sum(size), 0) AS bytes FROM mails WHERE deleted_at IS NULL'),
    pageCount: db.prepare('PRAGMA page_count').pluck(),
    pageSize: db.prepare('PRAGMA page_size').pluck(),
  };

  return {
    ...sqliteDomainStats(db),
    async listAddresses(contains, limit, offset) {
      const rows = q.listAddresses.all(contains, limit, offset) as OverviewRow[];
      const count = offset === 0 && rows.length < limit ? rows.length : (q.countAddresses.get(contains) as number);
      return {
        results: rows.map(
          (r): AddressOverview => ({ id: r.id, address: r.address, createdAt: r.created_at, unclaimed: r.unclaimed === 1, mails: r.mails, bytes: r.bytes, lastMailAt: r.last_mail }),
        ),
        count,
      };
    },
    async addBlock(b) {
      const row = await write(() => q.addBlock.get(b.kind, b.value, b.note, b.createdAt) as BlockRow | undefined);
      return row && toBlock(row);
    },
    async listBlocks() {
      return (q.listBlocks.all() as BlockRow[]).map(toBlock);
    },
    async deleteBlock(id) {
      return write(() => q.deleteBlock.run(id).changes > 0);
    },
    async blocksVersion() {
      return String(q.blocksVersion.get() as number);
    },
    async mailsPerDay(fromDay) {
      return q.mailsPerDay.all(fromDay) as { day: number; mails: number }[];
    },
    async topSenders(since, limit) {
      return q.topSenders.all(since, limit) as { sender: string; mails: number }[];
    },
    async storageUsage() {
      const live = q.liveMails.get() as { count: number; bytes: number };
      return {
        addresses: q.addressCount.get() as number,
        mails: live.count,
        mailBytes: live.bytes,
        databaseBytes: (q.pageCount.get() as number) * (q.pageSize.get() as number),
      };
    },
  };
}
