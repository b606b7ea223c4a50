// The authentication checks of one message, with mailauth: SPF of the SMTP client
// for MAIL FROM (or HELO), DKIM of each signature, the ARC chain, and DMARC from
// those. Runs in the authentication worker (auth-worker.ts), never on the server's
// thread: it reads the whole message (DKIM body hashes) and parses its headers.
//
// The same steps as mailauth's authenticate(), called one by one so that each has
// look-ups of its own (auth-dns.ts), so that a temporary DNS failure is told apart
// from a failed check (mailauth's ARC says fail for both), and without BIMI, which
// is not asked for and costs look-ups. SPF runs beside DKIM (it needs nothing of
// the message), then ARC beside DMARC.
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
// Before mailauth: how it reads keys and headers (mailauth-patches.ts).
import './mailauth-patches.js';
import type * as Mailauth from 'mailauth';
import type { AuthResult, DkimVerdict, MailAuth } from '@temp-inbox/api';
import type { AuthDns, MailLookups } from './auth-dns.js';
import { unsignedView } from './auth-unsigned.js';
import { authWord, dkimEntry, dkimWord, MAX_DKIM_SIGNATURES, unknownVerdict, VERIFIER_FIELDS, verdict } from './auth-verdict.js';

// The four checks' own modules, not mailauth's index: it also loads BIMI and its
// certificate and SVG validators, which are never run here and took about 12 MB of
// this thread's heap (docs/benchmarks-journal.md "Still open").
const require = createRequire(import.meta.url);
const { dkimVerify } = require('mailauth/lib/dkim/verify.js') as Pick<typeof Mailauth, 'dkimVerify'>;
const { spf } = require('mailauth/lib/spf/index.js') as Pick<typeof Mailauth, 'spf'>;
const { dmarc } = require('mailauth/lib/dmarc/index.js') as Pick<typeof Mailauth, 'dmarc'>;
const { arc } = require('mailauth/lib/arc/index.js') as Pick<typeof Mailauth, 'arc'>;

export interface AuthClient {
  /** The SMTP client's address (an IPv4-mapped IPv6 address is read as IPv4). */
  ip: string;
  /** What it said in HELO/EHLO. */
  helo: string;
  /** MAIL FROM; '' for the null sender (then SPF checks postmaster@HELO, RFC 7208 §2.4). */
  sender: string;
}

export interface CheckOptions {
  dns: AuthDns;
  /** Every look-up of the mail ends by this (performance.now() milliseconds). */
  deadline: number;
  /** This server's name, for the comments mailauth writes (not stored). */
  mta: string;
  /**
   * Told, for mail the verifier need not read (no signature, no ARC set), how much longer
   * mail from the same client with the same From fields gets this same verdict: as long as
   * the SPF and DMARC results it was made of are kept (auth-dns.ts "recent"; auth-reuse.ts).
   */
  reusableFor?: (ms: number) => void;
}

/** A header block longer than this is not read (legitimate mail has a few KiB; mailauth parses the whole block, with several passes per signature). */
export const MAX_AUTH_HEADER_BYTES = 1024 * 1024;
/**
 * Header fields read at most. Their number, not their bytes, is what reading them costs: 60,000
 * one-line fields (770 KB) held the checks' thread, and every other mail's 250 with it, for
 * about 160 ms on an idle machine. Mail has tens of fields (a relay refuses a message with
 * more than 100 Received fields, RFC 5321 §6.3); 1,000 of them take about 1 ms.
 */
export const MAX_AUTH_HEADER_FIELDS = 1000;

interface HeaderField {
  /** Lower-cased name. */
  name: string;
  start: number;
  end: number;
  /** The field as written, with its line breaks. */
  text: string;
}

/** The header block's fields (byte offsets into the message), or undefined when it ends past MAX_AUTH_HEADER_BYTES or has more than MAX_AUTH_HEADER_FIELDS. */
export function headerFields(raw: Uint8Array): { fields: HeaderField[]; end: number } | undefined {
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, MAX_AUTH_HEADER_BYTES + 4)).toString('latin1');
  const blank = /\r?\n\r?\n/.exec(head);
  const end = blank ? blank.index + blank[0].indexOf('\n') + 1 : raw.byteLength <= MAX_AUTH_HEADER_BYTES ? raw.byteLength : -1;
  if (end < 0 || end > MAX_AUTH_HEADER_BYTES + 2) return undefined;
  const fields: HeaderField[] = [];
  // A field is a line and the lines that continue it (RFC 5322 §2.2.3: they start with white space).
  const re = /[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*(?:\r?\n|$)/y;
  for (let at = 0; at < end; ) {
    re.lastIndex = at;
    const m = re.exec(head);
    if (!m || m[0].length === 0) break;
    const text = m[0];
    if (fields.length === MAX_AUTH_HEADER_FIELDS) return undefined;
    const colon = text.indexOf(':');
    fields.push({ name: colon > 0 ? text.slice(0, colon).trim().toLowerCase() : '', start: at, end: at + text.length, text });
    at += text.length;
  }
  return { fields, end };
}

