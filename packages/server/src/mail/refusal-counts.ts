// Every SMTP refusal counted per reason (docs/operating.md "Abuse controls"): at once in the
// metric temp_inbox_smtp_refusals_total, and per UTC hour, reason and recipient domain in the
// store, where GET /api/admin/refusals reads them. The SMTP side only adds to a map in memory;
// the map is written in one batch every few seconds (and at stop), so a flood of refusals
// costs the database one upsert per hour, reason and domain, never one per refusal.
import type { Logger } from 'pino';
import { REFUSAL_REASONS, type RefusalReason } from '../domain/refusal-reasons.js';
import type { Metrics } from '../observability/metrics.js';
import { HOUR_MS } from '../storage/domain-counts.js';
import type { RefusalCount, RefusalStore } from '../storage/store.js';

export { REFUSAL_REASONS, type RefusalReason } from '../domain/refusal-reasons.js';

export { HOUR_MS };
/** How long hourly counts are kept: the retention sweep prunes older ones (GET /api/admin/refusals reads at most 31 days). */
export const REFUSALS_KEPT_MS = 31 * 24 * HOUR_MS;
/** How often the counts in memory are written. */
export const REFUSAL_FLUSH_MS = 5000;
/**
 * Recipient domains one node records per hour; past them a refusal counts under OTHER_DOMAINS.
 * Unknown recipients may name any domain, and a prober must not grow the table without end.
 */
export const MAX_DOMAINS_PER_HOUR = 100;
export const OTHER_DOMAINS = '(other)';
/** Longest domain (RFC 1035); a longer one counts under OTHER_DOMAINS. */
const MAX_DOMAIN_CHARS = 253;

/** What SMTP is given to count a refusal: the pool's retired-domain refusal counts through it too. */
export type CountRefusal = (reason: RefusalReason, recipientDomain: string | undefined) => void;

export interface RefusalCounts {
  /** Counts one refusal (never waits, never throws); the recipient's domain, or undefined before any recipient. */
  count: CountRefusal;
  /** Writes the counts held in memory now (the admin's read does, so that it sees this node's latest). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  close(): Promise<void>;
}

export interface RefusalCountsOptions {
  store: RefusalStore;
  metrics?: Metrics | undefined;
  logger?: Logger | undefined;
  now: () => number;
  flushMs?: number;
  /**
   * The pool domain a recipient domain is counted under (a subdomain under its pool domain);
   * undefined: under OTHER_DOMAINS, so that probes of invented domains and random labels
   * cannot fill an hour's MAX_DOMAINS_PER_HOUR and push the pool's own refusals out.
   * Absent: every domain is counted as it is, up to that bound.
   */
  countedUnder?: ((domain: string) => string | undefined) | undefined;
}

/** The recipient domain as counted: lower-cased, without a trailing dot; '' for none. */
export function countedDomain(domain: string | undefined): string {
  if (domain === undefined) return '';
  const d = domain.trim().toLowerCase().replace(/\.$/, '');
  return d.length > MAX_DOMAIN_CHARS ? OTHER_DOMAINS : d;
}

/** The lower-cased domain of an address ('' when it has none), as the delivery counts count it. */
export { domainOf } from '../storage/domain-counts.js';

export function createRefusalCounts(opts: RefusalCountsOptions): RefusalCounts {
  const { store, metrics, logger, now } = opts;
  const known = new Set<string>(REFUSAL_REASONS);
  let pending = new Map<string, RefusalCount>();
  let domainsHour = 0;
  const domains = new Set<string>();
  let writing: Promise<void> = Promise.resolve();

  const domainFor = (hour: number, raw: string | undefined): string => {
    if (hour !== domainsHour) {
      domainsHour = hour;
      domains.clear();
    }
    const named = countedDomain(raw);
    const d = named === '' || named === OTHER_DOMAINS || !opts.countedUnder ? named : (opts.countedUnder(named) ?? OTHER_DOMAINS);
    if (d === '' || domains.has(d)) return d;
    if (domains.size >= MAX_DOMAINS_PER_HOUR) return OTHER_DOMAINS;
    domains.add(d);
    return d;
  };

  const add = (into: Map<string, RefusalCount>, row: RefusalCount) => {
    const key = `${row.hour} ${row.reason} ${row.recipientDomain}`;
    const had = into.get(key);
    if (had) had.count += row.count;
    else into.set(key, { ...row });
  };

  const write = async () => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await store.addRefusals([...batch.values()]);
    } catch (err) {
      // Kept for the next batch: a database that is away for a while loses no count.
      for (const row of batch.values()) add(pending, row);
      logger?.warn({ err }, 'the SMTP refusal counts could not be written; kept for the next try');
    }
  };
  // One batch at a time, in order.
  const flush = () => (writing = writing.then(write));

  const timer = setInterval(() => void flush(), opts.flushMs ?? REFUSAL_FLUSH_MS);
  timer.unref();

  return {
    count(reason, recipientDomain) {
      if (!known.has(reason)) return;
      metrics?.smtpRefusal(reason);
      const hour = Math.floor(now() / HOUR_MS) * HOUR_MS;
      add(pending, { hour, reason, recipientDomain: domainFor(hour, recipientDomain), count: 1 });
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
