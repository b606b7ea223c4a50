// Which proof-of-work challenges have been spent (docs/decisions.md "Bot challenge"):
// each is good for one address. With Redis (REDIS_URL) every node shares the record
// (SET NX with an expiry, so Redis forgets a challenge once it could no longer be
// used anyway); without it, or while Redis does not answer, this node remembers in
// memory, bounded.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors.js';

export interface UsedChallenges {
  /**
   * Marks `id` used until `expiresAtMs` (the challenge's own expiry). Resolves true
   * when this call spent it, false when it had been spent before. Throws a 503
   * AppError when the memory record is full of challenges that have not expired.
   */
  claim(id: string, expiresAtMs: number): Promise<boolean>;
}

/** Kept past a challenge's expiry, so that a node whose clock is behind cannot accept it again. */
export const CLOCK_SKEW_MARGIN_MS = 60_000;

/** At most this many spent challenges in memory (about 15 MB); more are refused (503) until some expire. */
export const MEMORY_MAX_ENTRIES = 100_000;

export function createUsedChallenges(opts: { redis?: Redis; keyPrefix: string; now: () => number; logger: Logger; maxEntries?: number }): UsedChallenges {
  const memory = memoryRecord(opts.now, opts.maxEntries ?? MEMORY_MAX_ENTRIES);
  const { redis } = opts;
  if (!redis) return memory;
  let redisDown = false;
  return {
    async claim(id, expiresAtMs) {
      // Spent on this node while Redis was away: still spent.
      if (memory.has(id)) return false;
      const ttlMs = Math.max(1, expiresAtMs - opts.now() + CLOCK_SKEW_MARGIN_MS);
      try {
        const set = await redis.set(`${opts.keyPrefix}pow:${id}`, '1', 'PX', ttlMs, 'NX');
        if (redisDown) opts.logger.info('redis answers again: spent proof-of-work challenges are shared between nodes again');
        redisDown = false;
        return set === 'OK';
      } catch (err) {
        // Like the rate limits: no 5xx because of Redis; single use then holds per node.
        if (!redisDown) opts.logger.warn({ err }, 'redis unavailable: spent proof-of-work challenges are remembered on this node only');
        redisDown = true;
        return memory.claim(id, expiresAtMs);
      }
    },
  };
}

function memoryRecord(now: () => number, maxEntries: number): UsedChallenges & { has(id: string): boolean } {
  // id -> the time it may be forgotten. Insertion order is nearly expiry order (every
  // challenge lives as long), so expired entries are dropped from the front.
  const spent = new Map<string, number>();
  const dropExpired = (all: boolean) => {
    const t = now();
    for (const [id, until] of spent) {
      if (until <= t) spent.delete(id);
      else if (!all) break;
    }
  };
  const has = (id: string) => {
    const until = spent.get(id);
    return until !== undefined && until > now();
  };
  return {
    has,
    async claim(id, expiresAtMs) {
      dropExpired(false);
      if (has(id)) return false;
      if (spent.size >= maxEntries) dropExpired(true);
      if (spent.size >= maxEntries) throw new AppError('unavailable', 'Too many addresses are being created right now; try again in a minute.', 60);
      spent.set(id, expiresAtMs + CLOCK_SKEW_MARGIN_MS);
      return true;
    },
  };
}
