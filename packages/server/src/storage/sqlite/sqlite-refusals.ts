// Refusal counts per hour (store.ts RefusalStore) in SQLite: a batch is one transaction of upserts.
import type Database from 'better-sqlite3';
import type { RefusalCount, RefusalStore } from '../store.js';
import type { SqliteWrite } from './sqlite-connection.js';

export function sqliteRefusalStore(db: Database.Database, write: SqliteWrite): RefusalStore {
  const q = {
    add: db.prepare(
      'INSERT INTO smtp_refusals (hour, reason, recipient_domain, count) VALUES (@hour, @reason, @recipientDomain, @count) ' +
        'ON CONFLICT (hour, reason, recipient_domain) DO UPDATE SET count = count + excluded.count',
    ),
    list: db.prepare('SELECT hour, reason, recipient_domain, count FROM smtp_refusals WHERE hour >= ? ORDER BY hour, reason, recipient_domain'),
    purge: db.prepare('DELETE FROM smtp_refusals WHERE hour < ?'),
  };
  const add = db.transaction((rows: readonly RefusalCount[]) => {
    for (const r of rows) q.add.run({ hour: r.hour, reason: r.reason, recipientDomain: r.recipientDomain, count: r.count });
  });
  return {
    async addRefusals(rows) {
      if (rows.length > 0) await write(() => add(rows));
    },
    async listRefusals(since) {
      const rows = q.list.all(since) as { hour: number; reason: string; recipient_domain: string; count: number }[];
      return rows.map((r) => ({ hour: r.hour, reason: r.reason, recipientDomain: r.recipient_domain, count: r.count }));
    },
    async purgeRefusals(before) {
      return write(() => q.purge.run(before).changes);
    },
  };
}
