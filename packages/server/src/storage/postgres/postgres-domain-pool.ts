// The domain pool in PostgreSQL (domain-pool-store.ts), as sqlite-domain-pool.ts does in
// SQLite; migrations/0022_domain_pool.sql's trigger moves the version at each change.
import type pg from 'pg';
import type { DomainPoolStore, PoolDomainRecord, PoolDomainState } from '../domain-pool-store.js';
import type { Transaction } from './postgres-connection.js';

interface PoolRow {
  domain: string;
  state: PoolDomainState;
  subdomains: boolean;
  added_at: string;
  state_changed_at: string;
  retired_until: string | null;
}

const COLUMNS = 'domain, state, subdomains, added_at, state_changed_at, retired_until';
const toRecord = (r: PoolRow): PoolDomainRecord => ({
  domain: r.domain,
  state: r.state,
  subdomains: r.subdomains,
  addedAt: Number(r.added_at),
  stateChangedAt: Number(r.state_changed_at),
  retiredUntil: r.retired_until === null ? null : Number(r.retired_until),
});

const ADD = `INSERT INTO domain_pool (domain, state, subdomains, added_at, state_changed_at) VALUES ($1, 'active', $2, $3, $3) ON CONFLICT (domain) DO NOTHING RETURNING ${COLUMNS}`;
// Every right-hand side reads the row as it was: the state's time and retiredUntil move only when the state does.
const UPDATE =
  'UPDATE domain_pool SET subdomains = coalesce($2::boolean, subdomains), state = coalesce($3::text, state), ' +
  'state_changed_at = CASE WHEN $3::text IS NULL OR $3::text = state THEN state_changed_at ELSE $4::bigint END, ' +
  "retired_until = CASE WHEN $3::text IS NULL OR $3::text = state THEN retired_until WHEN $3::text = 'retired' THEN $5::bigint ELSE NULL END " +
  `WHERE domain = $1 RETURNING ${COLUMNS}`;

export function postgresDomainPoolStore(pool: pg.Pool, transaction: Transaction): DomainPoolStore {
  return {
    async listPoolDomains() {
      return (await pool.query<PoolRow>(`SELECT ${COLUMNS} FROM domain_pool ORDER BY id`)).rows.map(toRecord);
    },
    async poolVersion() {
      return String((await pool.query<{ version: string }>('SELECT version FROM domain_pool_version WHERE id = 1')).rows[0]!.version);
    },
    async seedPoolDomains(domains, at) {
      return transaction(async (client) => {
        // The row lock makes a second node starting at the same time wait, then see it seeded.
        const { rows } = await client.query<{ seeded: boolean }>('SELECT seeded FROM domain_pool_version WHERE id = 1 FOR UPDATE');
        if (rows[0]!.seeded) return false;
        for (const d of domains) await client.query(ADD, [d.domain, d.subdomains, at]);
        await client.query('UPDATE domain_pool_version SET seeded = true WHERE id = 1');
        return true;
      });
    },
    async addPoolDomain(d) {
      const { rows } = await pool.query<PoolRow>(ADD, [d.domain, d.subdomains, d.addedAt]);
      return rows[0] && toRecord(rows[0]);
    },
    async updatePoolDomain(domain, change) {
      const { rows } = await pool.query<PoolRow>(UPDATE, [domain, change.subdomains ?? null, change.state ?? null, change.at, change.retiredUntil]);
      return rows[0] && toRecord(rows[0]);
    },
    async deletePoolDomain(domain) {
      return ((await pool.query('DELETE FROM domain_pool WHERE domain = $1', [domain])).rowCount ?? 0) > 0;
    },
  };
}
