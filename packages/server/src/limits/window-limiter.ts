// Fixed-window counters per client (rate-limiter-flexible: in memory, or in Redis
// shared by every node), used by the HTTP routes and the SMTP receiver alike.
// A refusal re-arms a block of one window, so a client that keeps hammering stays
// limited; one quiet window later it is served again.
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';

export interface WindowRule {
  /** Units allowed per window; 0 disables the limit. */
  max: number;
  windowSeconds: number;
}

export interface WindowLimiter {
  /** Takes `points` units for `key`; resolves to 0 when allowed, else the seconds to wait. */
  consume(key: string, points?: number): Promise<number>;
  /** Whether `key` has used all of its window now (the next unit would be refused), without taking anything: 0, or the seconds to wait. */
  peek(key: string): Promise<number>;
}

export interface WindowOptions {
  /**
   * false: a refusal does not re-arm a block, and the wait is what is left of the window. For a
   * budget over a long window (a day), which a retrying sender must find again when it resets.
   */
  rearm?: boolean;
}

/**
 * clientKey's answers for the addresses seen lately: each SMTP transaction asks several
 * times, and each parse of an address builds a dozen objects (about 7% of the garbage a
 * mail leaves on the server's thread). Emptied when full, so it stays bounded whatever
 * addresses arrive.
 */
const KEY_CACHE_MAX = 4096;
const clientKeys = new Map<string, string>();

/** IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64 prefix (one subscriber's usual allocation). */
export function clientKey(ip: string): string {
  let key = clientKeys.get(ip);
  if (key === undefined) {
    if (clientKeys.size >= KEY_CACHE_MAX) clientKeys.clear();
    key = keyOf(ip);
    clientKeys.set(ip, key);
  }
  return key;
}

function keyOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

/** A limiter for one rule, or undefined when the rule disables it (max 0). */
export function createWindowLimiter(name: string, rule: WindowRule, redis: Redis | undefined, keyPrefix: string, options: WindowOptions = {}): WindowLimiter | undefined {
  if (rule.max === 0) return undefined;
  const opts = { points: rule.max, duration: rule.windowSeconds, keyPrefix: `${keyPrefix}rl:${name}` };
  const limiter = redis
    ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(opts) })
    : new RateLimiterMemory(opts);
  return {
    async consume(key, points = 1) {
      try {
        await limiter.consume(key, points);
        return 0;
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        if (options.rearm === false) return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
        await limiter.block(key, rule.windowSeconds);
        return rule.windowSeconds;
      }
    },
    async peek(key) {
      const res = await limiter.get(key);
      return res && res.consumedPoints >= rule.max ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : 0;
    },
  };
}
