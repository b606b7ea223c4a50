// Lock-out after repeated failures (SMTP AUTH and POST /api/sandbox/token guesses): a key
// (a client's address or prefix, a login name) with `max` failed attempts within a window
// is locked for one whole window. Each attempt is counted before its check and given back
// when it succeeds, so that guesses sent at once cannot get past the limit while the slow
// hashes of the first are still running. Counted in memory, or in Redis shared by every
// node (REDIS_URL; in memory on this node while Redis does not answer), as window-limiter.ts.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { WindowRule } from './window-limiter.js';

export interface FailureLock {
  /** Counts one attempt of `key`; resolves to the seconds it is locked out for (0: go on and check it). */
  attempt(key: string): Promise<number>;
  /** The attempt succeeded: it is given back. */
  succeeded(key: string): Promise<void>;
}

/** A lock for one rule; with max 0 nothing is ever locked. */
export function createFailureLock(name: string, rule: WindowRule, redis: Redis | undefined, keyPrefix: string): FailureLock {
  if (rule.max === 0) return { attempt: async () => 0, succeeded: async () => undefined };
  // Past `max` a key is blocked for a whole window from the refused attempt on.
  const opts = { points: rule.max, duration: rule.windowSeconds, blockDuration: rule.windowSeconds, keyPrefix: `${keyPrefix}lock:${name}` };
  const limiter = redis
    ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(opts) })
    : new RateLimiterMemory(opts);
  return {
    async attempt(key) {
      try {
        await limiter.consume(key);
        return 0;
      } catch (res) {
        if (res instanceof RateLimiterRes) return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
        throw res;
      }
    },
    async succeeded(key) {
      await limiter.reward(key, 1);
    },
  };
}
