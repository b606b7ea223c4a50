// The mails of a delivery counted per hour, recipient domain and sender domain, as both
// backends add them to domain_mail_hours (migration 0024) in the delivery's transaction:
// the admin's per-domain figures read these counts, never the mails themselves.

/** Milliseconds in an hour: mail is counted per UTC hour, named by its start (ms since the epoch). */
export const HOUR_MS = 3_600_000;

/** How many hours of counts are kept: the longest window the admin asks for (31 days), and a day more. */
export const DOMAIN_COUNT_HOURS = 32 * 24;

/** The lower-cased domain of an address ('' when it has none, as the null sender). */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}

export interface DomainCount {
  hour: number;
  domain: string;
  senderDomain: string;
  mails: number;
}

/** One count per (hour, recipient domain, sender domain), in key order (rows are locked in that order, so two deliveries cannot deadlock). */
export function domainCounts(mails: readonly { address: string; source: string; createdAt: number }[]): DomainCount[] {
  const counts = new Map<string, DomainCount>();
  for (const m of mails) {
    const hour = Math.floor(m.createdAt / HOUR_MS) * HOUR_MS;
    const domain = domainOf(m.address);
    const senderDomain = domainOf(m.source);
    const key = `${hour}\n${domain}\n${senderDomain}`;
    const count = counts.get(key);
    if (count) count.mails++;
    else counts.set(key, { hour, domain, senderDomain, mails: 1 });
  }
  return [...counts.values()].sort((a, b) => a.hour - b.hour || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0) || (a.senderDomain < b.senderDomain ? -1 : a.senderDomain > b.senderDomain ? 1 : 0));
}
