// The sender rules Gmail and Yahoo enforce since February 2024 (docs/api.md
// "Deliverability report"), each with the evidence: SPF and DKIM pass, the From domain
// aligned with one of them, a DMARC record published, one-click unsubscribe (RFC 8058)
// covered by the DKIM signature, a valid Message-ID and Date, and no header duplicated
// that RFC 5322 §3.6 allows once. Pure; the verdicts are those of the mail's arrival.
import type { HeaderField, MailAuth, ReportFinding } from '@temp-inbox/api';
import { getDomain } from 'tldts';
import { finding, headerValues } from './findings.js';

/** Fields RFC 5322 §3.6 allows at most once. */
const SINGLE = ['Date', 'From', 'Sender', 'Reply-To', 'To', 'Cc', 'Bcc', 'Message-ID', 'In-Reply-To', 'References', 'Subject'];

interface DkimSignature {
  domain: string;
  selector: string;
  signed: Set<string>;
}

/** The d=, s= and h= tags of each DKIM-Signature (RFC 6376 §3.5). */
function dkimSignatures(headers: readonly HeaderField[]): DkimSignature[] {
  return headerValues(headers, 'DKIM-Signature').map((value) => {
    const tags = new Map<string, string>();
    for (const part of value.split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
    }
    const signed = new Set((tags.get('h') ?? '').toLowerCase().split(':').filter(Boolean));
    return { domain: (tags.get('d') ?? '').toLowerCase(), selector: (tags.get('s') ?? '').toLowerCase(), signed };
  });
}

