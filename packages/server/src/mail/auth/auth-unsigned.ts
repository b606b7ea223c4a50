// What mailauth's DKIM verifier (dkimVerify) finds in a message that carries no
// DKIM-Signature and no ARC header field: "not signed", no ARC chain, and the author
// addresses DMARC needs. Read here from the header block alone, as the verifier reads
// them (its header parsing, its address parser), so that most mail, which is not signed,
// is not streamed through the verifier's canonicalization and body hashing for nothing
// (auth-check.ts; docs/decisions.md "Authentication verdicts").
import { createRequire } from 'node:module';
import type { DKIMResult, DKIMVerifyResult } from 'mailauth';
import { VERIFIER_FIELDS } from './auth-verdict.js';
import { parseHeaders } from './mailauth-patches.js';

type AddressParser = (value: string) => { address?: string }[];

// The very address parser the verifier uses (nodemailer's, as mailauth requires it).
const fromMailauth = createRequire(createRequire(import.meta.url).resolve('mailauth'));
const addressparser = fromMailauth('nodemailer/lib/addressparser') as AddressParser;

/** The part of the verifier's answer that auth-check.ts reads. */
export type UnsignedView = Pick<DKIMVerifyResult, 'results' | 'arc' | 'headerFrom'>;

/**
 * The verifier's one result for a message without signatures. Its types give every result a
 * signing domain; this one has none (auth-check.ts reads only results that have one).
 */
const NOT_SIGNED = { info: 'dkim=none (message not signed)', status: { result: 'none', comment: 'message not signed' } } as unknown as DKIMResult;

/**
 * The verifier's answer for a message whose header block is `raw[0, end)`, or undefined
 * when the block has a field that needs the verifier itself (a signature or an ARC set).
 */
export function unsignedView(raw: Uint8Array, end: number): UnsignedView | undefined {
  const { parsed } = parseHeaders(Buffer.from(raw.buffer, raw.byteOffset, end));
  if (parsed.some((row) => row.key !== null && VERIFIER_FIELDS.has(row.key))) return undefined;
  const headerFrom: string[] = [];
  for (const row of parsed) {
    if (row.key !== 'from') continue;
    let value = row.line.toString();
    const colon = value.indexOf(':');
    if (colon >= 0) value = value.slice(colon + 1);
    for (const addr of addressparser(value.trim())) if (addr?.address) headerFrom.push(addr.address);
  }
  return { results: [{ ...NOT_SIGNED, status: { ...NOT_SIGNED.status } }], arc: { chain: false } as unknown as DKIMVerifyResult['arc'], headerFrom };
}