/** The d= and s= tags of a DKIM-Signature field (RFC 6376 §3.2 tag=value list). */
export function signatureTags(field: string): { d: string; s: string } {
  const value = field.slice(field.indexOf(':') + 1).replace(/\s+/g, '');
  const tags = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && !tags.has(part.slice(0, eq))) tags.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return { d: tags.get('d') ?? '', s: tags.get('s') ?? '' };
}

/** The domain of the last address in the first From field, lower-case, as a guess of DMARC's author domain (a prefetch; mailauth decides). */
function fromDomain(fields: HeaderField[]): string | undefined {
  const from = fields.find((f) => f.name === 'from');
  const domains = from ? [...from.text.matchAll(/@([a-z0-9.-]+)/gi)] : [];
  const last = domains[domains.length - 1]?.[1]?.toLowerCase().replace(/\.$/, '');
  return last && last.includes('.') ? last : undefined;
}

/**
 * The message mailauth reads: as received, except that DKIM-Signature fields past the
 * first MAX_DKIM_SIGNATURES are left out, so a message cannot make it hash its body
 * once per signature of thousands (each may ask for its own length and
 * canonicalization) or look up a key for each.
 */
function boundedMessage(raw: Uint8Array, fields: HeaderField[]): Buffer {
  const signatures = fields.filter((f) => f.name === 'dkim-signature');
  const whole = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (signatures.length <= MAX_DKIM_SIGNATURES) return whole;
  const dropped = new Set(signatures.slice(MAX_DKIM_SIGNATURES));
  const parts: Buffer[] = [];
  let at = 0;
  for (const f of fields) {
    if (!dropped.has(f)) continue;
    parts.push(whole.subarray(at, f.start));
    at = f.end;
  }
  parts.push(whole.subarray(at));
  return Buffer.concat(parts);
}

/**
 * Each of the first MAX_DKIM_SIGNATURES signatures with its result. mailauth lists
 * results in header order but leaves out the signatures it cannot read (an unknown
 * algorithm, no d= or s=): those are permerror (RFC 6376 §6.1.1 PERMFAIL).
 */
function dkimVerdicts(fields: HeaderField[], results: { signingDomain?: string; selector?: string; status?: { result?: unknown; comment?: unknown } }[]): DkimVerdict[] {
  const signed = results.filter((r) => r.signingDomain);
  let next = 0;
  return fields
    .filter((f) => f.name === 'dkim-signature')
    .slice(0, MAX_DKIM_SIGNATURES)
    .map((f) => {
      const { d, s } = signatureTags(f.text);
      const r = signed[next];
      if (r && r.signingDomain!.toLowerCase() === d.toLowerCase() && (r.selector ?? '').toLowerCase() === s.toLowerCase()) {
        next++;
        return dkimEntry(d, s, dkimWord(r.status));
      }
      return dkimEntry(d, s, 'permerror');
    });
}

/** temperror in place of a failing result when a look-up it needed failed temporarily (the check could not be finished). */
const unfinished = (word: AuthResult, failedTemporarily: boolean): AuthResult => (failedTemporarily && (word === 'fail' || word === 'neutral') ? 'temperror' : word);

