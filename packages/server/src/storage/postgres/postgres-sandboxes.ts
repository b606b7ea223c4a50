// Sandboxes (store.ts SandboxStore) in PostgreSQL, as sqlite-sandboxes.ts does in SQLite;
// BIGINT columns arrive from pg as strings.
import type pg from 'pg';
import type { SandboxRecord, SandboxStore } from '../store.js';

interface SandboxRow {
  id: string;
  name: string;
  password_hash: string;
  address_id: string;
  address: string;
  max_mails: string;
  max_bytes: string;
  retention_ms: string;
  chaos: string;
  created_at: string;
  updated_at: string;
}

const toSandbox = (r: SandboxRow): SandboxRecord => ({
  id: Number(r.id),
  name: r.name,
  passwordHash: r.password_hash,
  addressId: Number(r.address_id),
  address: r.address,
  maxMails: Number(r.max_mails),
  maxBytes: Number(r.max_bytes),
  retentionMs: Number(r.retention_ms),
  chaos: r.chaos,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const SELECT = 'SELECT s.id, s.name, s.password_hash, s.address_id, a.address, s.max_mails, s.max_bytes, s.retention_ms, s.chaos, s.created_at, s.updated_at FROM sandboxes s JOIN addresses a ON a.id = s.address_id';

export function postgresSandboxStore(pool: pg.Pool, transaction: <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>): SandboxStore {
  const one = async (text: string, values: unknown[]) => {
    const { rows } = await pool.query<SandboxRow>(text, values);
    return rows[0] && toSandbox(rows[0]);
  };
  return {
    putSandbox: (input) =>
      transaction(async (client) => {
        await client.query('INSERT INTO addresses (address, created_at) VALUES ($1, $2) ON CONFLICT (address) DO NOTHING', [input.address, input.at]);
        await client.query(
          'INSERT INTO sandboxes (name, password_hash, address_id, max_mails, max_bytes, retention_ms, created_at, updated_at) ' +
            'SELECT $1, $2, id, $3, $4, $5, $6, $6 FROM addresses WHERE address = $7 ' +
            'ON CONFLICT (name) DO UPDATE SET password_hash = excluded.password_hash, max_mails = excluded.max_mails, max_bytes = excluded.max_bytes, ' +
            'retention_ms = excluded.retention_ms, updated_at = excluded.updated_at',
          [input.name, input.passwordHash, input.maxMails, input.maxBytes, input.retentionMs, input.at, input.address],
        );
        const { rows } = await client.query<SandboxRow>(`${SELECT} WHERE s.name = $1`, [input.name]);
        return toSandbox(rows[0]!);
      }),
    getSandbox: (id) => one(`${SELECT} WHERE s.id = $1`, [id]),
    findSandbox: (name) => one(`${SELECT} WHERE s.name = $1`, [name]),
    async listSandboxes() {
      const { rows } = await pool.query<SandboxRow>(`${SELECT} ORDER BY s.name`);
      return rows.map(toSandbox);
    },
    async countSandboxes() {
      const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM sandboxes');
      return Number(rows[0]!.n);
    },
    async setSandboxPassword(id, hash, at) {
      const { rowCount } = await pool.query('UPDATE sandboxes SET password_hash = $1, updated_at = $2 WHERE id = $3', [hash, at, id]);
      return (rowCount ?? 0) > 0;
    },
    setSandboxChaos: (id, chaos, at) =>
      one(
        'WITH s AS (UPDATE sandboxes SET chaos = $1, updated_at = $2 WHERE id = $3 RETURNING *) ' +
          'SELECT s.id, s.name, s.password_hash, s.address_id, a.address, s.max_mails, s.max_bytes, s.retention_ms, s.chaos, s.created_at, s.updated_at FROM s JOIN addresses a ON a.id = s.address_id',
        [chaos, at, id],
      ),
    async trimMails(addressId, maxMails, maxBytes) {
      // Newest first: a mail goes when it is past maxMails or the running total of sizes past maxBytes; the newest stays.
      const { rows } = await pool.query<{ uuid: string }>(
        'WITH ranked AS (SELECT id, row_number() OVER w AS n, sum(size) OVER w AS bytes FROM mails WHERE address_id = $1 AND deleted_at IS NULL ' +
          'WINDOW w AS (ORDER BY created_at DESC, id DESC)) ' +
          'UPDATE mails m SET deleted_at = $4 FROM ranked r WHERE m.id = r.id AND r.n > 1 AND m.deleted_at IS NULL ' +
          'AND (($2 > 0 AND r.n > $2) OR ($3 > 0 AND r.bytes > $3)) RETURNING m.uuid',
        [addressId, maxMails, maxBytes, Date.now()],
      );
      return rows.map((r) => r.uuid);
    },
  };
}
