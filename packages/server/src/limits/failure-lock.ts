// Lock-out after repeated failures (SMTP AUTH and POST /api/sandbox/token guesses): a key
// (a client's address or prefix, a login name) that fails `max` times within a window is
// locked for one whole window. Counted in memory, or in Redis shared by every node
// (REDIS_URL; in memory on this node while Redis does not answer), as window-limiter.ts.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { WindowRule } from './window-limiter.js';

export interface FailureLock {
  /** Seconds `key` stays locked out; 0 when it is not. */
  lockedFor(key: string): Promise<number>;
  /** Counts one failure of `key`; resolves to the seconds it is now locked for (0: not yet). */
  fail(key: string): Promise<number>;
  /** Forgets the failures of `key` (a login that succeeded). */
  reset(key: string): Promise<void>;
}

/** A lock for one rule; with max 0 nothing is ever locked. */
export function createFailureLock(name: string, rule: WindowRule, redis: Redis | undefined, keyPrefix: string): FailureLock {
  if (rule.max === 0) return { lockedFor: async () => 0, fail: async () => 0, reset: async () => undefined };
  const opts = { points: rule.max, duration: rule.windowSeconds, blockDuration: rule.windowSeconds, keyPrefix: `${keyPrefix}lock:${name}` };
  const limiter = redis
    ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(opts) })
    : new RateLimiterMemory(opts);
  const seconds = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return {
    async lockedFor(key) {
      const res = await limiter.get(key);
      return res && res.consumedPoints >= rule.max ? seconds(res) : 0;
    },
    async fail(key) {
      try {
        const res = await limiter.consume(key);
        if (res.consumedPoints < rule.max) return 0;
        // The failure that reaches the limit locks for a whole window from now.
        await limiter.block(key, rule.windowSeconds);
        return rule.windowSeconds;
      } catch (res) {
        if (res instanceof RateLimiterRes) return seconds(res);
        throw res;
      }
    },
    async reset(key) {
      await limiter.delete(key);
    },
  };
}
