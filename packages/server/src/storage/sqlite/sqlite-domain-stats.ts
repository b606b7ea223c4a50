// The admin's per-domain figures in SQLite (store.ts OperatorStore): mails counted per hour,
// recipient domain and sender domain in domain_mail_hours (migration 0024), added in each
// delivery's transaction by sqlite-mail-writes.ts, and the addresses per domain that the
// addresses' triggers keep in domain_addresses.
import type Database from 'better-sqlite3';
import { DOMAIN_COUNT_HOURS, HOUR_MS, domainCounts } from '../domain-counts.js';
import type { DomainMailCount, OperatorStore } from '../operator-store.js';
import type { NewMail } from '../store.js';

/**
 * Adds a delivery's mails to their hours' counts, in the caller's transaction. A
 * subdomain of a pool domain (random subdomains) counts under the pool domain, so
 * that the rows stay a few per domain. The first delivery of each hour removes the
 * hours past DOMAIN_COUNT_HOURS.
 */
export function sqliteDomainMailCounter(db: Database.Database): (mails: readonly NewMail[]) => void {
  const q = {
    add: db.prepare(
      'INSERT INTO domain_mail_hours (hour, domain, sender_domain, mails) VALUES (@hour, ' +
        "coalesce((SELECT p.domain FROM domain_pool p WHERE substr(@domain, -length(p.domain) - 1) = '.' || p.domain ORDER BY length(p.domain) DESC LIMIT 1), @domain), " +
        '@senderDomain, @mails) ON CONFLICT (hour, domain, sender_domain) DO UPDATE SET mails = mails + excluded.mails',
    ),
    prune: db.prepare('DELETE FROM domain_mail_hours WHERE hour < ?'),
  };
  let prunedHour = 0;
  return (mails) => {
    for (const c of domainCounts(mails)) {
      q.add.run(c);
      if (c.hour > prunedHour) {
        prunedHour = c.hour;
        q.prune.run(c.hour - DOMAIN_COUNT_HOURS * HOUR_MS);
      }
    }
  };
}

export function sqliteDomainStats(db: Database.Database): Pick<OperatorStore, 'domainMailCounts' | 'addressesPerDomain'> {
  const q = {
    counts: db.prepare(
      'SELECT domain, sender_domain AS senderDomain, sum(mails) AS mails, sum(CASE WHEN hour >= ? THEN mails ELSE 0 END) AS recent ' +
        'FROM domain_mail_hours WHERE hour >= ? GROUP BY domain, sender_domain',
    ),
    // Kept by the addresses' triggers (migration 0024): a row per domain, not per address.
    addresses: db.prepare('SELECT domain, addresses FROM domain_addresses WHERE addresses > 0'),
  };
  return {
    async domainMailCounts(since, recentSince) {
      // Hours are named by their start: the hour holding `since` counts whole.
      const hour = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;
      return q.counts.all(hour(recentSince), hour(since)) as DomainMailCount[];
    },
    async addressesPerDomain() {
      return q.addresses.all() as { domain: string; addresses: number }[];
    },
  };
}
