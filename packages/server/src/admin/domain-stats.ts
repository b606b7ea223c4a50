// The admin's per-domain figures (GET /api/admin/domains/stats; docs/operating.md "The
// operator's view"): addresses, mails of the last day and of the window, the share of the
// window's mail SMTP refused, and the top sending domains, for every pool domain and every
// other domain an address uses. Read from the store's hourly counts (never the mails) and
// kept for a minute, so that a page left open costs one read a minute, not one a refresh.
import { poolDomainUnder } from '../domain/domain-pool.js';
import { HOUR_MS } from '../storage/domain-counts.js';
import type { Store } from '../storage/store.js';

/** Sending domains listed per domain. */
export const TOP_SENDING_DOMAINS = 5;
/** Longest window, in days (the hourly counts are kept 32 days). */
export const MAX_STATS_DAYS = 31;
/** How long an answer is reused. */
export const DOMAIN_STATS_TTL_MS = 60_000;

export interface DomainFigures {
  domain: string;
  addresses: number;
  mailsDay: number;
  mailsWeek: number;
  /** Refused / (refused + received) over the window; 0 when neither happened. */
  refusedShareWeek: number;
  topSendingDomains: { domain: string; mails: number }[];
}

type StatsStore = Pick<Store, 'listPoolDomains' | 'domainMailCounts' | 'addressesPerDomain' | 'listRefusals'>;

/** The pool domain `domain` is, or is under; else `domain` itself. */
const poolDomainOf = (domain: string, pool: readonly string[]): string => poolDomainUnder(domain, pool) ?? domain;

const DAY_MS = 24 * HOUR_MS;

/** Reads the figures from the store; `days` is the window (1..MAX_STATS_DAYS). */
async function readFigures(store: StatsStore, days: number, now: number): Promise<DomainFigures[]> {
  const since = now - days * DAY_MS;
  const [pool, counts, addresses, refusals] = await Promise.all([
    store.listPoolDomains(),
    store.domainMailCounts(since, now - DAY_MS),
    store.addressesPerDomain(),
    store.listRefusals(Math.floor(since / HOUR_MS) * HOUR_MS),
  ]);
  const poolNames = pool.map((p) => p.domain);
  const figures = new Map<string, DomainFigures & { senders: Map<string, number>; refused: number }>();
  const of = (raw: string) => {
    const domain = poolDomainOf(raw, poolNames);
    let f = figures.get(domain);
    if (!f) {
      f = { domain, addresses: 0, mailsDay: 0, mailsWeek: 0, refusedShareWeek: 0, topSendingDomains: [], senders: new Map(), refused: 0 };
      figures.set(domain, f);
    }
    return f;
  };
  for (const name of poolNames) of(name);
  for (const a of addresses) of(a.domain).addresses += a.addresses;
  // Mail and refusals count only under the domains listed: the pool's and those addresses use.
  const listed = (raw: string) => figures.get(poolDomainOf(raw, poolNames));
  for (const c of counts) {
    const f = listed(c.domain);
    if (!f) continue;
    f.mailsWeek += c.mails;
    f.mailsDay += c.recent;
    f.senders.set(c.senderDomain, (f.senders.get(c.senderDomain) ?? 0) + c.mails);
  }
  for (const r of refusals) {
    const f = r.recipientDomain ? listed(r.recipientDomain) : undefined;
    if (f) f.refused += r.count;
  }
  const poolOrder = new Map(poolNames.map((name, i) => [name, i]));
  return [...figures.values()]
    .sort((a, b) => (poolOrder.get(a.domain) ?? Infinity) - (poolOrder.get(b.domain) ?? Infinity) || a.domain.localeCompare(b.domain))
    .map(({ senders, refused, ...f }) => ({
      ...f,
      refusedShareWeek: refused + f.mailsWeek === 0 ? 0 : refused / (refused + f.mailsWeek),
      topSendingDomains: [...senders]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, TOP_SENDING_DOMAINS)
        .map(([domain, mails]) => ({ domain, mails })),
    }));
}

/** The figures for a window of `days`, each window's answer reused for DOMAIN_STATS_TTL_MS. */
export function createDomainStats(store: StatsStore, now: () => number = Date.now, beforeRead: () => Promise<void> | undefined = () => undefined): (days: number) => Promise<DomainFigures[]> {
  const kept = new Map<number, { at: number; figures: Promise<DomainFigures[]> }>();
  return (days) => {
    const t = now();
    const hit = kept.get(days);
    if (hit && t - hit.at < DOMAIN_STATS_TTL_MS) return hit.figures;
    const figures = Promise.resolve(beforeRead()).then(() => readFigures(store, days, t));
    kept.set(days, { at: t, figures });
    // A failed read is not kept: the next request tries again.
    figures.catch(() => kept.get(days)?.figures === figures && kept.delete(days));
    return figures;
  };
}
