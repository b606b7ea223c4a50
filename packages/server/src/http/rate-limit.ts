// Per-IP, per-route rate limits (docs/api.md "Rate limits": RATE_LIMIT_<ROUTE>).
import type { Redis } from 'ioredis';
import type { RateLimitRoute, RateLimitRule } from '../config/index.js';
import { clientKey, createWindowLimiter, type WindowLimiter } from '../limits/window-limiter.js';

export { clientKey };

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

export function createRateLimiter(rules: Record<RateLimitRoute, RateLimitRule>, redis?: Redis, keyPrefix = 'ti:'): RateLimiter {
  const limiters = new Map<RateLimitRoute, WindowLimiter>();
  for (const [route, rule] of Object.entries(rules) as [RateLimitRoute, RateLimitRule][]) {
    const limiter = createWindowLimiter(route, rule, redis, keyPrefix);
    if (limiter) limiters.set(route, limiter);
  }
  return {
    limits: (route) => limiters.has(route),
    async consume(route, ip) {
      const limiter = limiters.get(route);
      if (!limiter) return { allowed: true, retryAfter: 0 };
      const retryAfter = await limiter.consume(clientKey(ip));
      return { allowed: retryAfter === 0, retryAfter };
    },
  };
}
