// The SSRF guard (docs/security.md "Webhooks"): a webhook is POSTed only to public
// addresses. A URL's host is resolved here, every address it resolves to is checked, and
// the request then connects to those checked addresses and nothing else (sender.ts), so a
// name whose DNS answer changes between the check and the connection (DNS rebinding)
// cannot send it anywhere else. Checked when the URL is set and again at every delivery.
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ADDRESS_REASONS, checkAddress } from '../domain/address-ranges.js';
import { FETCHED_WORDS, type FetchedAs, type WebhookTarget } from '../domain/webhook-url.js';

export { checkAddress, type AddressVerdict } from '../domain/address-ranges.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (IPv4 and IPv6). */
export type Lookup = (host: string) => Promise<ResolvedAddress[]>;

/** A target refused by the guard, or a host that could not be resolved; the message is a sentence fit for a 400. */
export class WebhookRefusedError extends Error {
  override name = 'WebhookRefusedError';
  /** The host name's look-up ran out of time (a slow name server holds a delivery slot as a slow receiver does). */
  constructor(message: string, readonly timedOut = false) {
    super(message);
  }
}

/** What a localhost name is, by definition: no resolver is asked. */
const LOCALHOST: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** Names that are loopback by definition (RFC 6761 §6.3): refused without asking DNS. */
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Every address the target's host resolves to, each checked; IPv4 first. Refused when
 * any one is not allowed: a receiver cannot make the guard pass by adding a public
 * address next to a private one. Throws WebhookRefusedError, whose message names what is
 * fetched (`as`: a webhook, or a report's link).
 */
export async function resolveTarget(target: WebhookTarget, opts: { allowPrivate: boolean; lookup: Lookup; timeoutMs: number; as?: FetchedAs }): Promise<ResolvedAddress[]> {
  const { host, rule } = FETCHED_WORDS[opts.as ?? 'webhook'];
  if (target.ip !== undefined) {
    const verdict = checkAddress(target.ip, opts.allowPrivate);
    if (!verdict.allowed) throw new WebhookRefusedError(`${host} is ${verdict.reason}; ${rule}.`);
    return [{ address: target.ip, family: isIP(target.ip) as 4 | 6 }];
  }
  if (isLocalhostName(target.host)) {
    if (!opts.allowPrivate) throw new WebhookRefusedError(`${host} is ${ADDRESS_REASONS['loopback']}; ${rule}.`);
    return LOCALHOST;
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await lookupWithin(opts.lookup, target.host, opts.timeoutMs);
  } catch (err) {
    if (err instanceof TimeoutError) throw new WebhookRefusedError(`${host} name did not resolve within ${Math.round(opts.timeoutMs / 100) / 10} s.`, true);
    throw new WebhookRefusedError(`${host} name does not resolve.`);
  }
  if (addresses.length === 0) throw new WebhookRefusedError(`${host} name does not resolve.`);
  for (const a of addresses) {
    const verdict = checkAddress(a.address, opts.allowPrivate);
    if (!verdict.allowed) throw new WebhookRefusedError(`${host} name resolves to ${verdict.reason}; ${rule}.`);
  }
  return [...addresses].sort((x, y) => x.family - y.family);
}

/** A look-up that found no answer in time: the resolver's own time-out (dnsLookup), or the caller's. */
class TimeoutError extends Error {}

/**
 * `lookup`'s answer, given until `timeoutMs` has passed. A resolver that gives up sooner
 * on its own (c-ares's time-outs and retries are its own, and vary with its version: the
 * test resolver gave up after 2 s where 5 s were allowed) is asked again, so that a
 * look-up refused for time took the whole time the refusal names.
 */
async function lookupWithin(lookup: Lookup, host: string, timeoutMs: number): Promise<ResolvedAddress[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const asked = performance.now();
    try {
      return await withTimeout(lookup(host), deadline - asked);
    } catch (err) {
      if (!(err instanceof TimeoutError)) throw err;
      const now = performance.now();
      if (now >= deadline) throw err;
      // One that says "time-out" at once is not asked in a loop: the time is waited out.
      if (now - asked < 10) {
        await new Promise((resolve) => setTimeout(resolve, deadline - now));
        throw err;
      }
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError()), Math.max(0, ms));
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Names resolved by DNS through c-ares (node:dns Resolver, the system's name servers), A
 * and AAAA at once: never on libuv's thread pool, where getaddrinfo would run and where
 * the SQLite WAL is synced before every SMTP 250, so receivers' slow name servers can
 * neither hold up mail nor queue each other's deliveries. /etc/hosts is not read (a
 * webhook is meant for a host DNS knows; localhost is answered above).
 */
export function dnsLookup(opts: { servers?: string[]; queryTimeoutMs?: number; tries?: number } = {}): Lookup {
  // Its own time-outs only pace its questions: resolveTarget bounds the look-up (lookupWithin).
  const resolver = new Resolver({ timeout: opts.queryTimeoutMs ?? 2000, tries: opts.tries ?? 2 });
  if (opts.servers) resolver.setServers(opts.servers);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const found: ResolvedAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length > 0) return found;
    const codes = [v4, v6].map((r) => (r.status === 'rejected' ? (r.reason as NodeJS.ErrnoException).code : undefined));
    throw codes.includes('ETIMEOUT') ? new TimeoutError() : new Error(`${host} does not resolve`);
  };
}
