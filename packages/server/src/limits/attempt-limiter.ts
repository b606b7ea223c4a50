// Attempts per key in a fixed window, taken before the attempt and given back when it
// turns out not to count (a right password, a check that never ran), so that what stays
// counted is the failures alone, exactly, however many run at once
// (rate-limiter-flexible: in memory, or in Redis shared by every node). Used by the
// mail.tm logins (mailtm/login-guard.ts): failed guesses per account and per network.
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { WindowRule } from './window-limiter.js';

export interface AttemptLimiter {
  /** Takes one attempt for `key`: 0 when allowed, else the seconds until its window ends (nothing is taken then). */
  take(key: string): Promise<number>;
  /** Gives back an attempt taken for `key`. */
  refund(key: string): Promise<void>;
}

/** A limiter for one rule, or undefined when the rule disables it (max 0). */
export function createAttemptLimiter(name: string, rule: WindowRule, redis: Redis | undefined, keyPrefix: string): AttemptLimiter | undefined {
  if (rule.max === 0) return undefined;
  const opts = { points: rule.max, duration: rule.windowSeconds, keyPrefix: `${keyPrefix}al:${name}` };
  const limiter = redis
    ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(opts) })
    : new RateLimiterMemory(opts);
  return {
    async take(key) {
      try {
        await limiter.consume(key);
        return 0;
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        // A refused attempt is not one more: the count stays at the limit.
        await limiter.reward(key, 1).catch(() => undefined);
        return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      }
    },
    async refund(key) {
      await limiter.reward(key, 1);
    },
  };
}

/**
 * The wider networks an address belongs to, for limits on repeat offenders: an IPv4
 * address's /24; an IPv6 address's /48 (a site's usual allocation) and /32 (a
 * provider's). IPv4-mapped IPv6 counts as IPv4. Undefined fields: no such network.
 */
export function networksOf(ip: string): { network: string; provider: string | undefined } {
  if (!ipaddr.isValid(ip)) return { network: ip, provider: undefined };
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return { network: `${addr.toByteArray().slice(0, 3).join('.')}.0/24`, provider: undefined };
  const parts = (addr as ipaddr.IPv6).parts.map((p) => p.toString(16));
  return { network: `${parts.slice(0, 3).join(':')}::/48`, provider: `${parts.slice(0, 2).join(':')}::/32` };
}
