// DNS for the authentication checks (auth-worker.ts), in the worker thread that runs
// them: node:dns's Resolver (c-ares, its own sockets; never the thread pool that
// getaddrinfo and the file system share) against DNS_SERVERS or the system's servers,
// a bounded cache shared by every mail of the thread, and a budget per mail.
//
// The budget (docs/decisions.md "Authentication verdicts"): all the look-ups of one
// mail together end by its deadline, 2 s after its checks start. A look-up still
// unanswered then fails with ETIMEOUT, and one asked for after it fails at once, so a
// slow or silent name server costs each mail at most the budget, and the result that
// needed the answer is temperror. The cache keeps answers 5 minutes, "no such name /
// no such record" 30 seconds (node:dns does not tell the TTL of a TXT record), and
// failures 5 seconds. Identical look-ups in flight at once are asked once.
//
// Name servers that answer nothing at all (a runner whose DNS is cut off): a look-up
// still unanswered when the resolver first asks again (500 ms) makes it ask the
// servers for the root's NS records, which any working server answers at once. When
// that goes unanswered too and nothing else was answered meanwhile, the servers are
// silent: the look-ups waiting for them end at once, and new ones fail at once
// (temperror) instead of each mail waiting out its budget, while the root question is
// asked again 5 s after the last; the first answer ends that. A name server that is
// slow for some names only (a sender's dead domain) does not do it: the root question
// is answered (docs/decisions.md "Authentication verdicts").
import { Resolver } from 'node:dns/promises';
import { LRUCache } from 'lru-cache';
import type { AuthResult } from '@temp-inbox/api';
import { lookupsForMail, NEGATIVE, RESOLVER_TIMEOUT_MS, type DnsAnswer, type Entry, type MailLookups } from './auth-dns-mail.js';
import { createServerSilence, NO_REPLY } from './auth-dns-silence.js';

export type { DnsAnswer, MailLookups, MailResolver } from './auth-dns-mail.js';

export interface AuthDnsOptions {
  /** ip or ip:port ([v6]:port) each, as DNS_SERVERS gives them; undefined: the system's. */
  servers?: string[] | undefined;
  /** Cache limits (defaults: 10,000 entries, 4 MiB of answers). */
  maxEntries?: number;
  maxBytes?: number;
  positiveTtlMs?: number;
  negativeTtlMs?: number;
  /** Look-ups one mail may make (SPF alone may make 10 per RFC 7208 §4.6.4, and each include its own). */
  maxLookupsPerMail?: number;
  /** While the servers are silent, how often they are asked again (default 5 s). */
  silentRecheckMs?: number;
  /** Told when the servers are found silent (true) and when they answer again (false). */
  onSilence?: (silent: boolean) => void;
}

export const DEFAULT_POSITIVE_TTL_MS = 5 * 60_000;
export const DEFAULT_NEGATIVE_TTL_MS = 30_000;
const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;
/** An answer larger than this (a TXT record set over TCP can be 64 KiB) is used but not kept. */
const MAX_ENTRY_BYTES = 16 * 1024;
const DEFAULT_MAX_LOOKUPS = 50;
/**
 * A failed look-up (time-out, SERVFAIL, refused) is kept this long, as RFC 9520 asks of
 * resolvers (at least a second): while a name server is down, the mail that follows
 * gets its temperror at once instead of waiting out the budget again.
 */
const FAILURE_TTL_MS = 5000;
/** How long a check's result is kept (AuthDns.recent): as long as "no such name", the shortest-kept answer. */
const RECENT_RESULTS_MS = 30_000;
/** c-ares tries twice: after 500 ms (auth-dns-mail.ts RESOLVER_TIMEOUT_MS), then 1 s. */
const RESOLVER_TRIES = 2;

/** While the servers are silent, the root question is asked again this often. */
const SILENT_RECHECK_MS = 5000;

/** A result of a check kept by its inputs (auth-check.ts): the word, and the domain SPF checked. */
export interface RecentResult {
  word: AuthResult;
  domain: string;
}

export interface AuthDns {
  /** Look-ups for one mail that must all end by `deadline` (performance.now() milliseconds). */
  forMail(deadline: number): MailLookups;
  /**
   * SPF and DMARC results of the last 30 seconds, by everything they depend on but DNS
   * (SPF: the client's address, HELO and MAIL FROM; DMARC: the author and the domains that
   * passed). The answers they came from are kept longer than that, so a result kept here
   * is one the same check would give again; it spares mail from one sender a fifth of a
   * check's CPU. A temporary error is kept only as long as the failed answers it came from
   * (MailLookups.failureKeptMs). Kept with the answers, and cleared with them.
   */
  readonly recent: LRUCache<string, RecentResult>;
  /** Answers held (for tests and metrics). */
  readonly cached: number;
  /** The name servers answer nothing at all: look-ups not in the cache fail at once. */
  readonly silent: boolean;
  clear(): void;
}

export function createAuthDns(opts: AuthDnsOptions = {}): AuthDns {
  const resolver = new Resolver({ timeout: RESOLVER_TIMEOUT_MS, tries: RESOLVER_TRIES });
  if (opts.servers?.length) resolver.setServers(opts.servers);
  const positiveTtl = opts.positiveTtlMs ?? DEFAULT_POSITIVE_TTL_MS;
  const negativeTtl = opts.negativeTtlMs ?? DEFAULT_NEGATIVE_TTL_MS;
  const maxLookups = opts.maxLookupsPerMail ?? DEFAULT_MAX_LOOKUPS;
  const cache = new LRUCache<string, Entry>({
    max: opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
    maxSize: opts.maxBytes ?? DEFAULT_MAX_BYTES,
    maxEntrySize: MAX_ENTRY_BYTES,
    sizeCalculation: (e) => Math.max(1, e.bytes),
    // A second is fine enough for TTLs of 30 s and 5 min, and spares re-reading the clock.
    ttlResolution: 1000,
  });
  const inFlight = new Map<string, Promise<Entry>>();
  const silence = createServerSilence(resolver, { recheckMs: opts.silentRecheckMs ?? SILENT_RECHECK_MS, onSilence: opts.onSilence });
  const { heard } = silence;
  const recent = new LRUCache<string, RecentResult>({ max: opts.maxEntries ?? DEFAULT_MAX_ENTRIES, ttl: RECENT_RESULTS_MS, ttlResolution: 1000 });

  /** One look-up on the wire, its answer or its error as an entry, kept (a failure briefly). */
  function ask(key: string, name: string, rrtype: string): Promise<Entry> {
    const pending = inFlight.get(key);
    if (pending) return pending;
    const p = (resolver.resolve(name, rrtype) as Promise<DnsAnswer>).then(
      (answer): Entry => {
        heard();
        const e = { answer, bytes: key.length + JSON.stringify(answer).length };
        cache.set(key, e, { ttl: positiveTtl });
        return e;
      },
      (err: { code?: string }): Entry => {
        const code = typeof err?.code === 'string' ? err.code : 'ESERVFAIL';
        if (!NO_REPLY.has(code)) heard();
        const e = { code, bytes: key.length + code.length };
        cache.set(key, e, { ttl: NEGATIVE.has(code) ? negativeTtl : FAILURE_TTL_MS });
        return e;
      },
    );
    inFlight.set(key, p);
    void p.finally(() => inFlight.delete(key));
    return p;
  }

  return {
    forMail: (deadline) => lookupsForMail(deadline, { cache, ask, silence, maxLookups }),
    recent,
    get cached() {
      return cache.size;
    },
    get silent() {
      return silence.silent;
    },
    clear() {
      cache.clear();
      recent.clear();
    },
  };
}
