// The domain pool in SQLite (domain-pool-store.ts); migrations/0022_domain_pool.sql's
// triggers move the version at each change.
import type Database from 'better-sqlite3';
import type { DomainPoolStore, PoolDomainRecord, PoolDomainState } from '../domain-pool-store.js';

interface PoolRow {
  domain: string;
  state: PoolDomainState;
  subdomains: number;
  added_at: number;
  state_changed_at: number;
  retired_until: number | null;
}

const COLUMNS = 'domain, state, subdomains, added_at, state_changed_at, retired_until';
const toRecord = (r: PoolRow): PoolDomainRecord => ({
  domain: r.domain,
  state: r.state,
  subdomains: r.subdomains === 1,
  addedAt: r.added_at,
  stateChangedAt: r.state_changed_at,
  retiredUntil: r.retired_until,
});

export function sqliteDomainPoolStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): DomainPoolStore {
  const q = {
    list: db.prepare(`SELECT ${COLUMNS} FROM domain_pool ORDER BY id`),
    version: db.prepare('SELECT version FROM domain_pool_version WHERE id = 1').pluck(),
    seeded: db.prepare('SELECT seeded FROM domain_pool_version WHERE id = 1').pluck(),
    markSeeded: db.prepare('UPDATE domain_pool_version SET seeded = 1 WHERE id = 1'),
    add: db.prepare(`INSERT INTO domain_pool (domain, state, subdomains, added_at, state_changed_at) VALUES (?, 'active', ?, ?, ?) ON CONFLICT (domain) DO NOTHING RETURNING ${COLUMNS}`),
    // Every right-hand side reads the row as it was: the state's time and retiredUntil move only when the state does.
    update: db.prepare(
      'UPDATE domain_pool SET subdomains = coalesce(@subdomains, subdomains), state = coalesce(@state, state), ' +
        'state_changed_at = CASE WHEN @state IS NULL OR @state = state THEN state_changed_at ELSE @at END, ' +
        "retired_until = CASE WHEN @state IS NULL OR @state = state THEN retired_until WHEN @state = 'retired' THEN @retiredUntil ELSE NULL END " +
        `WHERE domain = @domain RETURNING ${COLUMNS}`,
    ),
    remove: db.prepare('DELETE FROM domain_pool WHERE domain = ?'),
  };
  const seed = db.transaction((domains: { domain: string; subdomains: boolean }[], at: number): boolean => {
    if (q.seeded.get() === 1) return false;
    for (const d of domains) q.add.get(d.domain, d.subdomains ? 1 : 0, at, at);
    q.markSeeded.run();
    return true;
  });

  return {
    async listPoolDomains() {
      return (q.list.all() as PoolRow[]).map(toRecord);
    },
    async poolVersion() {
      return String(q.version.get() as number);
    },
    async seedPoolDomains(domains, at) {
      return write(() => seed(domains, at));
    },
    async addPoolDomain(d) {
      const row = await write(() => q.add.get(d.domain, d.subdomains ? 1 : 0, d.addedAt, d.addedAt) as PoolRow | undefined);
      return row && toRecord(row);
    },
    async updatePoolDomain(domain, change) {
      const params = { domain, state: change.state ?? null, subdomains: change.subdomains === undefined ? null : change.subdomains ? 1 : 0, at: change.at, retiredUntil: change.retiredUntil };
      const row = await write(() => q.update.get(params) as PoolRow | undefined);
      return row && toRecord(row);
    },
    async deletePoolDomain(domain) {
      return write(() => q.remove.run(domain).changes > 0);
    },
  };
}
