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
/** Hashes waiting for a slot from one network (the caller's `network`, when it names one); more are refused with 429. */
export const MAX_QUEUED_PER_NETWORK = 4;

const ENCODED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

let running = 0;
/**
 * Hashes waiting for a slot, by the network they come from, each network's in order. The
 * networks take turns (a network served goes to the back), so one network's guesses,
 * however many of its /64s they come from, delay another's login by a hash or two, not by
 * the whole queue.
 */
const waiting = new Map<string, (() => void)[]>();
let queued = 0;
let started = 0;

/** Hashes started in this process so far (a counter that only grows), for tests of the queue's turns. */
export const hashesStarted = (): number => started;

/** `network` undefined: a caller that knows no client address (its hashes take turns as one more network, uncapped). */
async function slot<T>(network: string | undefined, run: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) {
    if (queued >= MAX_QUEUED) throw new AppError('unavailable', 'Too many password checks at once; retry in a moment.', 1);
    const key = network ?? '(no client address)';
    const mine = waiting.get(key) ?? [];
    if (network !== undefined && mine.length >= MAX_QUEUED_PER_NETWORK) throw new AppError('rate_limited', 'Too many password checks from your network at once; retry in a moment.', 1);
    await new Promise<void>((resolve) => {
      mine.push(resolve);
      waiting.set(key, mine);
      queued++;
    });
  } else running++;
  started++;
  try {
    return await run();
  } finally {
    next();
  }
}

/** Gives a freed slot to the oldest hash of the network whose turn it is, and sends that network to the back. */
function next(): void {
  const first = waiting.entries().next();
  if (first.done) {
    running--;
    return;
  }
  const [network, queue] = first.value;
  const resolve = queue.shift()!;
  waiting.delete(network);
  if (queue.length > 0) waiting.set(network, queue);
  queued--;
  resolve();
}

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }, network: string | undefined): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return slot(
    network,
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
      }),
  );
}

/**
 * The encoded hash of a password: scrypt$log2(N)$r$p$salt$key (base64). `network`: where
 * the request comes from (an IPv4 /24, an IPv6 /48), whose turn in the queue it waits for.
 */
export async function hashPassword(password: string, network?: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, SCRYPT_PARAMS, network);
  return `scrypt$${Math.log2(SCRYPT_PARAMS.N)}$${SCRYPT_PARAMS.r}$${SCRYPT_PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

// What an unknown address is checked against, so that its answer takes as long as a wrong password's.
let decoy: Promise<string> | undefined;

/**
 * Builds the decoy once, ahead of the first unknown-address check (built then, that answer
 * would take two hashes and tell the address is unknown). A failed build is tried again next time.
 */
export const prepareDecoy = (): Promise<string> =>
  (decoy ??= hashPassword(randomBytes(16).toString('hex')).catch((err: unknown) => {
    decoy = undefined;
    throw err;
  }));

/** Whether the decoy is built or being built (start-up builds it; see prepareDecoy). */
export const decoyPrepared = (): boolean => decoy !== undefined;

/**
 * Whether the password matches the encoded hash, compared in constant time. Without a
 * hash (no such account) a decoy is checked all the same and the answer is false.
 */
export async function verifyPassword(password: string, encoded: string | undefined, network?: string): Promise<boolean> {
  const m = ENCODED.exec(encoded ?? (await prepareDecoy()));
  if (!m) return false;
  const [, logN, r, p, salt, key] = m;
  const expected = Buffer.from(key!, 'base64');
  const params = { N: 2 ** Number(logN), r: Number(r), p: Number(p) };
  if (params.N > 2 ** 20 || params.r > 32 || params.p > 16 || expected.length !== KEY_BYTES) return false;
  const actual = await derive(password, Buffer.from(salt!, 'base64'), params, network);
  return timingSafeEqual(actual, expected) && encoded !== undefined;
}
