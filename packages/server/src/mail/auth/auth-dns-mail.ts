// The DNS look-ups of one mail's authentication checks (auth-dns.ts forMail): answered from
// the cache, else asked on the wire, all of them ending by the mail's deadline and within its
// count of look-ups; a name no DNS can hold, or a record type no check asks for, is "no such
// name" unasked, and while the servers are silent nothing is asked (auth-dns-silence.ts).
import type { LRUCache } from 'lru-cache';
import type { ServerSilence } from './auth-dns-silence.js';

/** What mailauth's resolver option answers: TXT as arrays of strings, MX as objects, A/AAAA/PTR as strings. */
export type DnsAnswer = unknown[];
export type MailResolver = (name: string, rrtype: string) => Promise<DnsAnswer>;

export interface MailLookups {
  /** The resolver for mailauth, bound to this mail's deadline and look-up count. */
  resolve: MailResolver;
  /** Whether some look-up of this mail failed temporarily (time-out, SERVFAIL, refused, over budget). */
  readonly failedTemporarily: boolean;
  /**
   * How long every temporary failure these look-ups met is still kept in the cache, so
   * that the same look-ups would meet it again (milliseconds); undefined when none failed,
   * or when one failed by this mail's own budget (its deadline or look-up count), which
   * another mail would not meet.
   */
  readonly failureKeptMs: number | undefined;
}

export type Entry = { answer: DnsAnswer; bytes: number } | { code: string; bytes: number };
/** What a look-up still unanswered at its mail's deadline gives (never cached). */
export const TIMED_OUT: Entry = { code: 'ETIMEOUT', bytes: 0 };

/** "No such name" and "no such record": answers to remember (briefly), and what mailauth reads as "none". */
export const NEGATIVE = new Set(['ENOTFOUND', 'ENODATA']);
/** The record types SPF, DKIM, DMARC and ARC ask for; anything else is refused unasked. */
const RRTYPES = new Set(['TXT', 'A', 'AAAA', 'MX', 'PTR']);
/** c-ares: first try after 500 ms, then 1 s (each try doubles); the mail's deadline cuts it short anyway. */
export const RESOLVER_TIMEOUT_MS = 500;

/** An error as node:dns gives one (mailauth reads its code), without a stack: capturing one was a tenth of a check. */
function dnsError(code: string, name: string): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return Object.assign(new Error(`${code} ${name}`), { code });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A host name DNS can hold: at most 253 characters, labels of 1..63 printable ASCII characters. */
function plausibleName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && /^[\x21-\x7e]+$/.test(name) && name.split('.').every((l) => l.length > 0 && l.length <= 63);
}

export interface LookupContext {
  cache: LRUCache<string, Entry>;
  /** One look-up on the wire, its answer or its error as an entry (auth-dns.ts). */
  ask: (key: string, name: string, rrtype: string) => Promise<Entry>;
  silence: ServerSilence;
  maxLookups: number;
}

/** Look-ups for one mail that must all end by `deadline` (performance.now() milliseconds). */
export function lookupsForMail(deadline: number, { cache, ask, silence, maxLookups }: LookupContext): MailLookups {
  let lookups = 0;
  let failedTemporarily = false;
  let failureKeptMs = Infinity;
  /** A failure of this mail's own budget: not one the cache keeps for the next mail. */
  const overBudget = (name: string): never => {
    failureKeptMs = 0;
    return fail('ETIMEOUT', name);
  };
  const fail = (code: string, name: string): never => {
    if (!NEGATIVE.has(code)) failedTemporarily = true;
    throw dnsError(code, name);
  };
  const resolve: MailResolver = async (rawName, rawType) => {
    const name = String(rawName).toLowerCase().replace(/\.$/, '');
    const rrtype = String(rawType).toUpperCase();
    // A name no DNS can hold (a hostile d= or s=) does not exist: nothing is sent for it.
    if (!RRTYPES.has(rrtype) || !plausibleName(name)) return fail('ENOTFOUND', name);
    const key = `${rrtype} ${name}`;
    let entry = cache.get(key);
    if (!entry) {
      if (++lookups > maxLookups) return overBudget(name);
      const left = deadline - performance.now();
      if (left <= 0) return overBudget(name);
      if (silence.silent) {
        if (silence.recheckDue()) silence.check();
        // Not kept for the next mail either: the servers may answer again at any time.
        return overBudget(name);
      }
      let timer: NodeJS.Timeout | undefined;
      let stopWaiting: (() => void) | undefined;
      // Unanswered when the resolver first asks again: are the servers there at all?
      const suspect = setTimeout(() => silence.silent || silence.check(), RESOLVER_TIMEOUT_MS);
      entry = await Promise.race([
        ask(key, name, rrtype),
        new Promise<Entry>((resolveTimeout) => {
          stopWaiting = silence.wait(() => resolveTimeout(TIMED_OUT));
          timer = setTimeout(() => resolveTimeout(TIMED_OUT), left);
        }),
      ]).finally(() => {
        clearTimeout(timer);
        clearTimeout(suspect);
        stopWaiting!();
      });
      if (entry === TIMED_OUT) return overBudget(name);
    }
    if ('code' in entry) {
      // A failure the cache holds is met again by every mail while it is held.
      if (!NEGATIVE.has(entry.code)) failureKeptMs = Math.min(failureKeptMs, cache.getRemainingTTL(key));
      return fail(entry.code, name);
    }
    return entry.answer;
  };
  return {
    resolve,
    get failedTemporarily() {
      return failedTemporarily;
    },
    get failureKeptMs() {
      return failedTemporarily && failureKeptMs > 0 && Number.isFinite(failureKeptMs) ? failureKeptMs : undefined;
    },
  };
}
