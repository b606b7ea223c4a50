// The self-hosted bot challenge, CHALLENGE=pow (docs/decisions.md "Bot challenge"): an
// ALTCHA proof of work through altcha-lib (its v1 format, the one ALTCHA widgets and
// libraries all read). GET /api/challenge issues a challenge: a random salt that
// carries its expiry, the SHA-256 of salt + a secret number up to POW_MAX_NUMBER,
// and an HMAC of that hash. Nothing is stored when one is issued. The solution comes
// back as base64 JSON in cf_token; it passes when the number hashes to the challenge,
// the signature is ours, it has not expired, and it was not spent before.
import { hkdfSync } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { PowSolution } from '@temp-inbox/api';
import { createChallenge, extractParams, verifySolution } from 'altcha-lib/v1';
import { badRequest } from '../domain/errors.js';
import type { Challenge } from './types.js';
import type { UsedChallenges } from './used-challenges.js';

/**
 * The HMAC key of challenges, derived from SESSION_SECRET (HKDF-SHA-256 with a label of
 * its own): every node that shares the session secret, as a deployment must, shares it,
 * and nothing more has to be configured or kept. It never signs anything else.
 */
export function powHmacKey(sessionSecret: string): string {
  return Buffer.from(hkdfSync('sha256', sessionSecret, '', 'temp-inbox proof-of-work challenge v1', 32)).toString('hex');
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const GET_A_NEW_ONE = 'fetch a new one from GET /api/challenge';

/** The solution in a cf_token, or a 400 saying what is wrong with its form. */
export function decodeSolution(token: string): PowSolution {
  const form = 'send the solved challenge as base64-encoded JSON (the ALTCHA payload)';
  if (!BASE64.test(token)) throw badRequest(`cf_token is not base64: ${form}.`);
  let solution: unknown;
  try {
    solution = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
  } catch {
    throw badRequest(`cf_token is not base64-encoded JSON: ${form}.`);
  }
  if (!Value.Check(PowSolution, solution)) {
    throw badRequest('cf_token must hold the algorithm ("SHA-256"), challenge, salt and signature of a challenge from GET /api/challenge, and the number found.');
  }
  return solution;
}

export function createProofOfWork(opts: { hmacKey: string; maxNumber: number; ttlMs: number; used: UsedChallenges; now: () => number }): Challenge {
  const { hmacKey } = opts;
  return {
    mode: 'pow',
    async issue() {
      const challenge = await createChallenge({ algorithm: 'SHA-256', hmacKey, maxnumber: opts.maxNumber, expires: new Date(opts.now() + opts.ttlMs) });
      return { ...challenge, algorithm: 'SHA-256', maxnumber: opts.maxNumber };
    },
    async verify(token) {
      if (!token) throw badRequest('Missing cf_token: this server asks for a solved proof-of-work challenge (GET /api/challenge) to create addresses.');
      const solution = decodeSolution(token);
      // The expiry is checked below against this server's clock.
      if (!(await verifySolution(solution, hmacKey, false))) {
        // Which of the two failed, for the client's sake: the hash, or the signature.
        const expected = await createChallenge({ algorithm: 'SHA-256', hmacKey, number: solution.number, salt: solution.salt });
        if (expected.challenge !== solution.challenge) throw badRequest('The proof of work is wrong: the SHA-256 of salt and number is not the challenge.');
        throw badRequest(`The proof-of-work challenge was not issued by this server (its signature does not match); ${GET_A_NEW_ONE}.`);
      }
      const expires = extractParams(solution)['expires'] ?? '';
      // Every challenge issued here names its expiry, in the signed salt.
      if (!/^\d{1,12}$/.test(expires)) throw badRequest(`The proof-of-work challenge was not issued by this server (it has no expiry); ${GET_A_NEW_ONE}.`);
      const expiresAtMs = Number(expires) * 1000;
      if (expiresAtMs < opts.now()) throw badRequest(`The proof-of-work challenge has expired; ${GET_A_NEW_ONE}.`);
      if (!(await opts.used.claim(solution.challenge, expiresAtMs))) throw badRequest(`This proof-of-work challenge was already used; ${GET_A_NEW_ONE}.`);
    },
  };
}
