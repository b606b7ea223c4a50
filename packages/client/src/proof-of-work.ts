// The service's self-hosted bot check (CHALLENGE=pow): an ALTCHA proof of work. Before
// each POST /api/new_address the client takes a fresh challenge from GET /api/challenge
// and finds the number n (0..maxnumber) whose SHA-256 of `salt + n` is `challenge`;
// the answer travels as base64 JSON in `cf_token`. A service without the check answers
// the challenge route with 404, and then nothing is sent.
import type { PowChallenge } from './api-types.js';

/** Numbers tried between turns of the event loop, so that solving never holds it long. */
const SLICE = 2000;

type Hasher = (text: string) => Promise<string> | string;

async function sha256Hex(): Promise<Hasher> {
  // Node: its synchronous hash is many times faster than one promise per try.
  if (typeof process !== 'undefined' && process.versions?.node) {
    const { createHash } = await import('node:crypto');
    return (text) => createHash('sha256').update(text).digest('hex');
  }
  const encoder = new TextEncoder();
  return async (text) => {
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
    return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  };
}

/** The `cf_token` that answers `c`, or undefined when no number up to maxnumber does. */
export async function solveChallenge(c: PowChallenge): Promise<string | undefined> {
  const hash = await sha256Hex();
  for (let n = 0; n <= c.maxnumber; n++) {
    if ((await hash(`${c.salt}${n}`)) === c.challenge) {
      const payload = JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature });
      return btoa(payload);
    }
    if (n % SLICE === SLICE - 1) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return undefined;
}
