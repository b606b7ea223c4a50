// Tombstones of deleted and expired addresses (docs/decisions.md "Deleted address"): the key
// of an address is an HMAC-SHA256 of the full address under a key derived from JWT_SECRET, so
// the database never holds the address itself, and only a node holding the secret can tell
// whether a given name was used. A name with a live tombstone is never given out again.
import { createHmac } from 'node:crypto';
import { AppError } from './errors.js';

/** What POST /api/new_address answers (409) for a name that has a tombstone. */
export const RETIRED_NAME_MESSAGE = 'That address was used before and is retired: its name is never given out again. Choose another name or omit "name" for a random one.';

/** A name held by a tombstone: 409 like a taken one, with its own message (and its own mail.tm violation). */
export class RetiredNameError extends AppError {
  constructor() {
    super('conflict', RETIRED_NAME_MESSAGE);
  }
}

export interface Tombstones {
  /** The key of an address (lower-case hex); the same on every node with the same JWT_SECRET. */
  keyOf(address: string): string;
  /** What createAddress checks for `address` at `now` (storage/tombstone-store.ts TombstoneCheck): its key, and since when a tombstone holds it. */
  check(address: string, now: number): { key: string; since: number };
  /** Before when a tombstone no longer holds its name at `now` (the sweep removes those); undefined: for ever. */
  expiredBefore(now: number): number | undefined;
  /** What a deletion at `now` leaves (storage/tombstone-store.ts TombstoneMark). */
  mark(now: number): { keyOf: (address: string) => string; at: number };
}

/** Domain separation: the key is derived from the secret, never the secret itself. */
const KEY_LABEL = 'temp-inbox address tombstone v1';

/**
 * Tombstones keyed by `secret` (JWT_SECRET); `ttlMs` (ADDRESS_TOMBSTONE_TTL): how long one
 * holds its name, 0 = for ever.
 */
export function createTombstones(secret: string, ttlMs: number): Tombstones {
  const key = createHmac('sha256', secret).update(KEY_LABEL).digest();
  const keyOf = (address: string) => createHmac('sha256', key).update(address.toLowerCase()).digest('hex');
  return {
    keyOf,
    check: (address, now) => ({ key: keyOf(address), since: ttlMs > 0 ? now - ttlMs : Number.MIN_SAFE_INTEGER }),
    expiredBefore: (now) => (ttlMs > 0 ? now - ttlMs : undefined),
    mark: (now) => ({ keyOf, at: now }),
  };
}
