// The admin's per-domain figures in PostgreSQL (store.ts OperatorStore), as
// sqlite-domain-stats.ts does in SQLite: mails counted per hour, recipient domain and
// sender domain in domain_mail_hours (migration 0024), added in each delivery's
// transaction by postgres-mail-writes.ts, and the addresses per domain that the
// addresses' triggers keep in domain_addresses.
import type pg from 'pg';
import { DOMAIN_COUNT_HOURS, HOUR_MS, domainCounts } from '../domain-counts.js';
import type { DomainMailCount, OperatorStore } from '../operator-store.js';
import type { NewMail } from '../store.js';
import { query as q } from './postgres-connection.js';

/**
 * Adds a delivery's mails to their hours' counts, in the caller's transaction, in the
 * `shard` row (migrations/0024); rows in key order, so two deliveries cannot deadlock.
 * A subdomain of a pool domain counts under the pool domain. The first delivery of each
 * hour on a node removes the hours past DOMAIN_COUNT_HOURS.
 */
export async function countDomainMails(client: pg.PoolClient, mails: readonly NewMail[], shard: number, prune: { hour: number }): Promise<void> {
  for (const c of domainCounts(mails)) {
    await q(
      client,
      'INSERT INTO domain_mail_hours (hour, domain, sender_domain, shard, mails) VALUES ($1, ' +
        "coalesce((SELECT p.domain FROM domain_pool p WHERE right($2, length(p.domain) + 1) = '.' || p.domain ORDER BY length(p.domain) DESC LIMIT 1), $2), " +
        '$3, $4, $5) ON CONFLICT (hour, domain, sender_domain, shard) DO UPDATE SET mails = domain_mail_hours.mails + excluded.mails',
      [c.hour, c.domain, c.senderDomain, shard, c.mails],
    );
    if (c.hour > prune.hour) {
      prune.hour = c.hour;
      await q(client, 'DELETE FROM domain_mail_hours WHERE hour < $1', [c.hour - DOMAIN_COUNT_HOURS * HOUR_MS]);
    }
  }
}

export function postgresDomainStats(pool: pg.Pool): Pick<OperatorStore, 'domainMailCounts' | 'addressesPerDomain'> {
  const hour = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;
  return {
    async domainMailCounts(since, recentSince) {
      // Hours are named by their start: the hour holding `since` counts whole.
      const { rows } = await q<{ domain: string; sender_domain: string; mails: string; recent: string }>(
        pool,
        'SELECT domain, sender_domain, sum(mails) AS mails, sum(CASE WHEN hour >= $1 THEN mails ELSE 0 END) AS recent ' +
          'FROM domain_mail_hours WHERE hour >= $2 GROUP BY domain, sender_domain',
        [hour(recentSince), hour(since)],
      );
      return rows.map((r): DomainMailCount => ({ domain: r.domain, senderDomain: r.sender_domain, mails: Number(r.mails), recent: Number(r.recent) }));
    },
    async addressesPerDomain() {
      // Kept by the addresses' triggers (migration 0024): 16 shard rows per domain, not a row per address.
      const { rows } = await q<{ domain: string; addresses: string }>(pool, 'SELECT domain, sum(addresses) AS addresses FROM domain_addresses GROUP BY domain HAVING sum(addresses) > 0');
      return rows.map((r) => ({ domain: r.domain, addresses: Number(r.addresses) }));
    },
  };
}
