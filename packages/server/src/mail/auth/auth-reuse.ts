// Verdicts reused on the server's thread (auth.ts), so that mail the checks' thread
// would answer the same way does not travel there and back (docs/decisions.md
// "Authentication verdicts", reuse).
//
// For mail without a DKIM signature and without an ARC set, the verdict is made of SPF
// (the client's address, HELO and MAIL FROM) and DMARC (the authors in the From fields and
// the domain SPF passed) alone, and the checks' thread keeps both results for a while
// (auth-dns.ts "recent"). It says how long (auth-check.ts `reusableFor`), and a mail with
// the same client, HELO, MAIL FROM and From fields gets that verdict here until then.
//
// The key is read from the header block as written, never interpreted: only a block
// the checks' thread reads field by field the same way qualifies (at most
// REUSE_HEADER_BYTES, every line ended by CRLF, every field named before a colon), and the
// From fields are compared byte for byte. Anything else goes to the thread, as before.
// Reading at most 8 KiB a mail keeps this cheap on the event loop whatever the mail.
import { LRUCache } from 'lru-cache';
import type { MailAuth } from '@temp-inbox/api';
import type { AuthClient } from './auth-check.js';
import { VERIFIER_FIELDS } from './auth-verdict.js';

/** A header block longer than this is never reused (legitimate unsigned mail has one or two KiB). */
export const REUSE_HEADER_BYTES = 8 * 1024;
/** Keys held at most, by their length: a key is at most about REUSE_HEADER_BYTES. */
const REUSE_MAX_CHARS = 1024 * 1024;
/**
 * Taken off the time the thread gives: its cache reads the clock at most once a second
 * (auth-dns.ts ttlResolution), so what it says is left may be up to a second too long.
 */
const CLOCK_SLACK_MS = 1000;

const HEADER_END = Buffer.from('\r\n\r\n');

/** The key of a message whose verdict may be reused, or undefined when it may not. */
export function reuseKey(raw: Uint8Array, client: AuthClient): string | undefined {
  // The header block's end is found in the bytes, so only the block becomes a string.
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, REUSE_HEADER_BYTES));
  const end = head.indexOf(HEADER_END);
  if (end <= 0) return undefined;
  const lines = head.toString('latin1', 0, end).split('\r\n');
  // A first line that continues nothing is a field of its own to the thread's reader.
  if (lines[0]!.startsWith(' ') || lines[0]!.startsWith('\t')) return undefined;
  const from: string[] = [];
  let inFrom = false;
  for (const line of lines) {
    if (line.includes('\r') || line.includes('\n')) return undefined;
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (inFrom) from[from.length - 1] += `\r\n${line}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (VERIFIER_FIELDS.has(name)) return undefined;
    inFrom = name === 'from';
    if (inFrom) from.push(line);
  }
  return JSON.stringify([client.ip, client.helo, client.sender, from]);
}

export interface VerdictReuse {
  get(key: string): MailAuth | undefined;
  /** Keeps `verdict` under `key` for `ms` (as the thread said), less the clock's slack. */
  set(key: string, verdict: MailAuth, ms: number): void;
  clear(): void;
  /** Verdicts answered from here so far (tests, metrics). */
  readonly reused: number;
}

export function createVerdictReuse(): VerdictReuse {
  const kept = new LRUCache<string, MailAuth>({ maxSize: REUSE_MAX_CHARS, sizeCalculation: (_v, key) => key.length, ttlAutopurge: false });
  let reused = 0;
  return {
    get(key) {
      const verdict = kept.get(key);
      if (verdict) reused++;
      return verdict;
    },
    set(key, verdict, ms) {
      if (ms > CLOCK_SLACK_MS) kept.set(key, verdict, { ttl: ms - CLOCK_SLACK_MS });
    },
    clear: () => kept.clear(),
    get reused() {
      return reused;
    },
  };
}
