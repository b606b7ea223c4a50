// Per-IP, per-route rate limits (seed "Limits"; DESIGN.md "Rate limits").
// A refused request re-arms a block of one window, so a client that keeps
// hammering stays limited; one quiet window later it is served again.
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { RateLimitRoute, RateLimitRule } from '../config/index.js';

export interface RateLimitDecision {
  allowed: boolean;
  /** Seconds until the client may try again (refusals only). */
  retryAfter: number;
}

export interface RateLimiter {
  /** Whether the route has a limit at all (RATE_LIMIT_<ROUTE> not 0). */
  limits(route: RateLimitRoute): boolean;
  consume(route: RateLimitRoute, ip: string): Promise<RateLimitDecision>;
}

/** IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64 prefix. */
export function clientKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

export function createRateLimiter(rules: Record<RateLimitRoute, RateLimitRule>, redis?: Redis, keyPrefix = 'ti:'): RateLimiter {
  const limiters = new Map<RateLimitRoute, { limiter: RateLimiterAbstract; window: number }>();
  for (const [route, rule] of Object.entries(rules) as [RateLimitRoute, RateLimitRule][]) {
    if (rule.max === 0) continue;
    const opts = { points: rule.max, duration: rule.windowSeconds, keyPrefix: `${keyPrefix}rl:${route}` };
    const limiter = redis
      ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(opts) })
      : new RateLimiterMemory(opts);
    limiters.set(route, { limiter, window: rule.windowSeconds });
  }
  return {
    limits: (route) => limiters.has(route),
    async consume(route, ip) {
      const entry = limiters.get(route);
      if (!entry) return { allowed: true, retryAfter: 0 };
      const key = clientKey(ip);
      try {
        await entry.limiter.consume(key);
        return { allowed: true, retryAfter: 0 };
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        await entry.limiter.block(key, entry.window);
        return { allowed: false, retryAfter: entry.window };
      }
    },
  };
}
