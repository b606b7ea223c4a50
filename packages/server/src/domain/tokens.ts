// Address-bound JWTs (docs/decisions.md "JWT"): HS256 keyed with JWT_SECRET as is,
// claims sub (address), aid (address id), iat, exp = 7 days.
import { SignJWT, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';

export const JWT_LIFETIME_SECONDS = 7 * 24 * 3600;

export interface TokenClaims {
  address: string;
  addressId: number;
}

export interface Tokens {
  sign(claims: TokenClaims, nowMs?: number): Promise<string>;
  /** Returns the claims, or undefined for anything that is not a valid, unexpired token. */
  verify(token: string, nowMs?: number): Promise<TokenClaims | undefined>;
}

/** How many verified tokens are remembered (a client polls with the same token). */
const VERIFIED_CACHE_SIZE = 10_000;
/** A remembered token not used for this long is forgotten (verified in full next time). */
const VERIFIED_IDLE_MS = 2 * 60_000;

export function createTokens(secret: string): Tokens {
  // Imported once: passing the raw bytes would make jose import the key on every call.
  const key = crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  // Tokens whose signature has been checked, with their expiry (seconds). Only a
  // byte-identical token hits, so a forged or altered one is always verified in full.
  const verified = new LRUCache<string, { claims: TokenClaims; exp: number }>({
    max: VERIFIED_CACHE_SIZE,
    ttl: VERIFIED_IDLE_MS,
    updateAgeOnGet: true,
    // lru-cache re-reads the clock at most this often (its default, 1 ms, arms a
    // timer every millisecond under load); idle expiry need not be finer.
    ttlResolution: 1000,
  });
  let sets = 0;

  return {
    async sign({ address, addressId }, nowMs = Date.now()) {
      const iat = Math.floor(nowMs / 1000);
      return new SignJWT({ aid: addressId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(address)
        .setIssuedAt(iat)
        .setExpirationTime(iat + JWT_LIFETIME_SECONDS)
        .sign(await key);
    },
    async verify(token, nowMs = Date.now()) {
      const hit = verified.get(token);
      if (hit) {
        if (hit.exp > nowMs / 1000) return hit.claims;
        verified.delete(token);
        return undefined;
      }
      try {
        const { payload } = await jwtVerify(token, await key, {
          algorithms: ['HS256'],
          currentDate: new Date(nowMs),
          requiredClaims: ['sub', 'exp', 'iat'],
        });
        const aid = payload['aid'];
        if (typeof payload.sub !== 'string' || typeof aid !== 'number' || !Number.isSafeInteger(aid)) return undefined;
        const claims = { address: payload.sub, addressId: aid };
        // A token with "nbf" is never cached: its validity is not just an expiry.
        if (payload.nbf === undefined) {
          verified.set(token, { claims, exp: payload.exp! });
          // Idle entries are dropped now and then rather than by a timer per entry.
          if (++sets % 1024 === 0) verified.purgeStale();
        }
        return claims;
      } catch {
        return undefined;
      }
    },
  };
}