export async function checkMessage(raw: Uint8Array, client: AuthClient, opts: CheckOptions): Promise<MailAuth> {
  const lookups = () => opts.dns.forMail(opts.deadline);
  const spfLookups = lookups();
  const ip = client.ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  // As authenticate() does: an IP literal HELO in brackets, and the IP when HELO is empty.
  let helo = client.helo || ip;
  if (isIP(helo)) helo = `[${helo}]`;
  // SPF and DMARC results are kept briefly by everything they depend on but DNS (auth-dns.ts "recent").
  const { recent } = opts.dns;
  // A temperror only as long as the failed answers it came from are kept: while they are,
  // the same check meets them again (a DNS server that is down or refuses costs one check, not one a mail).
  const keep = (key: string, result: { word: AuthResult; domain: string }, from: MailLookups) => {
    if (result.word !== 'temperror') recent.set(key, result);
    else if (from.failureKeptMs !== undefined) recent.set(key, result, { ttl: from.failureKeptMs });
    return result;
  };
  const spfKey = `spf\u0000${ip}\u0000${helo}\u0000${client.sender}`;
  const spfKept = recent.get(spfKey);
  const spfCheck = spfKept
    ? Promise.resolve(spfKept)
    : spf({ ip, helo, sender: client.sender, mta: opts.mta, resolver: spfLookups.resolve as Mailauth.DNSResolver }).then(
        (r) => keep(spfKey, { word: authWord(r.status?.result), domain: r.domain }, spfLookups),
        () => ({ word: 'temperror' as const, domain: '' }),
      );

  const head = headerFields(raw);
  if (!head) return { ...unknownVerdict('permerror'), spf: (await spfCheck).word };

  // The author's DMARC record is asked for now, beside SPF and DKIM, rather than after them.
  const author = fromDomain(head.fields);
  if (author) void lookups().resolve(`_dmarc.${author}`, 'TXT').catch(() => undefined);

  const dkimLookups = lookups();
  // Every signature's key at once (mailauth fetches them one after another): a mail signed
  // twice waits for one round trip, not two. mailauth then finds them in the cache.
  const signatures = head.fields.filter((f) => f.name === 'dkim-signature').slice(0, MAX_DKIM_SIGNATURES).map((f) => signatureTags(f.text));
  if (signatures.length > 1) await Promise.all(signatures.map(({ d, s }) => (d && s ? dkimLookups.resolve(`${s}._domainkey.${d}`, 'TXT').catch(() => undefined) : undefined)));
  // Unsigned mail (most of it) needs nothing of the verifier but its reading of From. A
  // signature or ARC field already seen here goes straight to the verifier, without reading the block twice.
  const plain = head.fields.some((f) => VERIFIER_FIELDS.has(f.name)) ? undefined : unsignedView(raw, head.end);
  const dkim =
    plain ??
    (await dkimVerify(boundedMessage(raw, head.fields), { resolver: dkimLookups.resolve as Mailauth.DNSResolver, sender: client.sender || undefined }).catch(() => undefined));
  const spfDone = await spfCheck;
  if (!dkim) return { ...unknownVerdict('permerror'), spf: spfDone.word };
  const dkimList = dkimVerdicts(head.fields, dkim.results);

  const arcLookups = lookups();
  // mailauth's ARC reads the chain dkimVerify found (false when there is none), typed as if always a list.
  const arcCheck = arc((dkim.arc ?? { chain: false }) as Mailauth.ARCData, { resolver: arcLookups.resolve as Mailauth.DNSResolver }).then(
    (r) => unfinished(authWord(r.status?.result), arcLookups.failedTemporarily),
    () => 'temperror' as const,
  );
  let dmarcKey: string | undefined;
  const dmarcCheck = (async (): Promise<AuthResult> => {
    // DMARC needs exactly one author (RFC 7489 §6.6.1): none without From, permerror with several.
    if (dkim.headerFrom.length === 0) return 'none';
    if (dkim.headerFrom.length > 1) return 'permerror';
    const input = {
      headerFrom: dkim.headerFrom,
      spfDomains: spfDone.word === 'pass' && spfDone.domain ? [spfDone.domain] : [],
      dkimDomains: dkim.results
        .filter((x) => x.status?.result === 'pass')
        .map((x) => ({ id: x.id, domain: x.signingDomain, aligned: x.status.aligned, underSized: x.status.underSized })),
    };
    // Everything DMARC's answer depends on but the record, which the DNS cache keeps longer (the id is only a label).
    dmarcKey = `dmarc\u0000${JSON.stringify([input.headerFrom, input.spfDomains, input.dkimDomains.map((x) => [x.domain, x.aligned, x.underSized])])}`;
    const kept = recent.get(dmarcKey);
    if (kept) return kept.word;
    const dmarcLookups = lookups();
    const r = await dmarc({ ...input, resolver: dmarcLookups.resolve as Mailauth.DNSResolver });
    return keep(dmarcKey, { word: r ? authWord(r.status?.result) : 'permerror', domain: '' }, dmarcLookups).word;
  })().catch(() => 'temperror' as const);
  const [arcWord, dmarcResult] = await Promise.all([arcCheck, dmarcCheck]);
  let dmarcWord: AuthResult = dmarcResult;
  // A DMARC fail while SPF or a DKIM signature could not be finished may be a pass that was not seen.
  if (dmarcWord === 'fail' && (spfDone.word === 'temperror' || dkimList.some((d) => d.result === 'temperror'))) dmarcWord = 'temperror';

  const answer = verdict({ spf: spfDone.word, dkim: dkimList, dmarc: dmarcWord, arc: arcWord });
  // Unsigned, this verdict is made of the SPF and DMARC results alone (ARC: none, no look-up):
  // reusable as long as both are kept. One not kept (a temperror of this mail's own budget) is not.
  if (opts.reusableFor && plain) {
    const left = (key: string) => (recent.has(key) ? recent.getRemainingTTL(key) : 0);
    const ms = Math.min(left(spfKey), dmarcKey === undefined ? Infinity : left(dmarcKey));
    if (ms > 0 && Number.isFinite(ms)) opts.reusableFor(ms);
  }
  return answer;
}
