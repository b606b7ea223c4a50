// Tags of mails (store.ts TagStore) in PostgreSQL, as sqlite-tags.ts does in SQLite;
// BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { TagStore } from '../store.js';

export function postgresTagStore(pool: pg.Pool, transaction: <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>): TagStore {
  return {
    async setMailTags(addressId, uuids, tags) {
      if (uuids.length === 0) return 0;
      return transaction(async (client) => {
        const { rows } = await client.query<{ id: string }>('SELECT id FROM mails WHERE address_id = $1 AND uuid = ANY($2::text[]) AND deleted_at IS NULL FOR UPDATE', [addressId, uuids]);
        const ids = rows.map((r) => r.id);
        if (ids.length === 0) return 0;
        await client.query('DELETE FROM mail_tags WHERE mail_id = ANY($1::bigint[])', [ids]);
        if (tags.length > 0) {
          await client.query(
            'INSERT INTO mail_tags (mail_id, address_id, tag) SELECT m, $2, t FROM unnest($1::bigint[]) AS m CROSS JOIN unnest($3::text[]) AS t ON CONFLICT DO NOTHING',
            [ids, addressId, tags],
          );
        }
        return ids.length;
      });
    },
    async mailTags(addressId, mailIds) {
      const out = new Map<number, string[]>();
      if (mailIds.length === 0) return out;
      const { rows } = await pool.query<{ mail_id: string; tag: string }>('SELECT mail_id, tag FROM mail_tags WHERE address_id = $1 AND mail_id = ANY($2::bigint[]) ORDER BY tag', [addressId, mailIds]);
      for (const r of rows) {
        const id = Number(r.mail_id);
        const list = out.get(id);
        if (list) list.push(r.tag);
        else out.set(id, [r.tag]);
      }
      return out;
    },
    async listTags(addressId) {
      const { rows } = await pool.query<{ tag: string; mails: string }>(
        'SELECT t.tag, count(*) AS mails FROM mail_tags t JOIN mails m ON m.id = t.mail_id WHERE t.address_id = $1 AND m.deleted_at IS NULL GROUP BY t.tag ORDER BY t.tag COLLATE "C"',
        [addressId],
      );
      return rows.map((r) => ({ tag: r.tag, mails: Number(r.mails) }));
    },
    async renameTag(addressId, from, to) {
      if (from === to) return 0;
      return transaction(async (client) => {
        await client.query('INSERT INTO mail_tags (mail_id, address_id, tag) SELECT mail_id, address_id, $3 FROM mail_tags WHERE address_id = $1 AND tag = $2 ON CONFLICT DO NOTHING', [addressId, from, to]);
        const { rowCount } = await client.query('DELETE FROM mail_tags WHERE address_id = $1 AND tag = $2', [addressId, from]);
        return rowCount ?? 0;
      });
    },
    async deleteTag(addressId, tag) {
      const { rowCount } = await pool.query('DELETE FROM mail_tags WHERE address_id = $1 AND tag = $2', [addressId, tag]);
      return rowCount ?? 0;
    },
  };
}
