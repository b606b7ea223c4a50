// mailauth's results as the verdict stored with a mail (metadata.auth): RFC 8601
// result words only, DKIM one entry per signature, every field bounded
// (docs/decisions.md "Authentication verdicts" has the mapping and why). Pure.
import type { AuthResult, DkimVerdict, MailAuth } from '@temp-inbox/api';

/** DKIM entries listed at most (RFC 6376 §6.1 lets a verifier limit the signatures it checks). */
export const MAX_DKIM_SIGNATURES = 10;
/** d= is a domain name (at most 253 characters); s= is cut to one DNS label's length. */
export const MAX_DKIM_DOMAIN_CHARS = 253;
export const MAX_DKIM_SELECTOR_CHARS = 63;
/**
 * The most `,"auth":{…}` adds to the metadata's JSON: the parse fits the rest of the
 * metadata into what is left of its 16 KiB (metadata.ts). Ten signatures of ordinary
 * domains take about 700 bytes; entries past this are dropped (only mail with many
 * signatures of long names has them).
 */
export const MAX_AUTH_JSON_BYTES = 1024;

/** The header fields (lower-case names) that make mailauth's verifier do more than read the From field. */
export const VERIFIER_FIELDS: ReadonlySet<string> = new Set(['dkim-signature', 'arc-seal', 'arc-message-signature', 'arc-authentication-results']);

const WORDS = new Set<string>(['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror']);

/**
 * A result word of mailauth's as one of RFC 8601's seven. mailauth also says
 * `temperr` (temperror), `policy` (a DKIM key shorter than 1024 bits: RFC 8301 §3.2
 * says such a signature is not valid, so fail) and `skipped` (none). Anything else
 * is neutral, RFC 8601 §2.7.1's word for "other failures not covered elsewhere".
 */
export function authWord(result: unknown): AuthResult {
  const r = typeof result === 'string' ? result.toLowerCase() : '';
  if (WORDS.has(r)) return r as AuthResult;
  if (r === 'temperr') return 'temperror';
  if (r === 'policy') return 'fail';
  if (r === 'skipped') return 'none';
  return 'neutral';
}

/**
 * One DKIM signature's word. mailauth says neutral for several outcomes RFC 6376
 * names otherwise: a body hash that does not match is PERMFAIL "body hash did not
 * verify" (§6.1.3), which RFC 8601 reports as fail; a key that does not exist (§6.1.2
 * "no key for signature") or cannot be used (§3.6.1: unknown version or key type,
 * invalid key) is permerror. Other neutral outcomes (expired, unreadable signature
 * value) stay neutral.
 */
export function dkimWord(status: { result?: unknown; comment?: unknown } | undefined): AuthResult {
  const word = authWord(status?.result);
  if (word !== 'neutral') return word;
  const comment = typeof status?.comment === 'string' ? status.comment : '';
  if (comment === 'body hash did not verify') return 'fail';
  if (['no key', 'unknown key version', 'unknown key type', 'invalid public key'].includes(comment)) return 'permerror';
  return 'neutral';
}

/** Printable ASCII without `"` and `\`, so each character is one byte of JSON; lower-cased (DNS names are case-insensitive). */
function cleanName(s: unknown, max: number): string {
  return (typeof s === 'string' ? s : '')
    .trim()
    .toLowerCase()
    .replace(/[^\x21-\x7e]|["\\]/g, '')
    .slice(0, max);
}

export function dkimEntry(domain: unknown, selector: unknown, result: AuthResult): DkimVerdict {
  return { domain: cleanName(domain, MAX_DKIM_DOMAIN_CHARS), selector: cleanName(selector, MAX_DKIM_SELECTOR_CHARS), result };
}

/** The metadata bytes a verdict adds, as `,"auth":{…}`. */
export const authJsonBytes = (auth: MailAuth): number => Buffer.byteLength(`,"auth":${JSON.stringify(auth)}`);

/** The whole verdict, bounded: at most MAX_DKIM_SIGNATURES entries, and as many as fit in MAX_AUTH_JSON_BYTES. */
export function verdict(v: { spf: AuthResult; dkim: DkimVerdict[]; dmarc: AuthResult; arc: AuthResult }): MailAuth {
  const out = { spf: v.spf, dkim: v.dkim.slice(0, MAX_DKIM_SIGNATURES), dmarc: v.dmarc, arc: v.arc };
  while (out.dkim.length > 1 && authJsonBytes(out) > MAX_AUTH_JSON_BYTES) out.dkim.pop();
  return out;
}

/**
 * The verdict of a mail whose checks could not run or finish (no thread free in time,
 * the worker ended): each result temperror, and DKIM one entry without a domain,
 * because whether and by whom the mail was signed is not known.
 */
export function unknownVerdict(word: 'temperror' | 'permerror'): MailAuth {
  return { spf: word, dkim: [dkimEntry('', '', word)], dmarc: word, arc: word };
}
