// Passwords of mail.tm accounts and sandboxes (docs/decisions.md "mail.tm accounts", "Sandboxes"): scrypt (RFC 7914)
// through node:crypto, which runs it on libuv's thread pool, never on the event loop.
// N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s per hash on one core, with a random
// 16-byte salt per password and a 32-byte key. The parameters are stored with each hash,
// so that they can be raised later without making the stored ones unreadable.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AppError } from './errors.js';

export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Longest password taken (characters); a longer one is refused before any hashing. */
export const MAX_PASSWORD_CHARS = 1024;
/** Hashes computed at once: each holds 32 MiB and one of libuv's four threads. */
const MAX_CONCURRENT = 2;
/** Hashes waiting for a slot; more are refused with 503 (the per-client rate limits come first). */
const MAX_QUEUED = 64;

const ENCODED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

let running = 0;
const waiting: (() => void)[] = [];

async function slot<T>(run: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) {
    if (waiting.length >= MAX_QUEUED) throw new AppError('unavailable', 'Too many password checks at once; retry in a moment.', 1);
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    return await run();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return slot(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
      }),
  );
}

/** The encoded hash of a password: scrypt$log2(N)$r$p$salt$key (base64). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  return `scrypt$${Math.log2(SCRYPT_PARAMS.N)}$${SCRYPT_PARAMS.r}$${SCRYPT_PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

// What an unknown address is checked against, so that its answer takes as long as a wrong password's.
let decoy: Promise<string> | undefined;

/**
 * Whether the password matches the encoded hash, compared in constant time. Without a
 * hash (no such account) a decoy is checked all the same and the answer is false.
 */
export async function verifyPassword(password: string, encoded: string | undefined): Promise<boolean> {
  const m = ENCODED.exec(encoded ?? (await (decoy ??= hashPassword(randomBytes(16).toString('hex')))));
  if (!m) return false;
  const [, logN, r, p, salt, key] = m;
  const expected = Buffer.from(key!, 'base64');
  const params = { N: 2 ** Number(logN), r: Number(r), p: Number(p) };
  if (params.N > 2 ** 20 || params.r > 32 || params.p > 16 || expected.length !== KEY_BYTES) return false;
  const actual = await derive(password, Buffer.from(salt!, 'base64'), params);
  return timingSafeEqual(actual, expected) && encoded !== undefined;
}
