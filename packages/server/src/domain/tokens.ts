// Address-bound JWTs (DESIGN.md "JWT"): HS256 keyed with JWT_SECRET as is,
// claims sub (address), aid (address id), iat, exp = 7 days.
import { SignJWT, jwtVerify } from 'jose';

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

export function createTokens(secret: string): Tokens {
  const key = new TextEncoder().encode(secret);
  return {
    async sign({ address, addressId }, nowMs = Date.now()) {
      const iat = Math.floor(nowMs / 1000);
      return new SignJWT({ aid: addressId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(address)
        .setIssuedAt(iat)
        .setExpirationTime(iat + JWT_LIFETIME_SECONDS)
        .sign(key);
    },
    async verify(token, nowMs = Date.now()) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          currentDate: new Date(nowMs),
          requiredClaims: ['sub', 'exp', 'iat'],
        });
        const aid = payload['aid'];
        if (typeof payload.sub !== 'string' || typeof aid !== 'number' || !Number.isSafeInteger(aid)) return undefined;
        return { address: payload.sub, addressId: aid };
      } catch {
        return undefined;
      }
    },
  };
}