/** The domain of the From: header's address, lower case; null when there is none or several. */
export function fromDomain(headers: readonly HeaderField[]): string | null {
  const from = headerValues(headers, 'From');
  if (from.length !== 1) return null;
  const addresses = [...from[0]!.matchAll(/[^\s<>"@,;:]+@([A-Za-z0-9.-]+)/g)];
  return addresses.length === 1 ? addresses[0]![1]!.toLowerCase().replace(/\.$/, '') : null;
}

/** Relaxed alignment (RFC 7489 §3.1): the same organizational domain. */
const aligned = (a: string, b: string) => a === b || (getDomain(a) ?? a) === (getDomain(b) ?? b);

export interface SenderInput {
  headers: readonly HeaderField[];
  auth: MailAuth | undefined;
}

function authFindings(auth: MailAuth | undefined, from: string | null, passing: DkimSignature[], headers: readonly HeaderField[]): ReportFinding[] {
  if (!auth) {
    const reason = 'The mail has no authentication verdicts (AUTH_CHECKS=off, or it was stored before they were computed).';
    return ['spf', 'dkim', 'alignment', 'dmarc-published'].map((rule) => finding(rule, 'unavailable', reason));
  }
  const out: ReportFinding[] = [];
  if (auth.spf === 'pass') out.push(finding('spf', 'pass', 'SPF passes for the SMTP client.', `spf=${auth.spf}`));
  else if (auth.spf === 'temperror') out.push(finding('spf', 'unavailable', 'SPF could not be checked: DNS did not answer in time when the mail arrived.', `spf=${auth.spf}`));
  else out.push(finding('spf', 'fail', 'SPF does not pass: publish an SPF record that lists the servers you send from.', `spf=${auth.spf}`));
  const dkimEvidence = auth.dkim.map((d) => `dkim=${d.result} (d=${d.domain} s=${d.selector})`).join('; ') || 'no DKIM-Signature';
  out.push(passing.length > 0 ? finding('dkim', 'pass', 'A DKIM signature verifies.', dkimEvidence) : finding('dkim', 'fail', 'No DKIM signature verifies: sign every mail with DKIM (Gmail and Yahoo require it of bulk senders).', dkimEvidence));
  const returnPath = headerValues(headers, 'Return-Path')[0]?.match(/@([A-Za-z0-9.-]+)>?\s*$/)?.[1]?.toLowerCase();
  if (from === null) out.push(finding('alignment', 'fail', 'The mail needs exactly one From: address to be aligned with anything.'));
  else if (auth.dmarc === 'pass') out.push(finding('alignment', 'pass', `DMARC passes: ${from} is aligned with SPF or DKIM.`, `dmarc=pass`));
  else {
    const byDkim = passing.find((s) => aligned(s.domain, from));
    const bySpf = auth.spf === 'pass' && returnPath !== undefined && aligned(returnPath, from);
    if (byDkim) out.push(finding('alignment', 'pass', `The From domain ${from} is aligned with the DKIM signature of ${byDkim.domain}.`));
    else if (bySpf) out.push(finding('alignment', 'pass', `The From domain ${from} is aligned with the SPF-checked domain ${returnPath}.`));
    else out.push(finding('alignment', 'fail', `The From domain ${from} is aligned with neither a passing DKIM signature nor SPF: sign with d=${getDomain(from) ?? from} or send from an aligned domain.`, `dmarc=${auth.dmarc}; ${passing.map((s) => `d=${s.domain}`).join(', ') || 'no passing DKIM'}`));
  }
  if (auth.dmarc === 'temperror') out.push(finding('dmarc-published', 'unavailable', 'The DMARC record could not be looked up in time.'));
  else if (auth.dmarc === 'none') out.push(finding('dmarc-published', 'fail', `No DMARC record for ${from ?? 'the From domain'}: publish one at _dmarc.${from ? (getDomain(from) ?? from) : '<domain>'} (p=none is enough for Gmail and Yahoo).`, 'dmarc=none'));
  else out.push(finding('dmarc-published', 'pass', 'A DMARC record is published for the From domain.', `dmarc=${auth.dmarc}`));
  return out;
}

function unsubscribeFinding(headers: readonly HeaderField[], passing: DkimSignature[], auth: MailAuth | undefined): ReportFinding {
  const unsub = headerValues(headers, 'List-Unsubscribe');
  const post = headerValues(headers, 'List-Unsubscribe-Post');
  if (unsub.length === 0 && post.length === 0) return finding('one-click-unsubscribe', 'warn', 'No one-click unsubscribe: Gmail and Yahoo require it of bulk senders (5,000 mails a day and more); transactional mail may go without.');
  const https = unsub.some((v) => /<https:\/\/[^>]+>/i.test(v));
  const oneClick = post.some((v) => /^\s*List-Unsubscribe=One-Click\s*$/i.test(v));
  if (!https || !oneClick) return finding('one-click-unsubscribe', 'fail', 'One-click unsubscribe (RFC 8058) needs an https URL in List-Unsubscribe and "List-Unsubscribe-Post: List-Unsubscribe=One-Click".', `${unsub[0] ?? 'no List-Unsubscribe'}; ${post[0] ?? 'no List-Unsubscribe-Post'}`);
  if (!auth) return finding('one-click-unsubscribe', 'unavailable', 'The headers are there; whether DKIM covers them needs the verdicts (AUTH_CHECKS=off).');
  const covering = passing.find((s) => s.signed.has('list-unsubscribe') && s.signed.has('list-unsubscribe-post'));
  return covering
    ? finding('one-click-unsubscribe', 'pass', `One-click unsubscribe is present and signed by DKIM (d=${covering.domain}).`)
    : finding('one-click-unsubscribe', 'fail', 'List-Unsubscribe and List-Unsubscribe-Post must both be in the h= tag of a passing DKIM signature (RFC 8058 §4).', passing.map((s) => `d=${s.domain} h=${[...s.signed].join(':')}`).join('; ') || 'no passing DKIM signature');
}

function formatFindings(headers: readonly HeaderField[]): ReportFinding[] {
  const out: ReportFinding[] = [];
  const ids = headerValues(headers, 'Message-ID');
  out.push(ids.length === 1 && /^\s*<[^<>@\s]+@[^<>@\s]+>\s*$/.test(ids[0]!) ? finding('message-id', 'pass', 'Message-ID is valid.', ids[0]) : finding('message-id', 'fail', ids.length === 0 ? 'No Message-ID: Gmail refuses or spam-files mail without one (RFC 5322 §3.6.4).' : 'Message-ID is not of the form <id@domain> (RFC 5322 §3.6.4).', ids.join(' | ')));
  const dates = headerValues(headers, 'Date');
  const valid = dates.length === 1 && /^\s*(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s*)?\d{1,2}\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{4}\s+\d{2}:\d{2}(?::\d{2})?\s+(?:[+-]\d{4}|UT|GMT|[ECMP][SD]T|[A-IK-Za-ik-z])(?:\s*\(.*\))?\s*$/.test(dates[0]!) && !Number.isNaN(Date.parse(dates[0]!));
  out.push(valid ? finding('date', 'pass', 'Date is valid.', dates[0]) : finding('date', 'fail', dates.length === 0 ? 'No Date header (RFC 5322 §3.6.1 requires one).' : 'Date is not an RFC 5322 date-time.', dates.join(' | ')));
  const repeated = SINGLE.filter((name) => headerValues(headers, name).length > 1);
  out.push(repeated.length === 0 ? finding('single-headers', 'pass', 'No header that RFC 5322 allows once appears twice.') : finding('single-headers', 'fail', `Repeated headers that RFC 5322 §3.6 allows once: ${repeated.join(', ')}. Gmail refuses such mail.`));
  return out;
}

export function senderFindings({ headers, auth }: SenderInput): ReportFinding[] {
  const from = fromDomain(headers);
  const verified = new Set((auth?.dkim ?? []).filter((d) => d.result === 'pass').map((d) => `${d.domain.toLowerCase()} ${d.selector.toLowerCase()}`));
  const passing = dkimSignatures(headers).filter((s) => verified.has(`${s.domain} ${s.selector}`));
  return [...authFindings(auth, from, passing, headers), unsubscribeFinding(headers, passing, auth), ...formatFindings(headers)];
}
