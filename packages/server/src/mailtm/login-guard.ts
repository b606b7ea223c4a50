// The limits on mail.tm logins beyond RATE_LIMIT_MAILTM_TOKEN's per-client (/64) budget
// (docs/security.md "mail.tm accounts"): failed guesses per account (the address as given,
// whether or not it exists: a locked address that does not exist is answered exactly as
// one that does), and per wider network of the client (IPv6 /48 and /32, IPv4 /24), so
// that guesses spread over many /64s of one site still run out. Each attempt is counted
// before its password is checked and given back if it succeeds, so that concurrent
// guesses cannot overshoot a limit. In Redis when REDIS_URL is set: every node counts alike.
import type { Redis } from 'ioredis';
import { AppError } from '../domain/errors.js';
import { createAttemptLimiter, networksOf, type AttemptLimiter } from '../limits/attempt-limiter.js';
import type { WindowRule } from '../limits/window-limiter.js';

export interface LoginLimits {
  /** MAILTM_LOGIN_FAILURES: per account. */
  perAccount: WindowRule;
  /** MAILTM_LOGIN_FAILURES_NETWORK: per IPv6 /48 or IPv4 /24. */
  perNetwork: WindowRule;
  /** MAILTM_LOGIN_FAILURES_PROVIDER: per IPv6 /32. */
  perProvider: WindowRule;
}

export interface LoginAttempt {
  /** The password was right: the attempt is given back. */
  succeeded(): Promise<void>;
  /** The password was never checked (the check was refused): the attempt is given back. */
  cancel(): Promise<void>;
}

export interface LoginGuard {
  /** Takes an attempt for `account` from `ip`; 429 with Retry-After (nothing taken) when a limit is used up. */
  begin(account: string, ip: string): Promise<LoginAttempt>;
}

export function createLoginGuard(limits: LoginLimits, redis: Redis | undefined, keyPrefix: string): LoginGuard {
  const account = createAttemptLimiter('MAILTM_LOGIN_ACCOUNT', limits.perAccount, redis, keyPrefix);
  const network = createAttemptLimiter('MAILTM_LOGIN_NETWORK', limits.perNetwork, redis, keyPrefix);
  const provider = createAttemptLimiter('MAILTM_LOGIN_PROVIDER', limits.perProvider, redis, keyPrefix);
  return {
    async begin(address, ip) {
      const nets = networksOf(ip);
      const keys = [
        [account, address],
        [network, nets.network],
        [provider, nets.provider],
      ].filter((k): k is [AttemptLimiter, string] => k[0] !== undefined && k[1] !== undefined);
      // Taken together (one round trip to Redis, not three); the ones allowed are given back if another refuses.
      const waits = await Promise.all(keys.map(([limiter, key]) => limiter.take(key)));
      const refund = (which: [AttemptLimiter, string][]) => Promise.all(which.map(([l, k]) => l.refund(k).catch(() => undefined))).then(() => undefined);
      const wait = Math.max(0, ...waits);
      if (wait > 0) {
        await refund(keys.filter((_, i) => waits[i] === 0));
        throw new AppError('rate_limited', 'Too many failed logins; retry later.', wait);
      }
      let settled = false;
      const settle = async () => {
        if (settled) return;
        settled = true;
        await refund(keys);
      };
      return { succeeded: settle, cancel: settle };
    },
  };
}
