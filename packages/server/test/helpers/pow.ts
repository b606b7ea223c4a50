// A proof-of-work solver of the tests' own (CHALLENGE=pow), written from the ALTCHA
// format rather than with the library the server uses: find the number whose
// SHA-256(salt + number) is the challenge, then send base64(JSON) as cf_token.
import { createHash } from 'node:crypto';
import type { PowChallenge, PowSolution } from '@temp-inbox/api';
import { request } from './harness.js';

export function solve(challenge: PowChallenge): number {
  for (let n = 0; n <= challenge.maxnumber; n++) {
    if (createHash('sha256').update(challenge.salt + n).digest('hex') === challenge.challenge) return n;
  }
  throw new Error('no number up to maxnumber solves the challenge');
}

/** cf_token for `solution` (base64 JSON, as ALTCHA widgets send it). */
export function powToken(solution: Record<string, unknown> | PowSolution): string {
  return Buffer.from(JSON.stringify(solution)).toString('base64');
}

/** The ALTCHA payload of a solved challenge. */
export function solutionOf(challenge: PowChallenge, number = solve(challenge)): PowSolution {
  const { algorithm, challenge: hash, salt, signature } = challenge;
  return { algorithm, challenge: hash, number, salt, signature, took: 0 };
}

/** GET /api/challenge, asserting a 200. */
export async function fetchChallenge(base: string, localAddress?: string): Promise<PowChallenge> {
  const res = await request(base, '/api/challenge', localAddress ? { localAddress } : {});
  if (res.status !== 200) throw new Error(`GET /api/challenge: ${res.status} ${res.text}`);
  return res.json as PowChallenge;
}

/** A cf_token that passes: a fresh challenge of `base`, solved. */
export async function solvedToken(base: string, localAddress?: string): Promise<string> {
  return powToken(solutionOf(await fetchChallenge(base, localAddress)));
}
